#pragma once
// Sorting a warp's few addresses and dropping repeats: the coalescer's sectors of a gather, shared-memory words of a
// phase, constant addresses. std::sort spends most of its time on 32 random sectors in compares the host cannot
// predict; here values already in order, in order but for one wrap, or repeating a period in order skip sorting (a
// scan that random values leave at their first descent), 17 to 32 others go through a sorting network and the rest
// have each value's place counted as the number of values below it, without a branch (the host compares two values
// an instruction), equal values taking the same place, which removes the repeats. memhier_bench_sim's BM_SortUnique
// against BM_StdSortUnique (std::sort, std::unique) on this project's VM, CPU time, 2026-11-25: 32 random sectors 104
// against 460 ns, 8 in 35 against 59, 64 in 629 against 1131.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <utility>

namespace memhier {

namespace sort_detail {

// Batcher's odd-even merge sort of 32 values: 191 compare-exchanges in a fixed order (no branch on the data), each a
// min and a max. For 17 to 32 values (a gather's sectors) it is about twice as fast as counting each value's place:
// memhier_bench_sim's BM_SortUnique/32 on this project's VM, 190 -> 108 ns (2026-11-25).
inline constexpr std::size_t kNetwork = 32;
struct Comparators {
  std::array<std::uint8_t, std::size_t{2} * 191> pair{};
  std::size_t count = 0;
};
constexpr Comparators batcher() {
  Comparators c;
  for (std::size_t p = 1; p < kNetwork; p <<= 1U)
    for (std::size_t k = p; k >= 1; k >>= 1U)
      for (std::size_t j = k % p; j + k < kNetwork; j += 2 * k)
        for (std::size_t i = 0; i < k && i + j + k < kNetwork; ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p)) {
            c.pair[2 * c.count] = static_cast<std::uint8_t>(i + j);
            c.pair[2 * c.count + 1] = static_cast<std::uint8_t>(i + j + k);
            ++c.count;
          }
  return c;
}
inline constexpr Comparators kComparators = batcher();
static_assert(kComparators.count == 191);

template <std::size_t... I>
inline void network(std::array<std::uint64_t, kNetwork>& v, std::index_sequence<I...> /*comparators*/) {
  (
      [&] {
        constexpr std::size_t kA = kComparators.pair[2 * I], kB = kComparators.pair[2 * I + 1];
        const std::uint64_t x = v[kA], y = v[kB];
        v[kA] = x < y ? x : y;
        v[kB] = x < y ? y : x;
      }(),
      ...);
}

}  // namespace sort_detail

// Sorts v[0, n) ascending without repeats, in place; returns how many values remain.
inline std::size_t sort_unique(std::uint64_t* v, std::size_t n) {
  // Already ascending (lanes that climb: a constant load's lanes across a table, a shared-memory row), or so but for
  // one wrap (an index modulo the table's length: constant_divergent's (lane * 32 + k) % 1024): only the repeats go,
  // after a rotation. Random values leave this at their first descent, a lane or two in.
  std::size_t rise = 1;
  while (rise < n && v[rise - 1] <= v[rise]) ++rise;
  if (rise < n && v[rise] == v[0]) {
    // Repeating from the first descent on (an index modulo `rise` lanes: constant_distinct's lane % 8): the first
    // period, ascending, holds every value.
    bool periodic = true;
    for (std::size_t i = rise; i < n; ++i) periodic &= v[i] == v[i - rise];
    if (periodic) n = rise;
  }
  if (rise < n && v[n - 1] <= v[0]) {
    std::size_t second = rise + 1;
    while (second < n && v[second - 1] <= v[second]) ++second;
    if (second == n) {
      std::rotate(v, v + rise, v + n);
      rise = n;
    }
  }
  if (rise >= n) {
    std::size_t out = n == 0 ? 0 : 1;
    for (std::size_t i = 1; i < n; ++i) {
      v[out] = v[i];
      out += v[i] != v[out - 1] ? 1 : 0;
    }
    return out;
  }
  if (n > 16 && n <= sort_detail::kNetwork) {
    // Padded with the largest value, which sorts last: the first n are v's values in order.
    std::array<std::uint64_t, sort_detail::kNetwork> w;
    for (std::size_t i = 0; i < sort_detail::kNetwork; ++i) w[i] = i < n ? v[i] : ~std::uint64_t{0};
    sort_detail::network(w, std::make_index_sequence<sort_detail::kComparators.count>{});
    std::size_t out = 0;
    for (std::size_t i = 0; i < n; ++i) {
      v[out] = w[i];
      out += i == 0 || w[i] != w[i - 1] ? 1 : 0;
    }
    return out;
  }
  constexpr std::size_t kMost = 64;  // places fit a 64-bit mask
  if (n > kMost) {
    std::sort(v, v + n);
    return static_cast<std::size_t>(std::unique(v, v + n) - v);
  }
  // Signed keys (SSE compares 64-bit lanes signed): the sign bit flipped keeps the unsigned order. Padding to a
  // multiple of 4 with the largest key lets the count run over whole vectors; it is below nothing.
  alignas(16) std::array<std::int64_t, kMost> key;
  std::array<std::uint64_t, kMost> placed;
  const std::size_t padded = (n + 3) & ~std::size_t{3};
  constexpr std::uint64_t kSign = std::uint64_t{1} << 63U;
  for (std::size_t i = 0; i < padded; ++i)
    key[i] = i < n ? static_cast<std::int64_t>(v[i] ^ kSign) : std::numeric_limits<std::int64_t>::max();
  std::uint64_t taken = 0;  // a bit per place filled
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t k = key[i];
    unsigned below = 0;
    for (std::size_t j = 0; j < padded; ++j) below += key[j] < k ? 1U : 0U;
    placed[below] = v[i];
    taken |= std::uint64_t{1} << below;
  }
  std::size_t out = 0;
  for (; taken != 0; taken &= taken - 1) v[out++] = placed[static_cast<std::size_t>(std::countr_zero(taken))];
  return out;
}

}  // namespace memhier
