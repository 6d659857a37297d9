#pragma once
// Placing lines in sets when the set count is not a power of two (the L2's slices x sets; an L1 whose sets follow its
// capacity).
#include <cstdint>

#include "../util/divisor.h"

namespace memhier {

// Where a cache puts a line among `total` sets (the L2: every slice's sets; an L1 whose set count is not a power of
// two: its sets): its place within its run of `total` consecutive lines, turned by an offset hashed from the run's
// number. A run thus covers every set (of every slice) once, as the H100 spreads a contiguous buffer: a 16 MiB
// persisting buffer keeps most of its hits in 5 set-aside ways of 3.125 MiB (5.12 lines a set) and none in 4
// (validate/results/h100-2026-11-22f/probe). Lines a power of two apart (a column walk) land in other sets run by run
// instead of crowding a few, which the H100 does not do either (transpose_naive writes its output to DRAM once: ncu
// dram__bytes_write; one warp re-reading 64-128 KiB at strides of 2-64 lines hits its L1 on every re-read:
// validate/results/h100-2026-11-24g). For the L2 the slice is the index modulo the slices, the set within the slice
// the quotient.
inline std::uint64_t place_in_sets(std::uint64_t line, const Divisor& total) {
  std::uint64_t within = 0;
  const std::uint64_t run = total.divide(line, within);
  // The run's offset: a multiplicative hash of its number scaled to [0, total) by the high half of a 64 x 64-bit
  // product (no second division: this runs for every L2 request and lookup).
  __extension__ using u128 = unsigned __int128;
  const std::uint64_t hash = (run + 1) * 0x9E3779B97F4A7C15ULL;
  const auto offset = static_cast<std::uint64_t>((static_cast<u128>(hash) * total.divisor()) >> 64U);
  const std::uint64_t place = within + offset;
  return place >= total.divisor() ? place - total.divisor() : place;
}
inline std::uint64_t place_in_sets(std::uint64_t line, std::uint64_t total) {
  return place_in_sets(line, Divisor(total));
}

}  // namespace memhier
