#pragma once
// Shared-memory banks: a warp request costs as many wavefronts as the most-loaded bank has distinct words (the same
// word in many lanes is one broadcast). 8- and 16-byte accesses are served in half-warp phases: a 16-byte warp access
// of 512 distinct bytes takes 4 wavefronts (2 a phase), one whose half-warps each read a single 16-byte chunk 2 (the
// H100's ncu wavefronts for matmul_tiled's LDS.128 broadcasts; quarter-warp phases would make 4).
#include <cstdint>
#include <optional>
#include <span>

namespace memhier {

struct BankResult {
  std::uint32_t wavefronts = 0;
  // Wavefronts the access needs without conflicts, as ncu counts its bank conflicts (wavefronts beyond these): one per
  // phase with an active lane, and at least the lanes' bytes over the banks' width, since a wavefront returns one bank
  // word per bank. A warp's contiguous 16-byte loads take 4 wavefronts and ncu counts no conflict (H100,
  // async_copy_pipeline and tma_bulk_copy's LDS.128: 540672 wavefronts for 135168 loads, 0 conflicts); a broadcast
  // may take fewer than this (matmul_tiled's LDS.128: 2, 0 conflicts).
  std::uint32_t ideal = 0;
  [[nodiscard]] std::uint32_t conflicts() const { return wavefronts > ideal ? wavefronts - ideal : 0; }
};

// `lanes`: lane index of each address (ascending); `addresses`: byte offsets in the shared window. `banks` and
// `bank_bytes` are powers of two, as arch validation requires of shared_memory.banks and bank_width. Lanes ascending
// at most `size` apart (a row of a tile, a broadcast) cover one stretch of words a phase, whose most-loaded bank holds
// the stretch over the banks, rounded up: counted so, without looking at each word.
BankResult shared_wavefronts(std::span<const std::uint8_t> lanes, std::span<const std::uint64_t> addresses,
                             unsigned size, unsigned banks, unsigned bank_bytes);

// As shared_wavefronts() for the lanes of `mask` (the k-th of them at first + k x stride, wrapping modulo 2^64, as a
// negative stride does; a tile's column, a broadcast, a row), in closed form:
// - each access one bank word (size == bank_bytes, first and stride multiples of it): word k's bank,
//   (first / bank_bytes + k * d) mod banks with d = stride / bank_bytes, comes round again every banks / gcd(d, banks)
//   lanes, so the most-loaded bank holds the lanes over that, rounded up (d = 0: one word, a broadcast);
// - otherwise lanes at most `size` apart, ascending (a row of float4, float2 or bytes; one lane): each phase's bytes
//   are one stretch of words, as shared_wavefronts counts them without looking at each lane.
// nullopt for other accesses, and for strides of 4 GiB or more either way.
std::optional<BankResult> strided_wavefronts(std::uint64_t first, std::uint64_t stride, std::uint32_t mask,
                                             unsigned size, unsigned banks, unsigned bank_bytes);

}  // namespace memhier
