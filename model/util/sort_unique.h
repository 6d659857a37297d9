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
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MEMHIER_SORT_AVX512 1
#endif

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

// On hosts with AVX-512F (avx512(); x86-64-v2, the build's baseline, lacks it), 17 to 32 values go through a
// bitonic network in four registers of 8 instead: 15 stages of compare-exchanges, each a register's shuffled copy and
// a min, a max and a blend (partners in one register) or a min and a max of two registers (partners 8 or 16 apart).
// It sorts as network() does (sorted values without repeats are one list). This project's VM, 2026-12-02, 32 random
// sectors already in the host's caches: 31 ns against the network's 79 (and the padding, and the repeats dropped);
// memhier_bench_sim's gather 1.5-2% faster (8 rounds in turn).
#if defined(MEMHIER_SORT_AVX512)
// Every lane: the intrinsics' zero-masked forms are used with it, since the plain ones start from an undefined
// register, which g++ 12 warns of as uninitialized.
inline constexpr __mmask8 kAll = 0xFF;
// Each lane's partner kJ lanes away (1, 2 or 4), by immediate shuffles: neighbours within 128 bits, pairs within 256,
// halves.
template <unsigned kJ>
[[gnu::target("avx512f"), gnu::always_inline]] inline __m512i partners(__m512i x) {
  if constexpr (kJ == 1) return _mm512_maskz_shuffle_epi32(0xFFFF, x, _MM_PERM_BADC);
  if constexpr (kJ == 2) return _mm512_maskz_permutex_epi64(kAll, x, 0x4E);
  if constexpr (kJ == 4) return _mm512_maskz_shuffle_i64x2(kAll, x, x, 0x4E);
}
// Stage (k, j) of the bitonic sort of 32: value i is compared with value i ^ j, ascending where i & k is 0.
template <unsigned kK, unsigned kJ>
[[gnu::target("avx512f"), gnu::always_inline]] inline void bitonic_stage(__m512i (&r)[4]) {
  if constexpr (kJ >= 8) {
    constexpr unsigned kD = kJ / 8;  // partner register
    for (unsigned q = 0; q < 4; ++q) {
      if ((q & kD) != 0) continue;
      const __m512i lo = _mm512_maskz_min_epu64(kAll, r[q], r[q + kD]),
                    hi = _mm512_maskz_max_epu64(kAll, r[q], r[q + kD]);
      const bool ascending = ((8 * q) & kK) == 0;
      r[q] = ascending ? lo : hi;
      r[q + kD] = ascending ? hi : lo;
    }
  } else {
    for (unsigned q = 0; q < 4; ++q) {
      // Lanes that keep the larger value: the upper of the pair where ascending, the lower where not.
      unsigned keep_max = 0;
      for (unsigned l = 0; l < 8; ++l) keep_max |= (((l & kJ) != 0) != (((8 * q + l) & kK) != 0) ? 1U : 0U) << l;
      const __m512i p = partners<kJ>(r[q]);
      r[q] = _mm512_mask_blend_epi64(static_cast<__mmask8>(keep_max), _mm512_maskz_min_epu64(kAll, r[q], p),
                                     _mm512_maskz_max_epu64(kAll, r[q], p));
    }
  }
}

// Sorts v[0, n) (16 < n <= 32) without repeats, in place, returning how many remain: the values go into registers
// through masked loads (the rest of the 32 the largest value), and out through a compare of each with the one before
// and a compress, masked stores writing v's first places only.
[[gnu::target("avx512f")]] inline std::size_t sort_unique_avx512(std::uint64_t* v, std::size_t n) {
  __m512i r[4];  // NOLINT(cppcoreguidelines-avoid-c-arrays): a std::array drops the vector type's alignment
  std::array<__mmask8, 4> valid{};
  for (unsigned q = 0; q < 4; ++q) {
    const std::size_t in = std::min<std::size_t>(8, n > 8 * q ? n - 8 * q : 0);
    valid[q] = static_cast<__mmask8>((1U << in) - 1U);
    r[q] = _mm512_mask_loadu_epi64(_mm512_set1_epi64(-1), valid[q], v + 8 * q);
  }
  bitonic_stage<2, 1>(r);
  bitonic_stage<4, 2>(r);
  bitonic_stage<4, 1>(r);
  bitonic_stage<8, 4>(r);
  bitonic_stage<8, 2>(r);
  bitonic_stage<8, 1>(r);
  bitonic_stage<16, 8>(r);
  bitonic_stage<16, 4>(r);
  bitonic_stage<16, 2>(r);
  bitonic_stage<16, 1>(r);
  bitonic_stage<32, 16>(r);
  bitonic_stage<32, 8>(r);
  bitonic_stage<32, 4>(r);
  bitonic_stage<32, 2>(r);
  bitonic_stage<32, 1>(r);
  // Sorted, the first n places hold v's values (the padding sorts last): each kept unless it repeats the one before.
  std::size_t out = 0;
  for (unsigned q = 0; q < 4; ++q) {
    // Lane l: value 8q + l - 1.
    const __m512i before = _mm512_maskz_alignr_epi64(kAll, r[q], q == 0 ? r[q] : r[q - 1], 7);
    auto keep = static_cast<__mmask8>(_mm512_cmpneq_epu64_mask(r[q], before) & valid[q]);
    if (q == 0) keep = static_cast<__mmask8>(keep | (valid[0] & 1U));  // the first value has none before it
    const auto kept = static_cast<unsigned>(std::popcount(static_cast<unsigned>(keep)));
    _mm512_mask_storeu_epi64(v + out, static_cast<__mmask8>((1U << kept) - 1U),
                             _mm512_maskz_compress_epi64(keep, r[q]));
    out += kept;
  }
  return out;
}

// Whether this host runs sort_unique_avx512() (the CPU has AVX-512F and the OS keeps its registers).
inline bool avx512() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return has;
}
#endif

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
#if defined(MEMHIER_SORT_AVX512)
    if (sort_detail::avx512()) return sort_detail::sort_unique_avx512(v, n);
#endif
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
