// Partly written sectors: does the L2 fetch the rest of a sector from DRAM when warps write it a word at a time, and
// when? transpose_naive (each output sector written by 8 warps, a word each) reads 83.3 MB from DRAM on the H100 where
// its input is 67.1 MB (validate/results/h100-2026-11-24d). NVIDIA's US patent 9,110,809 describes an L2 that keeps
// partial writes with byte masks and issues fills for them once their number passes a threshold.
//
// pw_open: one block of 1024 threads an SM, each block writing its own region of 16384 sectors (512 KiB; 66 MiB in
// all) in groups of G sectors: word 0 of each sector of the group, a barrier, word 1, ..., word `words` - 1. A
// warp instruction writes word w of 32 consecutive sectors (4 bytes of each, 8 lines). So G x SMs sectors are partly
// written at once, from the group's first word to its last; with words = 8 every sector ends complete, with words = 1
// none does. pw_full: the same region, each warp instruction writing 4 whole sectors (one line): the reference.
// Under ncu (default cache control: every launch starts with a clean, empty L2) the DRAM bytes read and written give
// the fills; gpu__time_duration their cost.
// Usage: partial_writes. Build: nvcc -O2 -arch=sm_90 partial_writes.cu -o partial_writes
#include <cuda_runtime.h>

#include <cstdio>

#include "cuda_check.h"

constexpr int kRegionSectors = 16384;

__global__ void pw_open(float* buf, int group, int words) {
  float* region = buf + static_cast<long long>(blockIdx.x) * kRegionSectors * 8;
#pragma unroll 1
  for (int g = 0; g < kRegionSectors; g += group) {
#pragma unroll 1
    for (int w = 0; w < words; ++w) {
#pragma unroll 1
      for (int i = threadIdx.x; i < group; i += blockDim.x) region[(g + i) * 8 + w] = static_cast<float>(w + 1);
      __syncthreads();
    }
  }
}

__global__ void pw_full(float* buf) {
  float* region = buf + static_cast<long long>(blockIdx.x) * kRegionSectors * 8;
#pragma unroll 1
  for (int i = threadIdx.x; i < kRegionSectors * 8; i += blockDim.x) region[i] = 1.0F;
}

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  float* buf = nullptr;
  const long long floats = static_cast<long long>(sms) * kRegionSectors * 8;
  CHECK(cudaMalloc(&buf, sizeof(float) * floats));
  CHECK(cudaMemset(buf, 0, sizeof(float) * floats));
  CHECK(cudaDeviceSynchronize());
  const int groups[] = {32, 256, 1024, 2048, 4096, 8192, 16384};
  std::printf("{\"sms\": %d, \"region_sectors\": %d, \"runs\": [", sms, kRegionSectors);
  bool first = true;
  for (const int words : {8, 1})
    for (const int g : groups) {
      pw_open<<<sms, 1024>>>(buf, g, words);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      std::printf("%s{\"kernel\": \"pw_open\", \"group\": %d, \"words\": %d, \"open_sectors\": %lld}",
                  first ? "" : ", ", g, words, static_cast<long long>(g) * sms);
      first = false;
    }
  pw_full<<<sms, 1024>>>(buf);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf(", {\"kernel\": \"pw_full\"}]}\n");
  return 0;
}
