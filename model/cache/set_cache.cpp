#include "set_cache.h"

#include <algorithm>
#include <numeric>

namespace memhier {

std::uint32_t SetCache::insert(std::uint64_t line, std::uint32_t set, L2Property property, Evicted& out) {
  out = {};
  const std::uint32_t base = set * m_g.ways;
  m_touched[set >> 6U] |= std::uint64_t{1} << (set & 63U);
  const bool persist = property == L2Property::persisting && m_persisting_ways > 0;
  // The victim is the way of the lowest key (the first of them on ties). A persisting line whose set-aside is full
  // replaces the oldest persisting line instead: flipping the top bit ranks persisting lines below all others (a
  // full set-aside holds at least one).
  const std::uint32_t flip = persist && m_persist[set] >= m_persisting_ways ? kPersistBit : 0U;
  const std::uint32_t* keys = &m_keys[base];
  const std::uint32_t slot = base + (m_g.ways == kWideWays ? lowest_key<kWideWays>(keys, flip, kWideWays)
                                                           : lowest_key<0>(keys, flip, m_g.ways));
  if (m_tags[slot] != kNoLine) {
    const State& old = m_state[slot];
    out = {m_tags[slot], old.dirty, true, old.partial, old.batched != 0};
    if (persisting(slot)) --m_persist[set];
  }
  m_tags[slot] = line;
  m_state[slot] = {};  // words(slot) mean nothing while no sector is partly written
  if (persist) ++m_persist[set];
  // Streaming lines enter as the least recently used, so they go first.
  m_keys[slot] = property == L2Property::streaming ? kOldKey : (persist ? kPersistBit : 0U) | next_stamp();
  return slot;
}

void SetCache::renumber() {
  std::vector<std::uint32_t> order(m_g.ways);
  for (std::uint32_t base = 0; base < m_keys.size(); base += m_g.ways) {
    std::iota(order.begin(), order.end(), base);
    auto stamp = [&](std::uint32_t w) { return m_keys[w] & ~kPersistBit; };
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return stamp(a) < stamp(b); });
    std::uint32_t rank = kOldKey;
    for (std::uint32_t w : order)  // free and least-recent ways (keys 0 and 1) stay as they are
      if (stamp(w) > kOldKey) m_keys[w] = (m_keys[w] & kPersistBit) | ++rank;
  }
  m_clock = kOldKey + m_g.ways;
}

void SetCache::demote_persisting() {
  for (std::uint32_t& k : m_keys)
    if ((k & kPersistBit) != 0) k = kOldKey;  // below every normal line
  std::fill(m_persist.begin(), m_persist.end(), 0);
}

}  // namespace memhier
