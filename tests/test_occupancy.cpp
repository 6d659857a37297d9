// Hand-computed occupancy cases. Arithmetic in the comments; H100: 64 warps, 65536 registers in 4 sub-partitions,
// 256-register warp allocation, 228 KiB shared per SM, 1 KiB reserved per block, 128 B shared allocation unit.
#include <doctest/doctest.h>

#include <climits>

#include "memhier/occupancy.h"
#include "test_support.h"

using namespace memhier;

namespace {
Occupancy on(const char* arch, int threads, int regs, std::uint64_t smem, std::uint64_t dyn = 0, int carveout = -1) {
  LaunchResources l;
  l.threads_per_block = threads;
  l.registers_per_thread = regs;
  l.static_shared_bytes = smem;
  l.dynamic_shared_bytes = dyn;
  l.carveout_percent = carveout;
  return compute_occupancy(load_arch(arch), l);
}
}  // namespace

TEST_CASE("4.1 full occupancy: 8 warps x 32 regs -> 1024 regs/warp, 16 warps per sub-partition, 8 blocks") {
  Occupancy o = on("h100", 256, 32, 0);
  CHECK(o.blocks_per_sm == 8);
  CHECK(o.blocks_by_warps == 8);
  CHECK(o.blocks_by_registers == 8);
  CHECK(o.blocks_by_shared_memory == 228);  // 228 KiB / (0 + 1 KiB reserve)
  CHECK(o.limiters == (limit_warps | limit_registers));
  CHECK(o.occupancy == 1.0);
  CHECK(o.allocated_shared_per_block == 1024);
  CHECK(o.shared_carveout == 8 * 1024);  // 8 blocks x 1 KiB -> the 8 KiB carveout
  CHECK(o.l1_capacity == 248 * 1024);
}

TEST_CASE("4.2 register granularity: 33 regs -> 1056 rounded to 1280 per warp -> 12 warps per sub-partition") {
  Occupancy o = on("h100", 128, 33, 0);
  CHECK(o.blocks_by_registers == 12);  // 48 warps / 4 warps per block
  CHECK(o.blocks_per_sm == 12);
  CHECK(o.limiters == limit_registers);
  CHECK(o.occupancy == doctest::Approx(0.75));
  CHECK(o.allocated_registers_per_block == 4 * 1280);
}

TEST_CASE("4.3 shared memory: 20000 B + 1 KiB reserve -> 21120 B allocated -> 11 blocks in 228 KiB") {
  Occupancy o = on("h100", 96, 16, 0, 20000);
  CHECK(o.allocated_shared_per_block == 21120);
  CHECK(o.blocks_by_shared_memory == 11);
  CHECK(o.blocks_by_warps == 21);  // 64 / 3
  CHECK(o.blocks_per_sm == 11);
  CHECK(o.limiters == limit_shared_memory);
  CHECK(o.shared_carveout == 228 * 1024);  // 11 x 21120 = 232320 needs the largest carveout
  CHECK(o.l1_capacity == 28 * 1024);
}

TEST_CASE("4.4 large static + opt-in: 128 regs, 48 KiB -> 2 blocks by registers, carveout 100 KiB") {
  Occupancy o = on("h100", 256, 128, 48 * 1024);
  CHECK(o.blocks_by_registers == 2);      // 4096 regs/warp -> 4 warps per sub-partition -> 16 warps
  CHECK(o.blocks_by_shared_memory == 4);  // 233472 / 50176
  CHECK(o.blocks_per_sm == 2);
  CHECK(o.shared_carveout == 100 * 1024);  // 2 x 49 KiB = 98 KiB -> 100 KiB
  CHECK(o.l1_capacity == 156 * 1024);
}

