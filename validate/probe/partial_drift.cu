// Partly written sectors without barriers: how many does the L2 fill from DRAM when the 8 words of each sector come
// from 8 different warps that run freely, as transpose_naive's do? partial_writes.cu orders the words with barriers;
// here the warps of a block drift apart, so a sector stays partly written from its first word to its last.
//
// pd_drift: one block of 1024 threads an SM, each block writing its own 16384 sectors (512 KiB; 66 MiB in all) in
// groups of G sectors. Warp w writes word w % 8 of the sectors of quarter w / 8 of each group, group after group, with
// no barrier. pd_lockstep: the same stores with a barrier after each group (a sector's words from 8 warps, but no
// warp more than a group ahead). Under ncu (default cache control) the DRAM bytes read and written give the fills.
// Usage: partial_drift (bash validate/probe/run_partial_writes.sh partial_drift runs it under ncu). Build: nvcc -O2
// -arch=sm_90 partial_drift.cu -o partial_drift
#include <cuda_runtime.h>

#include <cstdio>

#include "cuda_check.h"

constexpr int kRegionSectors = 16384;

template <bool kBarrier>
__device__ void write_groups(float* buf, int group) {
  float* region = buf + static_cast<long long>(blockIdx.x) * kRegionSectors * 8;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int word = warp % 8, quarter = warp / 8, per_quarter = group / 4;
#pragma unroll 1
  for (int g = 0; g < kRegionSectors; g += group) {
#pragma unroll 1
    for (int i = lane; i < per_quarter; i += 32)
      region[(g + quarter * per_quarter + i) * 8 + word] = static_cast<float>(word + 1);
    if (kBarrier) __syncthreads();
  }
}

__global__ void pd_drift(float* buf, int group) { write_groups<false>(buf, group); }
__global__ void pd_lockstep(float* buf, int group) { write_groups<true>(buf, group); }

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  float* buf = nullptr;
  const long long floats = static_cast<long long>(sms) * kRegionSectors * 8;
  CHECK(cudaMalloc(&buf, sizeof(float) * floats));
  CHECK(cudaMemset(buf, 0, sizeof(float) * floats));
  CHECK(cudaDeviceSynchronize());
  const int groups[] = {128, 256, 1024, 4096, 16384};
  std::printf("{\"sms\": %d, \"region_sectors\": %d, \"runs\": [", sms, kRegionSectors);
  bool first = true;
  for (const bool barrier : {false, true})
    for (const int g : groups) {
      if (barrier)
        pd_lockstep<<<sms, 1024>>>(buf, g);
      else
        pd_drift<<<sms, 1024>>>(buf, g);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      std::printf("%s{\"kernel\": \"%s\", \"group\": %d}", first ? "" : ", ", barrier ? "pd_lockstep" : "pd_drift", g);
      first = false;
    }
  std::printf("]}\n");
  return 0;
}
