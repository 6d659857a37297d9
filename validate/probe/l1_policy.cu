// The L1's sets and replacement, apart from how warps interleave: what makes its capacity edge gradual
// (validate/results/h100-2026-11-24e: 1024 threads an SM reading W KiB four times hit 69.6% at 240 KiB, 41.7% at 288,
// 9.3% at 320, where LRU over 248 KiB gives 75 then 0).
//
// l1policy: one block an SM, `warps` warps, each reading its own share of the block's `lines` 128-byte lines `passes`
// times in a row (warp w the lines w, w + warps, ...; line l at byte l x stride x 128 of the block's region), a float a
// lane, the sum stored only if impossible.
//   - one warp, stride 1, W from 128 to 512 KiB: a strictly cyclic order with nothing to reorder it. A gradual edge
//   here
//     is the replacement's (or the set index's), not the warps'.
//   - one warp, 1024 or 512 lines (128 or 64 KiB, well under the L1) at a stride of 2 to 64 lines: if the set index
//     were the line number's low bits, a stride of 4 lines would crowd the 4 sets' lines into one and lose the hits.
//   - one warp, 8 passes: a steady state for a policy that is not LRU.
//   - 32 warps, 240 to 320 KiB: the earlier sweep's edge again, in the same call.
// Usage: l1_policy (run it under ncu for l1tex hits). Build: nvcc -O2 -arch=sm_90 l1_policy.cu -o l1_policy
#include <cuda_runtime.h>

#include <cstdio>

#include "cuda_check.h"

__global__ void l1policy(const float* buf, long long region_floats, int lines, int stride, int passes, float* sink) {
  const float* region = buf + static_cast<long long>(blockIdx.x) * region_floats;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  float acc = 0;
#pragma unroll 1
  for (int p = 0; p < passes; ++p)
#pragma unroll 1
    for (int l = warp; l < lines; l += warps) acc += region[static_cast<long long>(l) * stride * 32 + lane];
  if (acc < 0.0F) sink[0] = acc;  // never: the buffer holds ones
}

__global__ void fill(float* a, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) a[i] = 1.0F;
}

struct Config {
  int warps, lines, stride, passes;
};

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  Config configs[64];
  int n = 0;
  for (int kib : {128, 192, 224, 232, 240, 248, 256, 264, 272, 288, 304, 320, 352, 384, 448, 512})
    configs[n++] = {1, kib * 8, 1, 4};
  for (int kib : {256, 288, 320}) configs[n++] = {1, kib * 8, 1, 8};
  for (int stride : {2, 4, 8, 16, 32, 64}) configs[n++] = {1, 1024, stride, 4};
  for (int stride : {2, 4, 8}) configs[n++] = {1, 512, stride, 4};
  for (int kib : {240, 256, 288, 320}) configs[n++] = {32, kib * 8, 1, 4};
  long long region_floats = 0;  // the largest region a block reads, in floats
  for (int i = 0; i < n; ++i) {
    const long long floats = static_cast<long long>(configs[i].lines) * configs[i].stride * 32;
    if (floats > region_floats) region_floats = floats;
  }
  const long long total = region_floats * sms;
  float *buf = nullptr, *sink = nullptr;
  CHECK(cudaMalloc(&buf, sizeof(float) * total));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  fill<<<static_cast<unsigned>((total + 255) / 256), 256>>>(buf, total);
  CHECK(cudaFuncSetAttribute(l1policy, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  CHECK(cudaDeviceSynchronize());
  std::printf("{\"sms\": %d, \"runs\": [", sms);
  for (int i = 0; i < n; ++i) {
    const Config& c = configs[i];
    l1policy<<<sms, 32 * c.warps>>>(buf, region_floats, c.lines, c.stride, c.passes, sink);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("%s\n {\"warps\": %d, \"lines\": %d, \"stride\": %d, \"passes\": %d}", i == 0 ? "" : ",", c.warps,
                c.lines, c.stride, c.passes);
  }
  std::printf("]}\n");
  return 0;
}
