// DRAM fetch granularity: each thread reads one float at index i * stride from a buffer far larger than L2, so every
// touched 32-byte sector is isolated once stride >= 8 floats. ncu's dram__bytes_read.sum divided by the bytes of the
// touched sectors gives how much DRAM reads per missing sector (1x: 32 B fetch, 2x: 64 B, 4x: 128 B).
// Run under: ncu --clock-control none --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum ./a.out
#include <cuda_runtime.h>

#include <cstdio>

#include "cuda_check.h"

__global__ void strided_read(const float* __restrict__ in, float* out, long long n, int stride) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) {
    float v = in[i * stride];
    if (v == 12345.0f) out[0] = v;  // never true: keeps the load without writing traffic
  }
}

int main() {
  const long long kThreads = 1 << 22;  // 4 Mi reads: 128 MiB of touched sectors at most
  const int strides[] = {1, 2, 4, 8, 16, 32, 64};
  float* in = nullptr;
  float* out = nullptr;
  size_t bytes = static_cast<size_t>(kThreads) * 64 * sizeof(float);  // 1 GiB covers stride 64
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&out, sizeof(float)));
  CHECK(cudaMemset(in, 0, bytes));
  for (int s : strides) {
    CHECK(cudaMemset(in, 0, bytes));  // evicts the previous stride's lines from L2 (1 GiB >> 60 MiB)
    strided_read<<<static_cast<unsigned>(kThreads / 256), 256>>>(in, out, kThreads, s);
    CHECK(cudaDeviceSynchronize());
    long long sectors = s >= 8 ? kThreads : kThreads * s / 8;  // distinct 32-byte sectors touched
    std::printf("stride %d floats: touched sectors %lld (%lld bytes)\n", s, sectors, sectors * 32);
  }
  return 0;
}
