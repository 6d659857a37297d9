#pragma once
// A small set-associative cache of lines with least-recently-used replacement and nothing else (no sectors, no
// dirty data, no residency control): the constant cache (H100: 8 sets of 4 ways). Each set keeps its lines in
// recency order, most recent first. LRU is fully determined by the order of accesses, so it hits and misses exactly
// as SetCache does for normal lines (tests/test_cache.cpp), which cost constant_divergent 114 host instructions a
// lookup in its generic-width loops.
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace memhier {

class LruSets {
 public:
  // `sets`: a power of two (line mod sets picks a line's set); `ways` lines a set.
  LruSets(std::uint32_t sets, std::uint32_t ways)
      : m_ways(ways), m_set_mask(sets == 0 ? 0 : sets - 1), m_lines(std::size_t{sets} * ways, kEmpty) {}
  // Looks `line` up; true on a hit. Either way the line becomes its set's most recent, an absent one in place of the
  // least recent.
  bool access(std::uint64_t line) {
    std::uint64_t* set = &m_lines[static_cast<std::size_t>(line & m_set_mask) * m_ways];
    // The shipped archs' widths, unrolled: the line goes first and the lines before its old place (or every line but
    // the least recent, on a miss) one place down, each way chosen without a branch. Where a lookup hits is the data's,
    // and the loop below, stopping there, cost constant_divergent a mispredicted branch a lookup (65 of its 76
    // million, cachegrind's branch model).
    switch (m_ways) {
      case 2:
        return access_ways<2>(set, line);
      case 4:
        return access_ways<4>(set, line);
      case 8:
        return access_ways<8>(set, line);
      default:
        break;
    }
    // The line goes in first and pushes each line down one place until it meets its own old place (a hit) or the
    // least recent line falls off the end (a miss). (A shift by std::copy_backward became a memmove call a lookup.)
    std::uint64_t carry = line;
    for (std::uint32_t w = 0; w < m_ways; ++w) {
      std::swap(carry, set[w]);
      if (carry == line) return true;
    }
    return false;
  }

 private:
  template <std::uint32_t kWays>
  static bool access_ways(std::uint64_t* set, std::uint64_t line) {
    std::array<std::uint64_t, kWays> old;
    std::uint32_t at = kWays;  // the line's place, kWays if absent (a line is in its set at most once)
    for (std::uint32_t w = 0; w < kWays; ++w) {
      old[w] = set[w];
      at = old[w] == line ? w : at;
    }
    const std::uint32_t freed = at == kWays ? kWays - 1 : at;
    for (std::uint32_t w = 1; w < kWays; ++w) set[w] = w <= freed ? old[w - 1] : old[w];
    set[0] = line;
    return at != kWays;
  }
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};  // no line (a line number is an address over its size)
  std::uint32_t m_ways;
  std::uint64_t m_set_mask;
  std::vector<std::uint64_t> m_lines;  // set by set, most recent first
};

}  // namespace memhier
