#pragma once
// The random index stream of kernel descriptions, `urand(seed, k, lo, hi)`: uniform in [lo, hi), a pure function of
// (seed, k) so a CUDA kernel or host code can reproduce the exact indices a description generates. Host and device.
#include <cstdint>

#if defined(__CUDACC__)
#define MEMHIER_HOST_DEVICE __host__ __device__
#else
#define MEMHIER_HOST_DEVICE
#endif

namespace memhier {

// Output k of SplitMix64 seeded with `seed` (Steele, Lea, Flood 2014): the state after k + 1 steps, mixed.
MEMHIER_HOST_DEVICE inline std::uint64_t urand_bits(std::uint64_t seed, std::uint64_t k) {
  std::uint64_t z = seed + (k + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

// lo + bits mod (hi - lo); requires lo < hi.
MEMHIER_HOST_DEVICE inline std::int64_t urand(std::uint64_t seed, std::uint64_t k, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(urand_bits(seed, k) % static_cast<std::uint64_t>(hi - lo));
}

}  // namespace memhier
