// What DRAM reads and writes cost together: the timing model (model/timing/timing.cpp) charges each its own row
// activations at the rates validate/probe/dram_locality.cu measured apart (read_activation_rate,
// write_activation_rate), and register_spill, whose write-backs and re-reads land on scattered rows, runs at 1.6-2.2
// TB/s on the H100 where the model gives 2.7 (validate/results/h100-2026-11-26c).
//
// Each kernel moves 256 MiB in runs of k consecutive 64-byte granules, each run at a random run-aligned place, as
// dram_locality.cu does (four threads a granule, a float4 each; run r of a launch starts at granule
// urand(seed, r, 0, granules / k) x k of its 1 GiB half of a 2 GiB buffer). Patterns:
//   read   256 MiB read from the first half (the sum stored only if impossible for the data)
//   write  256 MiB written to the second half
//   copy   both: each thread reads its float4 from the first half and writes it to the second (its own seed there)
// k = 1, 4, 16, 64, 1024. Each configuration: a warm-up launch, then `runs` launches timed alone with CUDA events,
// each with its own seeds. Under ncu (runs = 1) the bytes each moved. Usage: dram_mixed [runs] (default 7). Output:
// one JSON object on stdout. Build: nvcc -O2 -arch=sm_90 -I../../model/include dram_mixed.cu -o dram_mixed
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda_check.h"
#include "probe_util.cuh"

namespace {

constexpr long long kHalfGranules = (1LL << 30) / 64;

__device__ long long float4_index(long long t, long long k, unsigned long long seed) {
  return probe::granule_float4(t, k, kHalfGranules, seed);
}

__global__ void mixed_read(const float4* a, long long n, long long k, unsigned long long seed, float* sink) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (t >= n) return;
  const float4 v = a[float4_index(t, k, seed)];
  if (v.x + v.y + v.z + v.w < 0.0F) sink[0] = v.x;  // the data are positive: no store
}

__global__ void mixed_write(float4* b, long long n, long long k, unsigned long long seed) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (t < n) b[float4_index(t, k, seed)] = make_float4(1.0F, 2.0F, 3.0F, 4.0F);
}

__global__ void mixed_copy(const float4* a, float4* b, long long n, long long k, unsigned long long seed) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (t < n) b[float4_index(t, k, seed + 1000003)] = a[float4_index(t, k, seed)];
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 7;
  if (runs < 1) {
    std::fprintf(stderr, "usage: dram_mixed [runs >= 1]\n");
    return 2;
  }
  constexpr long long kBuffer = 2LL << 30, kBytes = 256LL << 20;
  constexpr long long kThreads = kBytes / 16;
  float4* a = nullptr;
  float* sink = nullptr;
  CHECK(cudaMalloc(&a, kBuffer));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  float4* b = a + (kBuffer / 2) / 16;
  const int threads = 256;
  const auto blocks = static_cast<unsigned>((kThreads + threads - 1) / threads);
  probe::fill<<<1024, threads>>>(reinterpret_cast<float*>(a), kBuffer / 4, 1);
  CHECK(cudaDeviceSynchronize());
  std::printf("{\n  \"buffer_bytes\": %lld, \"bytes\": %lld, \"block\": %d, \"runs\": %d,\n  \"results\": [\n", kBuffer,
              kBytes, threads, runs);
  bool first = true;
  unsigned long long seed = 1;
  for (const char* pattern : {"read", "write", "copy"})
    for (long long k : {1LL, 4LL, 16LL, 64LL, 1024LL}) {
      std::vector<float> us;
      const int rc = probe::timed_runs(
          runs, seed,
          [&](unsigned long long s) {
            if (std::strcmp(pattern, "read") == 0) mixed_read<<<blocks, threads>>>(a, kThreads, k, s, sink);
            if (std::strcmp(pattern, "write") == 0) mixed_write<<<blocks, threads>>>(b, kThreads, k, s);
            if (std::strcmp(pattern, "copy") == 0) mixed_copy<<<blocks, threads>>>(a, b, kThreads, k, s);
          },
          us);
      if (rc != 0) return rc;
      std::printf(
          "%s    {\"pattern\": \"%s\", \"run_granules\": %lld, \"median_us\": %.3f, \"min_us\": %.3f, "
          "\"max_us\": %.3f}",
          first ? "" : ",\n", pattern, k, us[us.size() / 2], us.front(), us.back());
      first = false;
    }
  std::printf("\n  ]\n}\n");
  CHECK(cudaFree(a));
  CHECK(cudaFree(sink));
  return 0;
}
