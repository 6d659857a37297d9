#pragma once
// One SM's constant cache as the indexed constant loads (LDC) see it: `sets` x `ways` lines, a line in set
// line mod sets, least recently used out. A warp's load looks up each distinct address it reads; the H100 probe
// (validate/results/h100-2026-11-24c) shows every lookup costing the same 2 cycles and a request whose line is absent
// costing a replay, which is what the timing model charges for misses counted here.
#include <cstdint>
#include <vector>

namespace memhier {

class ConstantCache {
 public:
  ConstantCache() = default;
  // `sets` a power of two; ways >= 1.
  ConstantCache(std::uint32_t sets, std::uint32_t ways)
      : m_sets(sets), m_ways(ways), m_tags(std::size_t{sets} * ways, kEmpty), m_stamps(std::size_t{sets} * ways, 0) {}

  [[nodiscard]] bool enabled() const { return m_ways != 0; }

  // Looks `line` up; true on a hit. A miss puts the line in its set in place of the least recently used one.
  bool access(std::uint64_t line) {
    const std::size_t base = static_cast<std::size_t>(line & (m_sets - 1)) * m_ways;
    ++m_clock;
    std::size_t victim = base;
    for (std::size_t w = base; w < base + m_ways; ++w) {
      if (m_tags[w] == line) {
        m_stamps[w] = m_clock;
        return true;
      }
      if (m_stamps[w] < m_stamps[victim]) victim = w;
    }
    m_tags[victim] = line;
    m_stamps[victim] = m_clock;
    return false;
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  std::uint64_t m_sets = 1;
  std::uint32_t m_ways = 0;
  std::vector<std::uint64_t> m_tags;
  std::vector<std::uint64_t> m_stamps;  // 0: never used (empty ways go first)
  std::uint64_t m_clock = 0;
};

}  // namespace memhier