TEST_CASE("4.5 launches that cannot run give 0 blocks and say why") {
  CHECK(on("h100", 1025, 32, 0).blocks_per_sm == 0);
  CHECK(on("h100", 1025, 32, 0).not_launchable.find("threads per block") != std::string::npos);
  CHECK(on("h100", 32, 256, 0).blocks_per_sm == 0);
  CHECK(on("h100", 32, 32, 228 * 1024).blocks_per_sm == 0);  // 229 KiB with the reserve > 228 KiB
  CHECK(on("h100", 1024, 65, 0).blocks_per_sm == 0);         // 2304 x 32 warps = 73728 > 65536
  // 9 warps x 224 regs: 64512 allocated fits, but the hardware check assumes 12 warps (rounded to 4 sub-partitions).
  Occupancy o = on("h100", 288, 224, 0);
  CHECK(o.allocated_registers_per_block == 64512);
  CHECK(o.blocks_per_sm == 0);
  LaunchResources no_optin{64, 32, 0, 60000, -1, 1, false};
  CHECK(compute_occupancy(load_arch("h100"), no_optin).blocks_per_sm == 0);  // over 48 KiB without opt-in
  CHECK(on("h100", 1024, 64, 0).blocks_per_sm == 1);
  // Every broken limit is named, not only the last one checked.
  std::string both = on("h100", 2048, 256, 0).not_launchable;
  CHECK(both.find("registers per thread") != std::string::npos);
  CHECK(both.find("threads per block") != std::string::npos);
}

TEST_CASE("4.5b absurd sizes give 0 blocks without overflow") {
  CHECK(on("h100", INT_MAX, 32, 0).blocks_per_sm == 0);
  CHECK(on("h100", 256, INT_MAX, 0).blocks_per_sm == 0);
  CHECK(on("h100", 256, 32, 1ULL << 62, 1ULL << 62).blocks_per_sm == 0);
  CHECK(on("h100", 256, 32, 0, UINT64_MAX).not_launchable.find("shared memory") != std::string::npos);
}

TEST_CASE("4.6 carveout preference: 50% of 228 KiB = 114 KiB -> 132 KiB carveout, L1 124 KiB") {
  Occupancy o = on("h100", 128, 32, 0, 0, 50);
  CHECK(o.shared_carveout == 132 * 1024);
  CHECK(o.blocks_by_shared_memory == 132);
  CHECK(o.blocks_per_sm == 16);
  CHECK(o.l1_capacity == 124 * 1024);
  // 10% -> 23347 B -> 32 KiB preferred, but 41 KiB blocks need the 64 KiB carveout -> 1 block.
  Occupancy small = on("h100", 128, 32, 40 * 1024, 0, 10);
  CHECK(small.shared_carveout == 64 * 1024);
  CHECK(small.blocks_by_shared_memory == 1);
}

TEST_CASE("4.7 other architectures: V100 256 B granularity and no reserve; Ada 48 warps, 24 blocks, no barrier limit") {
  Occupancy v = on("v100", 32, 16, 100);
  CHECK(v.allocated_shared_per_block == 256);
  CHECK(v.blocks_by_shared_memory == 384);
  CHECK(v.blocks_per_sm == 32);
  CHECK(v.shared_carveout == 8 * 1024);
  CHECK(v.l1_capacity == 120 * 1024);
  Occupancy ada = on("rtx4090", 64, 16, 0);
  CHECK(ada.blocks_per_sm == 24);
  CHECK(ada.blocks_by_warps == 24);
  CHECK(ada.blocks_by_barriers == INT_MAX);
  CHECK(ada.occupancy == doctest::Approx(1.0));
  // Hopper: 3 barriers per block -> 64 / 3 = 21 blocks.
  LaunchResources bar{32, 16, 0, 0, -1, 3, true};
  Occupancy h = compute_occupancy(load_arch("h100"), bar);
  CHECK(h.blocks_by_barriers == 21);
  CHECK(h.blocks_per_sm == 21);
  CHECK(h.limiters == limit_barriers);
}

TEST_CASE("4.8 negative or out-of-range inputs are input errors naming the flag") {
  Arch a = load_arch("h100");
  auto key_of = [&](LaunchResources l) {
    try {
      compute_occupancy(a, l);
    } catch (const InputError& e) {
      return e.key();
    }
    return std::string("no error");
  };
  CHECK(key_of({0, 32, 0, 0, -1, 1, true}) == "threads");
  CHECK(key_of({32, -1, 0, 0, -1, 1, true}) == "regs");
  CHECK(key_of({32, 32, 0, 0, 101, 1, true}) == "carveout");
  CHECK(key_of({32, 32, 0, 0, -1, -2, true}) == "barriers");
}
