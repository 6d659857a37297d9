#include "set_cache.h"

#include <algorithm>
#include <numeric>

namespace memhier {

std::uint32_t SetCache::insert(std::uint64_t line, L2Property property, Evicted& out) {
  out = {};
  const std::uint32_t set = set_of(line);
  const std::uint32_t base = set * m_g.ways;
  const bool persist = property == L2Property::persisting && m_persisting_ways > 0;
  // The victim in one branch-free pass: free ways rank first, then normal lines, then persisting ones, each kind by
  // age (the first way of the lowest rank on ties). A persisting line whose set-aside is full replaces the oldest
  // persisting line instead.
  const bool full = persist && m_persist[set] >= m_persisting_ways;
  // A free way has kind and stamp 0 (Way{}), so kind << 32 | stamp ranks it first without a test.
  const std::uint64_t other = full ? ~0ULL : 0;  // ranks every non-persisting way last when the set-aside is full
  std::uint64_t best = ~0ULL;
  std::uint32_t slot = base;
  for (std::uint32_t w = base; w < base + m_g.ways; ++w) {
    const Way& x = m_ways[w];
    const std::uint64_t rank = (std::uint64_t{x.kind} << 32U | x.stamp) | (x.kind == kPersist ? 0 : other);
    const bool better = rank < best;
    best = better ? rank : best;
    slot = better ? w : slot;
  }
  Way& w = m_ways[slot];
  if (w.kind != kFree) {
    out = {w.tag, w.dirty, true};
    if (w.kind == kPersist) --m_persist[set];
  }
  w.tag = line;
  w.valid = w.dirty = 0;
  w.kind = persist ? kPersist : kNormal;
  if (persist) ++m_persist[set];
  // Streaming lines enter as the least recently used, so they go first.
  w.stamp = property == L2Property::streaming ? 0 : next_stamp();
  return slot;
}

void SetCache::renumber() {
  std::vector<std::uint32_t> order(m_g.ways);
  for (std::uint32_t base = 0; base < m_ways.size(); base += m_g.ways) {
    std::iota(order.begin(), order.end(), base);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return m_ways[a].stamp < m_ways[b].stamp; });
    std::uint32_t rank = 0;
    for (std::uint32_t w : order)
      if (m_ways[w].stamp != 0) m_ways[w].stamp = ++rank;  // 0 (streaming, demoted, free) stays least recent
  }
  m_clock = m_g.ways;
}

void SetCache::demote_persisting() {
  for (Way& w : m_ways)
    if (w.kind == kPersist) {
      w.kind = kNormal;
      w.stamp = 0;  // below every normal line
    }
  std::fill(m_persist.begin(), m_persist.end(), 0);
}

}  // namespace memhier
