// What a __syncthreads() costs a warp on its critical path, alone and in the step of a shared-memory reduction.
//
// Kernels of 256-thread blocks run R iterations of:
//   barrier: __syncthreads() only;
//   step:    if (tid < 128) s[tid] += s[tid + 128]; __syncthreads();   (one step of reduction_shared, without halving)
// Thread 0 of each block reads clock64() around the loop: cycles per iteration for one block alone on its SM
// (132 blocks) and with 8 blocks sharing each SM (1056 blocks); the event-timed kernel gives the same per SM.
// Output: one JSON object on stdout. Build: nvcc -O2 -arch=sm_90 barrier.cu -o barrier
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda_check.h"

constexpr int kIterations = 4096;

__global__ void barrier_only(long long* cycles, float* sink) {
  const long long start = clock64();
  for (int r = 0; r < kIterations; ++r) __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - start;
  if (threadIdx.x == 1024) *sink = 0;  // never: blockDim.x is 256
}

__global__ void reduction_step(long long* cycles, float* sink) {
  __shared__ float s[256];
  const unsigned tid = threadIdx.x;
  s[tid] = static_cast<float>(tid);
  __syncthreads();
  const long long start = clock64();
  for (int r = 0; r < kIterations; ++r) {
    if (tid < 128) s[tid] += s[tid + 128];
    __syncthreads();
  }
  if (tid == 0) {
    cycles[blockIdx.x] = clock64() - start;
    sink[blockIdx.x] = s[0];
  }
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  const int sms = p.multiProcessorCount;
  long long* cycles = nullptr;
  float* sink = nullptr;
  CHECK(cudaMalloc(&cycles, sizeof(long long) * 8 * sms));
  CHECK(cudaMalloc(&sink, sizeof(float) * 8 * sms));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::printf("{\n  \"name\": \"%s\",\n  \"iterations\": %d,\n  \"runs\": [\n", p.name, kIterations);
  bool first = true;
  for (const char* kernel : {"barrier", "step"}) {
    for (int per_sm : {1, 8}) {
      const int blocks = per_sm * sms;
      std::vector<double> event_us, block_cycles;
      for (int run = 0; run < 11; ++run) {
        CHECK(cudaEventRecord(a));
        if (kernel[0] == 'b')
          barrier_only<<<blocks, 256>>>(cycles, sink);
        else
          reduction_step<<<blocks, 256>>>(cycles, sink);
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (run == 0) continue;  // warm-up
        event_us.push_back(ms * 1000.0);
        std::vector<long long> c(blocks);
        CHECK(cudaMemcpy(c.data(), cycles, sizeof(long long) * blocks, cudaMemcpyDeviceToHost));
        block_cycles.push_back(static_cast<double>(*std::max_element(c.begin(), c.end())));
      }
      std::printf(
          "%s    {\"kernel\": \"%s\", \"blocks_per_sm\": %d, \"event_us_median\": %.3f, "
          "\"max_block_cycles_median\": %.0f, \"cycles_per_iteration\": %.2f}",
          first ? "" : ",\n", kernel, per_sm, median(event_us), median(block_cycles),
          median(block_cycles) / kIterations);
      first = false;
    }
  }
  std::printf("\n  ]\n}\n");
  return 0;
}
