#pragma once
// What several probes share (with probe_args.cuh): filling a buffer, pushing earlier data out of L2, 64-byte granules
// in runs at random places, and timing a configuration's launches.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda_check.h"
#include "memhier/urand.h"
#include "probe_args.cuh"

namespace probe {

// a[i] = 1 + i mod `period` (all positive, so a probe that sums them can store the sum only if it is negative).
__global__ void fill(float* a, long long n, long long period) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    a[i] = 1.0F + static_cast<float>(i % period);
}

// Reads n floats through L2 only (ld.global.cg): with n past the L2's size, what was there is gone.
__global__ void evict_l2(const float* b, long long n, float* sink) {
  float sum = 0.0F;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    sum += __ldcg(b + i);
  if (sum < 0.0F) sink[0] = sum;
}

// Thread t's float4 when 256 MiB move in runs of k consecutive 64-byte granules (four threads a granule), run r of
// seed `seed` starting at granule urand(seed, r, 0, granules / k) x k: granules / k is a power of two, so the modulo
// is a mask (a 64-bit division a thread would make the kernel bound by its arithmetic, not by DRAM).
__device__ inline long long granule_float4(long long t, long long k, long long granules, unsigned long long seed) {
  const long long g = t / 4, run = g / k;
  const auto runs = static_cast<unsigned long long>(granules / k);
  const auto start =
      static_cast<long long>(memhier::urand_bits(seed, static_cast<unsigned long long>(run)) & (runs - 1)) * k;
  return (start + g % k) * 4 + t % 4;  // a granule is 4 float4s
}

// `warmups` launches and `runs` more, each `launch(seed)` timed alone with CUDA events and a seed of its own (seed
// counts on), `before()` enqueued ahead of each, untimed (a flush, another kernel's writes); their times in
// microseconds, sorted, into `us`. 1 on a CUDA error (CHECK), else 0. A launch with nothing before it finds the GPU
// idle (a synchronize ends the previous run), so its time holds the launch itself: 5-7.5 us more than ncu's kernel
// duration on the H100 (validate/results/h100-2026-11-27d); compare with `predict --idle-gpu`. One queued behind a
// kernel of `before()` does not.
template <typename Launch, typename Before>
int timed_runs(int runs, unsigned long long& seed, Launch&& launch, std::vector<float>& us, Before&& before,
               int warmups = 1) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  us.clear();
  for (int r = 1 - warmups; r <= runs; ++r) {  // r <= 0: warm-ups
    before();
    CHECK(cudaEventRecord(start));
    launch(seed);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (r > 0) us.push_back(ms * 1000.0F);
    ++seed;
  }
  std::sort(us.begin(), us.end());
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  return 0;
}

template <typename Launch>
int timed_runs(int runs, unsigned long long& seed, Launch&& launch, std::vector<float>& us) {
  return timed_runs(runs, seed, launch, us, [] {});
}

}  // namespace probe
