// What DRAM row locality costs: the measurement behind dram.activation_rate and the DRAM term of the timing model
// (model/timing/timing.cpp).
//
// Each kernel moves `bytes` (256 MiB) of a 2 GiB buffer, far past the L2, in runs of k consecutive 64-byte granules
// (the H100's DRAM fetch), each run at a random run-aligned place: run r of a launch starts at granule
// urand(seed, r, 0, granules / k) x k (memhier/urand.h, as a kernel description computes it; granules / k is a power
// of two, so the modulo is a mask). Four threads move a
// granule, a float4 each, so a warp covers 8 granules: k = 1 gives 8 runs a warp, k >= 8 whole runs. Patterns:
//   read   sum of the float4s (stored only if impossible for the data)
//   write  each float4 stored
// k = 1, 2, 4, ..., 1024: from a new DRAM row every granule (random 64-byte reads, as a large gather makes) to long
// sequential runs (a stream); then k = 1 over the buffer's first 256 MiB, 512 MiB and 1 GiB (rows nearer together).
// Each configuration: one warm-up launch, then `runs` launches timed alone with CUDA events, each with its own seed
// (another set of rows: the L2 keeps nothing for the next). Under ncu (runs = 1) the bytes each moved. Usage:
// dram_locality [runs] (default 7). Output: one JSON object on stdout. Build: nvcc -O2 -arch=sm_90
// -I../../model/include dram_locality.cu -o dram_locality
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"
#include "probe_util.cuh"

namespace {

__global__ void dram_read(const float4* a, long long n, long long k, long long granules, unsigned long long seed,
                          float* sink) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (t >= n) return;
  const float4 v = a[probe::granule_float4(t, k, granules, seed)];
  if (v.x + v.y + v.z + v.w < 0.0F) sink[0] = v.x;  // the data are positive: no store
}

__global__ void dram_write(float4* a, long long n, long long k, long long granules, unsigned long long seed) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (t < n) a[probe::granule_float4(t, k, granules, seed)] = make_float4(1.0F, 2.0F, 3.0F, 4.0F);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 7;
  if (runs < 1) {
    std::fprintf(stderr, "usage: dram_locality [runs >= 1]\n");
    return 2;
  }
  constexpr long long kBuffer = 2LL << 30, kBytes = 256LL << 20;
  constexpr long long kThreads = kBytes / 16;
  float4* a = nullptr;
  float* sink = nullptr;
  CHECK(cudaMalloc(&a, kBuffer));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  const int threads = 256;
  const auto blocks = static_cast<unsigned>((kThreads + threads - 1) / threads);
  probe::fill<<<1024, threads>>>(reinterpret_cast<float*>(a), kBuffer / 4, 1);
  CHECK(cudaDeviceSynchronize());
  std::printf("{\n  \"buffer_bytes\": %lld, \"bytes\": %lld, \"block\": %d, \"runs\": %d,\n  \"results\": [\n", kBuffer,
              kBytes, threads, runs);
  // Run lengths 1 to 1024 over the whole buffer, then single granules over its first 256 MiB to 1 GiB (how far the
  // rows of scattered accesses lie apart).
  struct Config {
    const char* pattern;
    long long k, buffer;
  };
  std::vector<Config> configs;
  for (const char* pattern : {"read", "write"})
    for (long long k = 1; k <= 1024; k *= 2) configs.push_back({pattern, k, kBuffer});
  for (const char* pattern : {"read", "write"})
    for (long long mib = 256; mib < kBuffer >> 20; mib *= 2) configs.push_back({pattern, 1, mib << 20});
  bool first = true;
  unsigned long long seed = 1;
  for (const Config& config : configs) {
    const char* pattern = config.pattern;
    const long long k = config.k, granules = config.buffer / 64;
    std::vector<float> us;
    const int rc = probe::timed_runs(
        runs, seed,
        [&](unsigned long long s) {
          if (pattern[0] == 'r')
            dram_read<<<blocks, threads>>>(a, kThreads, k, granules, s, sink);
          else
            dram_write<<<blocks, threads>>>(a, kThreads, k, granules, s);
        },
        us);
    if (rc != 0) return rc;
    std::printf(
        "%s    {\"pattern\": \"%s\", \"run_granules\": %lld, \"buffer_bytes\": %lld, \"median_us\": %.3f, "
        "\"min_us\": %.3f, \"max_us\": %.3f}",
        first ? "" : ",\n", pattern, k, config.buffer, us[us.size() / 2], us.front(), us.back());
    first = false;
  }
  std::printf("\n  ]\n}\n");
  CHECK(cudaFree(a));
  CHECK(cudaFree(sink));
  return 0;
}
