// The L1's capacity and replacement: how its hit rate falls as a cyclic working set outgrows it.
//
// l1sweep: one block of 1024 threads an SM (132 blocks), each reading its own W-byte region `passes` times in a row,
// a warp a 128-byte line at a time (warp w reads lines w, w + 32, ...), the sum stored only if impossible. The
// kernel has no shared memory and asks for the smallest carveout, so the L1 gets all of the unified memory the driver
// gives it. Under LRU the hit rate of 4 passes is 3/4 while W fits and 0 once it does not; under random replacement it
// falls gradually, about as capacity / W.
// W: 32 to 512 KiB. Usage: l1_sweep (run it under ncu for l1tex hits).
// Build: nvcc -O2 -arch=sm_90 l1_sweep.cu -o l1_sweep
#include <cuda_runtime.h>

#include <cstdio>

#include "cuda_check.h"

__global__ void l1sweep(const float* buf, int lines, int passes, float* sink) {
  const float* region = buf + static_cast<long long>(blockIdx.x) * lines * 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  float acc = 0;
#pragma unroll 1
  for (int p = 0; p < passes; ++p)
#pragma unroll 1
    for (int l = warp; l < lines; l += warps) acc += region[l * 32 + lane];
  if (acc < 0.0F) sink[0] = acc;  // never: the buffer holds ones
}

__global__ void fill(float* a, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) a[i] = 1.0F;
}

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const int kib[] = {32, 64, 96, 128, 160, 192, 208, 224, 240, 256, 288, 320, 384, 512};
  const long long max_floats = static_cast<long long>(sms) * 512 * 1024 / 4;
  float *buf = nullptr, *sink = nullptr;
  CHECK(cudaMalloc(&buf, sizeof(float) * max_floats));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  fill<<<static_cast<unsigned>((max_floats + 255) / 256), 256>>>(buf, max_floats);
  CHECK(cudaFuncSetAttribute(l1sweep, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  CHECK(cudaDeviceSynchronize());
  std::printf("{\"sms\": %d, \"runs\": [", sms);
  for (int i = 0; i < static_cast<int>(sizeof(kib) / sizeof(kib[0])); ++i) {
    const int lines = kib[i] * 1024 / 128;
    l1sweep<<<sms, 1024>>>(buf, lines, 4, sink);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("%s{\"kib\": %d, \"lines\": %d, \"passes\": 4}", i == 0 ? "" : ", ", kib[i], lines);
  }
  std::printf("]}\n");
  return 0;
}
