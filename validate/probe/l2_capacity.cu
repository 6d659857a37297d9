// How much of a working set the L2 keeps from one launch to the next, by footprint: the measurement behind the L2's
// placement, replacement and write-back rules in model/cache/set_cache.h and model/l2/l2_slice.cpp.
//
// Three kernels over a footprint of S MiB, each thread one float (256 threads a block, blocks in order):
//   read   sum += a[i] over S MiB (no store: the sum is written only if it is impossible for the data)
//   copy   out[i] = in[i], S / 2 MiB each way
//   write  out[i] = i, S MiB
// For each S and kernel: two warm-up launches, then `runs` launches back to back, each timed alone with CUDA events
// (no flush between them: the steady state of a kernel run in a loop). Under ncu (runs = 1) the last launch of each
// configuration gives the L2 hits and DRAM bytes of that steady state.
// With `ways` (0 to the device's persistingL2CacheMaxSize in ways of l2CacheSize / 16), the persisting set-aside is
// that many ways (cudaDeviceSetLimit) and no window is set: what an unused set-aside leaves the kernels' normal lines.
// Usage: l2_capacity [runs] [ways] (default 10 runs, no set-aside). Output: one JSON object on stdout.
// Build: nvcc -O2 -arch=sm_90 l2_capacity.cu -o l2_capacity
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"
#include "probe_args.cuh"

__global__ void l2cap_read(const float* a, long long n, float* sink) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n && a[i] < 0.0F) sink[0] = a[i];  // the data are positive: no store
}

__global__ void l2cap_copy(const float* in, float* out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i];
}

__global__ void l2cap_write(float* out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(i);
}

__global__ void fill(float* a, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) a[i] = 1.0F + static_cast<float>(i % 1000);
}

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 10;
  const int ways = argc > 2 ? std::atoi(argv[2]) : 0;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const std::size_t way = static_cast<std::size_t>(prop.l2CacheSize) / 16;
  if (runs < 1 || ways < 0 ||
      static_cast<std::size_t>(ways) * way > static_cast<std::size_t>(prop.persistingL2CacheMaxSize)) {
    std::fprintf(stderr, "usage: l2_capacity [runs >= 1] [ways: 0 to %zu]\n",
                 static_cast<std::size_t>(prop.persistingL2CacheMaxSize) / way);
    return 2;
  }
  const std::vector<int> sizes_mib{4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 56, 64, 96};
  const long long max_floats = 96LL << 20 >> 2;
  float *a = nullptr, *b = nullptr, *sink = nullptr;
  CHECK(cudaMalloc(&a, sizeof(float) * max_floats));
  CHECK(cudaMalloc(&b, sizeof(float) * max_floats));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  std::size_t granted = 0;
  if (probe::set_aside(static_cast<std::size_t>(ways) * way, granted) != 0) return 1;
  const int threads = 256;
  auto blocks = [&](long long n) { return static_cast<unsigned>((n + threads - 1) / threads); };
  fill<<<blocks(max_floats), threads>>>(a, max_floats);
  fill<<<blocks(max_floats), threads>>>(b, max_floats);
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::printf(
      "{\n  \"name\": \"%s\",\n  \"l2_bytes\": %d,\n  \"runs\": %d,\n  \"threads_per_block\": %d,\n"
      "  \"set_aside_ways\": %d,\n  \"set_aside_bytes\": %zu,\n  \"configs\": [\n",
      prop.name, prop.l2CacheSize, runs, threads, ways, granted);
  const char* kernels[] = {"read", "copy", "write"};
  bool first = true;
  for (const char* kernel : kernels) {
    for (int mib : sizes_mib) {
      const long long floats = static_cast<long long>(mib) << 20 >> 2;
      const bool copy = kernel[0] == 'c';
      const long long n = copy ? floats / 2 : floats;
      auto launch = [&] {
        if (kernel[0] == 'r') l2cap_read<<<blocks(n), threads>>>(a, n, sink);
        if (copy) l2cap_copy<<<blocks(n), threads>>>(a, b, n);
        if (kernel[0] == 'w') l2cap_write<<<blocks(n), threads>>>(b, n);
      };
      launch();
      launch();
      CHECK(cudaGetLastError());
      std::vector<float> us;
      for (int r = 0; r < runs; ++r) {
        CHECK(cudaEventRecord(start));
        launch();
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        us.push_back(ms * 1000.0F);
      }
      std::sort(us.begin(), us.end());
      std::printf(
          "%s    {\"kernel\": \"%s\", \"footprint_mib\": %d, \"n\": %lld, \"us_median\": %.3f, \"us_min\": %.3f, "
          "\"us_max\": %.3f}",
          first ? "" : ",\n", kernel, mib, n, us[us.size() / 2], us.front(), us.back());
      first = false;
    }
  }
  std::printf("\n  ]\n}\n");
  return probe::set_aside(0, granted);
}
