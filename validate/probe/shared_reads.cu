// Do two SMs reading the same lines at the same time each cost the L2 a lookup? On the H100 suite the warm 256 x 256
// matrix multiplies reach the L2 with fewer read sectors than their L1s miss (matmul_tiled: 2.8% L1 hits of 262,144
// sectors, 183,641 L2 read sectors), as if the misses of blocks on neighbouring SMs were merged on the way.
//
// 264 blocks of 256 threads (two a SM) each read a 64 KiB chunk once with plain loads (L1-cached), 4 floats a
// thread a step, and write one float a thread. Which chunk a block reads:
//   distinct   block b reads chunk b (no two blocks share a line)
//   tpc_pair   blocks 2j and 2j+1 read chunk j (the H100 places consecutive blocks on the two SMs of one TPC:
//              validate/probe/block_placement.cu)
//   far_pair   blocks j and j + 132 read chunk j (co-resident on one SM by the same placement, so the second reads
//              what the first brought into that SM's L1, if it is still there)
//   spread     blocks j and j + 66 read chunk j (other TPCs, at the same time)
// Each pattern runs 3 times; under ncu (run_placement.sh) the L1 and L2 sector counts of every launch are read.
// Then tpc_pair again with the odd blocks starting `delay` SM cycles after the even ones (thread 0 spins, the block
// waits at a barrier), for delays of 0 to 8000 cycles: how long a sibling's request stays mergeable.
// Output: one JSON object on stdout (event times). Build: nvcc -O2 -arch=sm_90 shared_reads.cu -o shared_reads
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda_check.h"

constexpr int kBlocks = 264;
constexpr int kThreads = 256;
constexpr int kChunkFloats = 16384;  // 64 KiB

__global__ void read_chunks(const float4* in, float* out, int pattern, long long delay) {
  const int b = static_cast<int>(blockIdx.x);
  if (delay > 0 && b % 2 == 1) {
    if (threadIdx.x == 0) {
      const long long t0 = clock64();
      while (clock64() - t0 < delay) {
      }
    }
    __syncthreads();
  }
  int chunk = b;
  if (pattern == 1) chunk = b / 2;
  if (pattern == 2) chunk = b % (kBlocks / 2);
  if (pattern == 3) chunk = b / 132 * 132 + b % 132 % 66;  // j and j + 66 within each run of 132
  const float4* p = in + static_cast<long long>(chunk) * (kChunkFloats / 4);
  float sum = 0;
  for (int i = static_cast<int>(threadIdx.x); i < kChunkFloats / 4; i += kThreads) {
    const float4 v = p[i];
    sum += v.x + v.y + v.z + v.w;
  }
  out[b * kThreads + static_cast<int>(threadIdx.x)] = sum;
}

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  float4* in = nullptr;
  float* out = nullptr;
  const std::size_t floats = static_cast<std::size_t>(kBlocks) * kChunkFloats;
  CHECK(cudaMalloc(&in, floats * sizeof(float)));
  CHECK(cudaMalloc(&out, kBlocks * kThreads * sizeof(float)));
  std::vector<float> h(floats, 1.0f);
  CHECK(cudaMemcpy(in, h.data(), floats * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t a, e;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&e));
  const char* names[] = {"distinct", "tpc_pair", "far_pair", "spread"};
  std::printf(
      "{\n  \"name\": \"%s\",\n  \"blocks\": %d,\n  \"threads\": %d,\n  \"chunk_bytes\": %d,\n"
      "  \"patterns\": [",
      prop.name, kBlocks, kThreads, kChunkFloats * 4);
  for (int pattern = 0; pattern < 4; ++pattern) {
    std::vector<float> us;
    for (int r = 0; r < 3; ++r) {
      CHECK(cudaEventRecord(a));
      read_chunks<<<kBlocks, kThreads>>>(in, out, pattern, 0);
      CHECK(cudaEventRecord(e));
      CHECK(cudaEventSynchronize(e));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, e));
      us.push_back(ms * 1000.0f);
    }
    std::printf("%s\n    {\"pattern\": \"%s\", \"event_us\": [%.2f, %.2f, %.2f]}", pattern == 0 ? "" : ",",
                names[pattern], us[0], us[1], us[2]);
  }
  std::printf("\n  ],\n  \"delays\": [");
  const long long delays[] = {0, 125, 250, 500, 1000, 2000, 4000, 8000};
  for (std::size_t i = 0; i < sizeof(delays) / sizeof(delays[0]); ++i) {
    for (int r = 0; r < 3; ++r) read_chunks<<<kBlocks, kThreads>>>(in, out, 1, delays[i]);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("%s%lld", i == 0 ? "" : ", ", delays[i]);
  }
  std::printf("]\n}\n");
  return 0;
}
