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

class SetCache {
 public:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFU;
  using Evicted = SectoredCache::Evicted;

  // `first_stamp`: where the LRU clock starts (tests start it just below the wrap).
  explicit SetCache(const CacheGeometry& g, std::uint32_t first_stamp = 0)
      : m_g(g),
        m_set_bits(static_cast<unsigned>(std::bit_width(g.sets - 1))),
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
  // The set index folds the higher line bits in (XOR), as GPU caches hash their index: with the plain low bits, a
  // column walk (lines a power-of-two stride apart, as a naive transpose's stores) would crowd into a few sets and
  // thrash them, which the H100 does not do (transpose_naive writes its output to DRAM once: ncu dram__bytes_write).
  [[nodiscard]] std::uint32_t set_of(std::uint64_t line) const {
    return static_cast<std::uint32_t>((line ^ (line >> m_set_bits) ^ (line >> (2 * m_set_bits))) % m_g.sets);
  }
  std::uint32_t next_stamp() {
    if (m_clock == 0xFFFFFFFFU) renumber();
    return ++m_clock;
  }
  // Before the stamp clock wraps: each set's stamps become their ranks (order kept), and the clock restarts above them.
  void renumber();

  CacheGeometry m_g;
  unsigned m_set_bits;  // bits of a set index
  std::vector<Way> m_ways;
  std::vector<std::uint16_t> m_persist;  // persisting lines per set
  std::uint32_t m_persisting_ways = 0;
  std::uint32_t m_clock;
};

}  // namespace memhier
