#pragma once
// A sectored set-associative cache for modest associativity (the L2 slices): each set's ways sit together in memory
// (16 bytes a way), so a lookup reads one set and nothing else. LRU by access stamps; persisting lines may hold at most
// `persisting_ways` of a set, other lines every way no persisting line holds; streaming lines enter as least recent.
#include <bit>
#include <cstdint>
#include <vector>

#include "memhier/trace.h"
#include "sectored_cache.h"

namespace memhier {

// Where the L2 puts a line among all its sets (every slice's sets, `total` of them): its place within its run of
// `total` consecutive lines, turned by an offset hashed from the run's number. A run thus covers every set of every
// slice once, as the H100 spreads a contiguous buffer: a 16 MiB persisting buffer keeps most of its hits in 5
// set-aside ways of 3.125 MiB (5.12 lines a set) and none in 4 (validate/results/h100-2026-11-22f/probe). Lines a
// power of two apart (a column walk) land in other sets run by run instead of crowding a few, which the H100 does not
// do either (transpose_naive writes its output to DRAM once: ncu dram__bytes_write). The slice is the index modulo
// the slices, the set within the slice the quotient.
inline std::uint64_t l2_place(std::uint64_t line, std::uint64_t total) {
  const std::uint64_t run = line / total;
  // The run's offset: a multiplicative hash of its number scaled to [0, total) by the high half of a 64 x 64-bit
  // product (no second division: this runs for every L2 request and lookup).
  __extension__ using u128 = unsigned __int128;
  const std::uint64_t hash = (run + 1) * 0x9E3779B97F4A7C15ULL;
  const auto offset = static_cast<std::uint64_t>((static_cast<u128>(hash) * total) >> 64U);
  const std::uint64_t place = line - run * total + offset;
  return place >= total ? place - total : place;
}

class SetCache {
 public:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFU;
  using Evicted = SectoredCache::Evicted;

  // `slices`: caches that share the address space, this one holding the lines l2_place() puts in it (their sets
  // are numbered together: l2_place(line, slices x sets) / slices is a line's set here). `first_stamp`: where the LRU
  // clock starts (tests start it just below the wrap).
  explicit SetCache(const CacheGeometry& g, std::uint32_t slices = 1, std::uint32_t first_stamp = 0)
      : m_g(g),
        m_slices(slices),
        m_ways(std::size_t{g.sets} * g.ways),
        m_persist(g.sets, 0),
        m_clock(first_stamp) {}

  [[nodiscard]] std::uint32_t find(std::uint64_t line) const {
    const std::uint32_t base = set_of(line) * m_g.ways;
    for (std::uint32_t w = 0; w < m_g.ways; ++w) {
      const Way& x = m_ways[base + w];
      if (x.kind != kFree && x.tag == line) return base + w;
    }
    return kNone;
  }
  void touch(std::uint32_t slot) { m_ways[slot].stamp = next_stamp(); }
  std::uint32_t insert(std::uint64_t line, L2Property property, Evicted& out);
  [[nodiscard]] std::uint8_t& valid(std::uint32_t slot) { return m_ways[slot].valid; }
  [[nodiscard]] std::uint8_t& dirty(std::uint32_t slot) { return m_ways[slot].dirty; }
  [[nodiscard]] bool persisting(std::uint32_t slot) const { return m_ways[slot].kind == kPersist; }
  void set_persisting_ways(std::uint32_t ways) { m_persisting_ways = ways; }
  void demote_persisting();
  // Drops the slot's line without writing it back (a stale copy: the caller knows it is clean).
  void invalidate(std::uint32_t slot) {
    Way& w = m_ways[slot];
    if (w.kind == kPersist) --m_persist[slot / m_g.ways];
    w = Way{};
  }
  template <typename F>
  void flush(F&& on_dirty) {
    for (Way& w : m_ways) {
      if (w.kind != kFree && w.dirty != 0) on_dirty(w.tag, w.dirty);
      w = Way{};
    }
    std::fill(m_persist.begin(), m_persist.end(), 0);
  }

 private:
  enum Kind : std::uint8_t { kFree = 0, kNormal = 1, kPersist = 2 };
  struct Way {
    std::uint64_t tag = 0;
    std::uint32_t stamp = 0;
    std::uint8_t valid = 0, dirty = 0;
    Kind kind = kFree;
  };
  [[nodiscard]] std::uint32_t set_of(std::uint64_t line) const {
    return static_cast<std::uint32_t>(l2_place(line, std::uint64_t{m_slices} * m_g.sets)) / m_slices;  // < 2^32
  }
  std::uint32_t next_stamp() {
    if (m_clock == 0xFFFFFFFFU) renumber();
    return ++m_clock;
  }
  // Before the stamp clock wraps: each set's stamps become their ranks (order kept), and the clock restarts above them.
  void renumber();

  CacheGeometry m_g;
  std::uint32_t m_slices;
  std::vector<Way> m_ways;
  std::vector<std::uint16_t> m_persist;  // persisting lines per set
  std::uint32_t m_persisting_ways = 0;
  std::uint32_t m_clock;
};

}  // namespace memhier
