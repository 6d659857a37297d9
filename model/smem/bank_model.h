#pragma once
// Shared-memory banks: a warp request costs as many wavefronts as the most-loaded bank has distinct words (the same
// word in many lanes is one broadcast). 8- and 16-byte accesses are served in half-warp phases: a 16-byte warp access
// of 512 distinct bytes takes 4 wavefronts (2 a phase), one whose half-warps each read a single 16-byte chunk 2 (the
// H100's ncu wavefronts for matmul_tiled's LDS.128 broadcasts; quarter-warp phases would make 4).
#include <cstdint>
#include <span>

namespace memhier {

struct BankResult {
  std::uint32_t wavefronts = 0;
  std::uint32_t ideal = 0;  // wavefronts without conflicts (one per phase with an active lane)
  [[nodiscard]] std::uint32_t conflicts() const { return wavefronts - ideal; }
};

// `lanes`: lane index of each address (ascending); `addresses`: byte offsets in the shared window.
BankResult shared_wavefronts(std::span<const std::uint8_t> lanes, std::span<const std::uint64_t> addresses,
                             unsigned size, unsigned banks, unsigned bank_bytes);

}  // namespace memhier
