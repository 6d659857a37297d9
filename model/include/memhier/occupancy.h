#pragma once
// Theoretical occupancy, the same calculation as the CUDA toolkit's cuda_occupancy.h but driven by the arch file.
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "memhier/arch.h"

namespace memhier {

struct LaunchResources {
  int threads_per_block = 0;
  int registers_per_thread = 0;
  std::uint64_t static_shared_bytes = 0;
  std::uint64_t dynamic_shared_bytes = 0;
  int carveout_percent = -1;  // cudaFuncAttributePreferredSharedMemoryCarveout: -1 = no preference, else 0..100
  int block_barriers = 1;     // barriers the kernel uses (cudaOccFuncAttributes::numBlockBarriers)
  bool shared_optin = true;   // kernel raised cudaFuncAttributeMaxDynamicSharedMemorySize to what it launches with
};

enum Limiter : unsigned {
  limit_warps = 0x01,
  limit_registers = 0x02,
  limit_shared_memory = 0x04,
  limit_blocks = 0x08,
  limit_barriers = 0x10,
};

struct Occupancy {
  int blocks_per_sm = 0;
  // Blocks per SM allowed by each resource alone (INT_MAX: not limited by it).
  int blocks_by_warps = 0;
  int blocks_by_registers = 0;
  int blocks_by_shared_memory = 0;
  int blocks_by_blocks = 0;
  int blocks_by_barriers = INT_MAX;
  unsigned limiters = 0;  // Limiter bits of every resource that reaches blocks_per_sm
  int warps_per_block = 0;
  int active_warps_per_sm = 0;
  double occupancy = 0;  // active warps / max warps per SM
  int allocated_registers_per_block = 0;
  std::uint64_t allocated_shared_per_block = 0;  // includes the driver's reservation, rounded to the allocation unit
  std::uint64_t shared_carveout = 0;             // shared memory per SM the launch runs with
  std::uint64_t l1_capacity = 0;                 // unified size minus the carveout
  std::string not_launchable;                    // why blocks_per_sm is 0; empty otherwise
};

// Throws InputError (key names the offending field) for negative or out-of-range inputs.
Occupancy compute_occupancy(const Arch& arch, const LaunchResources& launch);

std::vector<std::string> limiter_names(unsigned limiters);

}  // namespace memhier
