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

// Up to 32 lanes x 16 bytes, each possibly straddling: at most 64 sectors (after de-duplication far fewer).
struct SectorSet {
  std::array<std::uint64_t, 64> sector{};  // sector numbers (address / 32), ascending, unique
  int count = 0;
};

// `layout`: what is known of the addresses (LaneLayout bits; kLayoutUnknown: the coalescer looks).
inline void coalesce(std::span<const std::uint64_t> addresses, unsigned size, std::uint8_t layout, SectorSet& out) {
  // The common case first: ascending lanes at most a sector apart (unit and small strides, float4, broadcast) touch
  // every sector from the first lane's to the last lane's end, and nothing else.
  if (!addresses.empty()) {
    if ((layout & kLayoutKnown) == 0) layout = lane_layout(addresses, size);
    if ((layout & kLayoutDense) != 0) {
      const std::uint64_t first = addresses.front() >> 5U, last = (addresses.back() + size - 1) >> 5U;
      out.count = static_cast<int>(last - first + 1);
      for (int i = 0; i < out.count; ++i)
        out.sector[static_cast<std::size_t>(i)] = first + static_cast<std::uint64_t>(i);
      return;
    }
  }
  // Lanes usually come in address order: then one pass emits each new sector once. Otherwise sort and de-duplicate
  // (a gather).
  int n = 0;
  bool sorted = true;
  std::uint64_t last_emitted = 0;
  for (std::uint64_t a : addresses) {
    const std::uint64_t first = a >> 5U;
    const std::uint64_t last = (a + size - 1) >> 5U;
    if (n == 0 || first > last_emitted) {
      out.sector[static_cast<std::size_t>(n++)] = first;
    } else if (first < last_emitted) {
      sorted = false;
      out.sector[static_cast<std::size_t>(n++)] = first;
    }
    if (last != first) out.sector[static_cast<std::size_t>(n++)] = last;
    last_emitted = std::max(last_emitted, last);
  }
  out.count = sorted ? n : static_cast<int>(sort_unique(out.sector.data(), static_cast<std::size_t>(n)));
}

}  // namespace memhier
