#include "set_cache.h"

#include <algorithm>
#include <numeric>

namespace memhier {

void SetCache::renumber() {
  std::vector<std::uint32_t> order(m_g.ways);
  for (std::uint32_t base = 0; base < m_g.sets * m_g.ways; base += m_g.ways) {
    std::iota(order.begin(), order.end(), base);
    auto stamp = [&](std::uint32_t w) { return key(w) & ~kPersistBit; };
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return stamp(a) < stamp(b); });
    std::uint32_t rank = kOldKey;
    for (std::uint32_t w : order)  // free and least-recent ways (keys 0 and 1) stay as they are
      if (stamp(w) > kOldKey) key(w) = (key(w) & kPersistBit) | ++rank;
  }
  m_clock = kOldKey + m_g.ways;
}

void SetCache::demote_persisting() {
  for (Block& b : m_blocks)
    for (std::uint32_t& k : b.keys)
      if ((k & kPersistBit) != 0) k = kOldKey;  // below every normal line
  std::fill(m_persist.begin(), m_persist.end(), 0);
}

}  // namespace memhier
