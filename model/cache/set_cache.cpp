#include "set_cache.h"

#include <algorithm>

namespace memhier {

std::uint32_t SetCache::oldest(std::uint32_t base, Kind kind) const {
  std::uint32_t best = kNone;
  for (std::uint32_t w = 0; w < m_g.ways; ++w) {
    const Way& x = m_ways[base + w];
    if (x.kind == kind && (best == kNone || x.stamp < m_ways[best].stamp)) best = base + w;
  }
  return best;
}

std::uint32_t SetCache::insert(std::uint64_t line, L2Property property, Evicted& out) {
  out = {};
  const std::uint32_t set = set_of(line);
  const std::uint32_t base = set * m_g.ways;
  const bool persist = property == L2Property::persisting && m_persisting_ways > 0;
  std::uint32_t slot = kNone;
  if (persist && m_persist[set] >= m_persisting_ways) slot = oldest(base, kPersist);  // the set-aside is full
  if (slot == kNone) slot = oldest(base, kFree);
  if (slot == kNone) slot = oldest(base, kNormal);
  if (slot == kNone) slot = oldest(base, kPersist);
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
  w.stamp = property == L2Property::streaming ? 0 : ++m_clock;
  return slot;
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
