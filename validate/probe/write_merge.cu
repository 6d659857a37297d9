// When do stores to a sector reach L2 as fewer lookups than the L1 sends? On the H100 the suite's particles_aos, whose
// threads each store three fields (x, y, z: words 0-2 of the thread's 32-byte structure, one instruction after
// another), counts 1.28-1.29 L2 write lookups (lts__t_sectors_op_write) an L1 store sector on all eight runs, where
// every other suite kernel counts 1.48-1.53 (a far line's copy and its home) and the simulator 1.5 for all of them
// (validate/results/h100-2026-11-24d). This probe separates what could decide it.
//
// Each thread t of n owns the 32-byte structure at p + 8t (one sector; a warp's 32 structures are 8 lines) and stores
// `k` words into it with plain 32-bit stores (inline PTX st.global.f32, so nvcc neither joins them into wider stores
// nor drops repeats):
//   fields  words 0, 1, ..., k - 1, one instruction after another (particles_aos is fields, k = 3)
//   same    word 0, k times
//   spread  words 0, 1, ..., k - 1 of k different structures 256 KiB apart (no two stores share a sector: the
//           reference, 1.5 expected)
// with a clock64 spin of `spin` cycles between stores (0: back to back), by eight 256-thread blocks an SM (n = 2^22,
// 128 MiB, past the L2) or by one warp an SM looping over its structures (`one_warp`). Under ncu (cache control all: a
// clean, empty L2 each launch) lts__t_sectors_op_write against l1tex__t_sectors_pipe_lsu_mem_global_op_st, and the
// write lookups from the SMs (srcunit_tex) and from the other partition (srcunit_ltcfabric), say where stores merge.
// Output (stdout): one JSON object listing the launches in order with their settings; ncu's CSV gives each launch's
// counters in the same order.
// `write_merge occupancy` runs fields k = 3 and 8 instead with 1 to 32 warps an SM, 0 or 100 cycles apart.
// Usage: write_merge [occupancy]. Build: nvcc -O2 -arch=sm_90 write_merge.cu -o write_merge
#include <cuda_runtime.h>

#include <cstdio>
#include <string_view>

#include "cuda_check.h"

namespace {

__device__ __forceinline__ void store(float* at, float v) {
  asm volatile("st.global.f32 [%0], %1;" ::"l"(at), "f"(v) : "memory");
}

__device__ __forceinline__ void spin(long long cycles) {
  if (cycles == 0) return;
  const long long start = clock64();
  while (clock64() - start < cycles) {
    asm volatile("" ::: "memory");
  }
}

enum Kind { kFields = 0, kSame = 1, kSpread = 2 };

// Structure s's k stores.
template <int kK, int kKind>
__device__ __forceinline__ void stores(float* p, long long s, long long spin_cycles) {
#pragma unroll
  for (int j = 0; j < kK; ++j) {
    if (j > 0) spin(spin_cycles);
    float* at = kKind == kFields ? p + 8 * s + j : kKind == kSame ? p + 8 * s : p + 8 * (s + 256LL * 32 * j) + j;
    store(at, static_cast<float>(j + 1));
  }
}

template <int kK, int kKind>
__global__ void wm_full(float* p, long long n, long long spin_cycles) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (t < n) stores<kK, kKind>(p, t, spin_cycles);
}

// `warps` warps an SM, one block of them: warp w of block b takes structures (b x warps + w) x 32 + lane, then every
// 32 x warps x blocks after.
template <int kK, int kKind>
__global__ void wm_few(float* p, long long n, long long spin_cycles) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
#pragma unroll 1
  for (long long s = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; s < n; s += stride)
    stores<kK, kKind>(p, s, spin_cycles);
}

bool first = true;

// `warps` 0: eight 256-thread blocks an SM (wm_full, 64 warps); else that many warps an SM (wm_few).
template <int kK, int kKind>
int run(float* p, long long n, int sms, int warps, long long spin_cycles) {
  if (warps > 0) {
    wm_few<kK, kKind><<<sms, 32 * warps>>>(p, n, spin_cycles);
  } else {
    wm_full<kK, kKind><<<static_cast<unsigned>(n / 256), 256>>>(p, n, spin_cycles);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const char* kinds[] = {"fields", "same", "spread"};
  std::printf("%s{\"kind\": \"%s\", \"k\": %d, \"one_warp\": %s, \"warps_per_sm\": %d, \"spin\": %lld}",
              first ? "" : ", ", kinds[kKind], kK, warps == 1 ? "true" : "false", warps > 0 ? warps : 64, spin_cycles);
  first = false;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool occupancy = argc > 1 && std::string_view(argv[1]) == "occupancy";
  if (argc > 2 || (argc == 2 && !occupancy)) {
    std::fprintf(stderr, "usage: write_merge [occupancy]\n");
    return 2;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const long long n = 1LL << 22;  // structures: 128 MiB, and the spread kind's reach past them
  float* p = nullptr;
  const long long floats = 8 * (n + 256LL * 32 * 8);
  CHECK(cudaMalloc(&p, sizeof(float) * floats));
  CHECK(cudaMemset(p, 0, sizeof(float) * floats));
  CHECK(cudaDeviceSynchronize());
  std::printf("{\"sms\": %d, \"n\": %lld, \"launches\": [", sms, n);
  int rc = 0;
  if (occupancy) {  // how many warps an SM, and how far apart, stop a warp's stores merging in the L1
    for (const long long s : {0LL, 100LL})
      for (const int w : {1, 2, 4, 8, 16, 32}) {
        rc |= run<3, kFields>(p, n, sms, w, s);
        rc |= run<8, kFields>(p, n, sms, w, s);
      }
  } else {
    for (const long long s : {0LL, 500LL}) {
      rc |= run<1, kFields>(p, n, sms, 0, s);
      rc |= run<2, kFields>(p, n, sms, 0, s);
      rc |= run<3, kFields>(p, n, sms, 0, s);
      rc |= run<4, kFields>(p, n, sms, 0, s);
      rc |= run<8, kFields>(p, n, sms, 0, s);
      rc |= run<3, kSame>(p, n, sms, 0, s);
      rc |= run<8, kSame>(p, n, sms, 0, s);
      rc |= run<3, kSpread>(p, n, sms, 0, s);
      rc |= run<3, kFields>(p, n, sms, 1, s);
      rc |= run<8, kFields>(p, n, sms, 1, s);
    }
  }
  std::printf("]}\n");
  CHECK(cudaFree(p));
  return rc;
}
