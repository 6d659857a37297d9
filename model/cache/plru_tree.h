#pragma once
// Tree pseudo-LRU over the ways of one set: a binary tree of bits, node n (from 1, the root) with children 2n (the
// first half of its ways) and 2n + 1, so way w is the leaf ways + w; bit n set when node n's older half is its second.
// An access points every bit on its way's path to the other half; the victim is the way the bits lead to. Both walks
// are branch-free: the bits a touch sets and clears are tabled per way (the host cannot predict which half an access
// falls in), and the victim's walk adds each bit to the node number. The bits of a set are the caller's (a word a set).
#include <array>
#include <bit>
#include <cstdint>
#include <stdexcept>

namespace memhier {

class PlruTree {
 public:
  PlruTree() = default;
  // `ways`: a power of two, at most 32 (the bits fit a 32-bit word). Throws std::invalid_argument otherwise.
  explicit PlruTree(std::uint32_t ways) : m_ways(ways) {
    if (!std::has_single_bit(ways) || ways > 32)
      throw std::invalid_argument("tree PLRU needs a power-of-two number of ways, at most 32");
    for (std::uint32_t w = 0; w < ways; ++w)
      for (std::uint32_t child = ways + w; child > 1; child /= 2) {
        m_path[w] |= 1U << (child / 2);
        if (child % 2 == 0) m_older[w] |= 1U << (child / 2);
      }
  }
  // The bits after an access to `way`.
  [[nodiscard]] std::uint32_t touched(std::uint32_t bits, std::uint32_t way) const {
    return (bits & ~m_path[way]) | m_older[way];
  }
  [[nodiscard]] std::uint32_t victim(std::uint32_t bits) const {
    std::uint32_t node = 1;
    if (m_ways == 16) {  // every shipped arch's L1: the four steps unrolled
      node = 2 * node + (bits >> node & 1U);
      node = 2 * node + (bits >> node & 1U);
      node = 2 * node + (bits >> node & 1U);
      node = 2 * node + (bits >> node & 1U);
      return node - 16;
    }
    while (node < m_ways) node = 2 * node + (bits >> node & 1U);
    return node - m_ways;
  }

 private:
  std::uint32_t m_ways = 0;
  // Per way: the bits on its path, those an access to it sets (in place, not behind a pointer: read on every access).
  std::array<std::uint32_t, 32> m_path{}, m_older{};
};

}  // namespace memhier
