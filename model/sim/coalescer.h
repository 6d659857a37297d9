#pragma once
// Global/local coalescing as Nsight Compute counts it: one request per warp instruction, and the distinct 32-byte
// sectors its active lanes touch (an access that straddles a sector boundary touches both).
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "../util/sort_unique.h"
#include "memhier/trace.h"

namespace memhier {

// Up to 32 lanes x 16 bytes, each possibly straddling: at most 64 sectors (after de-duplication far fewer), in at
// most 64 lines.
struct SectorSet {
  struct Line {
    std::uint64_t line = 0;  // address / 128
    std::uint32_t mask = 0;  // its sectors touched: bit s is sector s of the line (never 0)
  };
  std::array<Line, 64> lines{};  // ascending, unique
  int line_count = 0;
  int count = 0;                           // sectors touched
  std::array<std::uint64_t, 64> sector{};  // scratch: sector numbers (address / 32) of a scattered access

  // Appends sector `s` (at or past the last one appended) to the lines.
  void add_sector(std::uint64_t s) {
    const std::uint64_t line = s >> 2U;
    if (line_count == 0 || lines[static_cast<std::size_t>(line_count - 1)].line != line)
      lines[static_cast<std::size_t>(line_count++)] = {line, 0};
    lines[static_cast<std::size_t>(line_count - 1)].mask |= 1U << (s & 3U);
  }
};

// The simulator takes accesses below the last line of the 64-bit address space: the end of any line it holds, a byte
// past its last, is then a 64-bit number (the write masks compute with it), and no access wraps to 0. No GPU address
// comes near (49 to 57 bits); one there is a damaged or hand-made trace. An access of `size` bytes at `a` lies below
// it when a <= kAddressEnd - size.
inline constexpr std::uint64_t kAddressEnd = ~std::uint64_t{0} - 127;  // 2^64 - 128

// Throws InputError: the accesses of `bytes` a lane from `first` to `last` (the same address: one lane) reach the
// last line of the address space or run past its end. Out of line: the coalescer's loops only test for it.
[[noreturn]] void access_past_top(std::uint64_t first, std::uint64_t last, std::uint64_t bytes);

// `layout`: what is known of the addresses (LaneLayout bits; kLayoutUnknown: the coalescer looks). Throws
// access_past_top()'s error for a lane whose bytes reach kAddressEnd.
inline void coalesce(std::span<const std::uint64_t> addresses, unsigned size, std::uint8_t layout, SectorSet& out) {
  out.line_count = 0;
  // The common case first: ascending lanes at most a sector apart (unit and small strides, float4, broadcast) touch
  // every sector from the first lane's to the last lane's end, and nothing else: whole lines between the first and
  // the last, which are cut at those sectors.
  if (!addresses.empty()) {
    if ((layout & kLayoutKnown) == 0) layout = lane_layout(addresses, size);
    if ((layout & kLayoutDense) != 0) {
      // Ascending lanes: only the last can reach the top, or lanes wrap past 2^64 (said dense by their stride).
      if (addresses.back() > kAddressEnd - size || addresses.back() < addresses.front())
        access_past_top(addresses.front(), addresses.back(), size);
      const std::uint64_t first = addresses.front() >> 5U, last = (addresses.back() + size - 1) >> 5U;
      out.count = static_cast<int>(last - first + 1);
      for (std::uint64_t line = first >> 2U; line <= last >> 2U; ++line)
        out.lines[static_cast<std::size_t>(out.line_count++)] = {line, 0xFU};
      out.lines[0].mask &= 0xFU << (first & 3U);
      out.lines[static_cast<std::size_t>(out.line_count - 1)].mask &= 0xFU >> (3U - (last & 3U));
      return;
    }
  }
  // Lanes usually come in address order: then one pass emits each new sector once. Otherwise sort and de-duplicate
  // (a gather).
  // Without a branch a lane: a gather's lanes come in no order the host could predict (each lane's sector is written,
  // and kept unless it repeats the furthest sector so far).
  std::size_t n = 0;
  bool sorted = true;
  std::uint64_t last_emitted = 0;
  const std::uint64_t top = kAddressEnd - size;
  bool past = false;  // a lane's bytes reach kAddressEnd
  for (std::uint64_t a : addresses) {
    const std::uint64_t first = a >> 5U;
    const std::uint64_t last = (a + size - 1) >> 5U;
    past |= a > top;
    sorted &= first >= last_emitted;
    out.sector[n] = first;
    n += static_cast<std::size_t>((n == 0) | (first != last_emitted));
    out.sector[n] = last;  // a lane straddling two sectors (at most 64 in all: the array's size)
    n += static_cast<std::size_t>(last != first);
    last_emitted = std::max(last_emitted, last);
  }
  if (past)
    for (std::uint64_t a : addresses)
      if (a > top) access_past_top(a, a, size);
  out.count = static_cast<int>(sorted ? n : sort_unique(out.sector.data(), n));
  for (int i = 0; i < out.count; ++i) out.add_sector(out.sector[static_cast<std::size_t>(i)]);
}

// As coalesce() for `n` lanes `stride` bytes apart from `first` where the stride is whole lines and every lane lies
// within its line (a column: softmax_naive's rows, transpose_naive's stores): each lane's sectors make a line of their
// own, without the lanes written out; false, `out` untouched, for any other stride or place (or lanes that could wrap
// past 2^64: a stride from 2^40, negative ones included, or a first address from 2^62).
inline bool coalesce_column(std::uint64_t first, std::uint64_t stride, std::size_t n, unsigned size, SectorSet& out) {
  constexpr std::uint64_t kLine = 128, kSector = 32;
  if (stride % kLine != 0 || stride == 0 || stride >= (std::uint64_t{1} << 40U) || first >= (std::uint64_t{1} << 62U) ||
      first % kLine + size > kLine)
    return false;
  const std::uint64_t s0 = first / kSector, s1 = (first + size - 1) / kSector;
  const auto mask = static_cast<std::uint32_t>((0xFU << (s0 & 3U)) & (0xFU >> (3U - (s1 & 3U))));
  const std::uint64_t line = first / kLine, step = stride / kLine;
  for (std::size_t l = 0; l < n; ++l) out.lines[l] = {line + l * step, mask};
  out.line_count = static_cast<int>(n);
  out.count = static_cast<int>(n * (s1 - s0 + 1));
  return true;
}

}  // namespace memhier
