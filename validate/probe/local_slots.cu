// Whose local memory is it: the thread's, or the thread slot's? The driver sizes a context's local memory as
// MAX_THREADS_PER_SM x SMs x local bytes a thread (NVIDIA on forums.developer.nvidia.com/t/local-memory-management/
// 289339), which suggests a block's threads use the local memory of the slots they run in, so that later waves write
// over the lines earlier waves wrote. The two readings differ by orders of magnitude in DRAM write-backs once a grid's
// local bytes exceed the L2 while its slots' do not.
//
// local16: each thread writes a float[16] (64 bytes, local: indexed by runtime values in rolled loops), reads it back
// twice and stores nothing unless the sum is impossible. 256 threads a block, n threads:
//   n = 2^18 (under one wave of 2048 threads an SM on 132 SMs), 2^22 (15.5 waves), 2^24 (62 waves).
// If local memory were the thread's, n = 2^22 would leave 256 MiB of dirty lines to pass through a 50 MiB L2; if the
// slot's, 132 x 2048 x 64 B = 16.5 MiB whatever n.
// Usage: local_slots. Run it under ncu for the counters (dram__bytes_write.sum); it prints the launches' times.
// Build: nvcc -O2 -arch=sm_90 local_slots.cu -o local_slots
#include <cuda_runtime.h>

#include <cstdio>

#include "cuda_check.h"

__global__ void local16(long long n, int shift, float* sink) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float a[16];
#pragma unroll 1
  for (int k = 0; k < 16; ++k) a[(k + shift) % 16] = static_cast<float>(i % 1000) + static_cast<float>(k);
  float acc = 0;
#pragma unroll 1
  for (int pass = 0; pass < 2; ++pass)
#pragma unroll 1
    for (int k = 0; k < 16; ++k) acc += a[(k * 5 + pass + shift) % 16];
  if (acc < 0.0F) sink[0] = acc;  // never: every value is positive
}

int main() {
  float* sink = nullptr;
  CHECK(cudaMalloc(&sink, sizeof(float)));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::printf("{\"runs\": [");
  const long long sizes[] = {1LL << 18, 1LL << 22, 1LL << 24};
  for (int s = 0; s < 3; ++s) {
    const long long n = sizes[s];
    CHECK(cudaEventRecord(start));
    local16<<<static_cast<unsigned>((n + 255) / 256), 256>>>(n, 0, sink);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("%s{\"kernel\": \"local16\", \"n\": %lld, \"ms\": %.4f}", s == 0 ? "" : ", ", n, ms);
  }
  std::printf("]}\n");
  return 0;
}
