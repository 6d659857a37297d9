#pragma once
// A sectored set-associative cache with LRU per set, used for each SM's L1 (the L2 slices use SetCache, set_cache.h).
// Lines are found through one open-addressing table (line address -> slot), so a lookup costs the same at 448 ways (an
// L1 whose capacity is split over 4 sets) as at 16. Each set keeps two LRU lists: persisting lines and the rest;
// persisting lines may hold at most `persisting_ways` of a set, other lines may use every way no persisting line holds.
#include <cstdint>
#include <vector>

#include "memhier/trace.h"

namespace memhier {

struct CacheGeometry {
  std::uint64_t line_bytes = 128;
  std::uint64_t sector_bytes = 32;
  std::uint32_t sets = 1;
  std::uint32_t ways = 1;
  friend bool operator==(const CacheGeometry&, const CacheGeometry&) = default;
};

class SectoredCache {
 public:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFU;

  explicit SectoredCache(const CacheGeometry& g);

  struct Evicted {
    std::uint64_t line = 0;       // line number (address / line bytes)
    std::uint32_t dirty = 0;      // dirty sector mask
    bool valid = false;
  };

  // Slot holding `line`, or kNone.
  [[nodiscard]] std::uint32_t find(std::uint64_t line) const;
  // Asks the host CPU to fetch the table entry `line` hashes to (a hint: a later find() then finds it cached).
  void prefetch(std::uint64_t line) const { __builtin_prefetch(&m_table[bucket(line)]); }
  // Marks the slot most recently used.
  void touch(std::uint32_t slot);
  // Allocates a slot for `line` (absent) with the given property; fills `out` with the victim if one was evicted.
  std::uint32_t insert(std::uint64_t line, L2Property property, Evicted& out);
  // find() then touch() if present, else insert(), with one probe of the table.
  std::uint32_t access(std::uint64_t line, L2Property property, Evicted& out);
  [[nodiscard]] std::uint32_t& valid(std::uint32_t slot) { return m_slots[slot].valid; }
  [[nodiscard]] std::uint32_t& dirty(std::uint32_t slot) { return m_slots[slot].dirty; }
  [[nodiscard]] bool persisting(std::uint32_t slot) const { return m_slots[slot].list == kPersist; }
  // Persisting lines may fill at most this many ways of a set (0: none).
  void set_persisting_ways(std::uint32_t ways) { m_persisting_ways = ways; }
  // cudaCtxResetPersistingL2Cache: every persisting line becomes normal.
  void demote_persisting();
  // Empties the cache in time proportional to the slots used since the last reset (an L1 reused by the next launch
  // of a short kernel costs what the kernel put in it, not its capacity).
  void reset();
  [[nodiscard]] const CacheGeometry& geometry() const { return m_g; }
  // Every shipped L1 has a power-of-two set count (4): then a mask instead of a 64-bit division on every access.
  [[nodiscard]] std::uint32_t set_of(std::uint64_t line) const {
    return static_cast<std::uint32_t>(m_pow2_sets ? line & (m_g.sets - 1U) : line % m_g.sets);
  }

 private:
  enum List : std::uint8_t { kNormal = 0, kPersist = 1, kFree = 2 };
  struct Slot {
    std::uint64_t line = 0;
    std::uint32_t prev = kNone, next = kNone;
    std::uint32_t valid = 0, dirty = 0;
    std::uint32_t set = 0;  // slot / ways, kept (unlink and touch would divide on every access)
    List list = kFree;
  };
  struct SetState {
    std::uint32_t head[2] = {kNone, kNone};  // most recently used
    std::uint32_t tail[2] = {kNone, kNone};  // least recently used
    std::uint32_t count[2] = {0, 0};
    std::uint32_t free = kNone;  // free slots chained through next
  };

  void init();  // every slot free, the table empty
  void unlink(std::uint32_t slot);
  void push_front(std::uint32_t set, std::uint32_t slot, List list);
  void push_back(std::uint32_t set, std::uint32_t slot, List list);
  void evict(std::uint32_t slot, Evicted& out);
  std::uint32_t insert_at(std::size_t position, std::uint64_t line, L2Property property, Evicted& out);
  void table_erase(std::uint64_t line);
  // Runs of 8 consecutive lines share one hashed place, 8 entries side by side (two host cache lines): a coalesced
  // warp's lines, and a streaming kernel's next ones, are then a host cache line apart, not anywhere in the table.
  [[nodiscard]] std::size_t bucket(std::uint64_t line) const {
    return static_cast<std::size_t>(((line >> 3U) * 0x9E3779B97F4A7C15ULL) >> (m_shift + 3U)) << 3U | (line & 7U);
  }

  CacheGeometry m_g;
  bool m_pow2_sets = false;
  std::vector<Slot> m_slots;
  std::vector<SetState> m_sets;
  struct Entry {
    std::uint64_t key = 0;  // line + 1; 0 = empty
    std::uint32_t slot = kNone;
    std::uint32_t home = 0;  // bucket(line): a deletion's shifts read it instead of hashing each entry again
  };
  std::vector<Entry> m_table;  // key and slot side by side: a probe reads one host cache line
  unsigned m_shift = 64;
  std::uint32_t m_persisting_ways = 0;
  // Slots taken off the free chains since the last reset. init() chains each set's slots from its last way down
  // (slot t links to t - 1) and only reset() puts slots back, so the taken ones are the top of their sets' chains.
  std::vector<std::uint32_t> m_taken;
  std::vector<std::size_t> m_scratch;  // reset(): table positions to clear
};

}  // namespace memhier
