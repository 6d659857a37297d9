// Do the two SMs of a TPC keep reading the same A tiles at the same time through a long matrix multiply? The model
// merges a read miss with one its TPC sibling has in flight (model/sim/tpc_merge.h), and its siblings run in lockstep
// for the whole launch, so it merges every A-tile read of blocks 2j and 2j + 1: 25% of matmul_tiled's sectors at n=256
// and at n=1024. On the H100 the L2 read sectors say 30% at n=256 and 8% at n=1024
// (validate/results/h100-2026-11-27-suite).
//
// The suite's matmul_tiled and matmul_naive (kernels/suite_kernels.cuh), thread (0, 0) of each block also recording
// its SM (%smid) and %globaltimer (ns) at the block's start, at every `step`-th k step (matmul_tiled: after its loads
// and barrier; matmul_naive: every 16th k) and at the end. Each configuration runs 3 times, after a warm-up launch.
// Output: one JSON object on stdout (none with an argument: under ncu), each run's per-block SM and times. Build: nvcc -O2 -arch=sm_90 sibling_drift.cu
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "cuda_check.h"
#include "sm_clock.cuh"

// times: a row of `marks` a block: its start, its k-step marks, its end.
__global__ void drift_tiled(const float* A, const float* B, float* C, int n, unsigned* sm, unsigned long long* times,
                            int marks) {
  __shared__ float As[16][16], Bs[16][16];
  const int tx = threadIdx.x, ty = threadIdx.y, row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  const unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
  const bool lead = tx + ty == 0;
  unsigned long long* t = times + static_cast<size_t>(b) * marks;
  if (lead) {
    sm[b] = smid();
    t[0] = globaltimer();
  }
  float acc = 0;
  for (int s = 0; s < n / 16; ++s) {
    As[ty][tx] = A[row * n + s * 16 + tx];
    Bs[ty][tx] = B[(s * 16 + ty) * n + col];
    __syncthreads();
    if (lead) t[1 + s] = globaltimer();
#pragma unroll
    for (int k = 0; k < 16; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * n + col] = acc;
  if (lead) t[marks - 1] = globaltimer();
}

__global__ void drift_naive(const float* A, const float* B, float* C, int n, unsigned* sm, unsigned long long* times,
                            int marks) {
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  const unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
  const bool lead = threadIdx.x + threadIdx.y == 0;
  unsigned long long* t = times + static_cast<size_t>(b) * marks;
  if (lead) {
    sm[b] = smid();
    t[0] = globaltimer();
  }
  float acc = 0;
  for (int k0 = 0; k0 < n; k0 += 16) {
#pragma unroll
    for (int k = k0; k < k0 + 16; ++k) acc += A[row * n + k] * B[k * n + col];
    if (lead) t[1 + k0 / 16] = globaltimer();
  }
  C[row * n + col] = acc;
  if (lead) t[marks - 1] = globaltimer();
}

int main(int argc, char** /*argv*/) {
  // Under ncu (any argument): no output, which would go into ncu's CSV.
  std::FILE* out = argc > 1 ? std::fopen("/dev/null", "w") : stdout;
  if (out == nullptr) return 1;
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::fprintf(out, "{\n  \"name\": \"%s\",\n  \"sms\": %d,\n  \"configs\": [\n", p.name, p.multiProcessorCount);
  const char* kernels[] = {"drift_tiled", "drift_naive"};
  const int sizes[] = {256, 1024};
  bool first = true;
  for (int kernel = 0; kernel < 2; ++kernel)
    for (const int n : sizes) {
      const int blocks = (n / 16) * (n / 16), marks = n / 16 + 2;
      float *A = nullptr, *B = nullptr, *C = nullptr;
      unsigned* sm = nullptr;
      unsigned long long* times = nullptr;
      CHECK(cudaMalloc(&A, sizeof(float) * n * n));
      CHECK(cudaMalloc(&B, sizeof(float) * n * n));
      CHECK(cudaMalloc(&C, sizeof(float) * n * n));
      CHECK(cudaMemset(A, 0, sizeof(float) * n * n));
      CHECK(cudaMemset(B, 0, sizeof(float) * n * n));
      CHECK(cudaMalloc(&sm, sizeof(unsigned) * blocks));
      CHECK(cudaMalloc(&times, sizeof(unsigned long long) * blocks * marks));
      std::vector<unsigned> hsm(blocks);
      std::vector<unsigned long long> ht(static_cast<size_t>(blocks) * marks);
      std::fprintf(out, "%s    {\"kernel\": \"%s\", \"n\": %d, \"marks\": %d, \"runs\": [", first ? "" : ",\n",
                  kernels[kernel], n, marks);
      first = false;
      for (int run = -1; run < 3; ++run) {  // run -1: warm-up
        const dim3 grid(n / 16, n / 16), block(16, 16);
        if (kernel == 0)
          drift_tiled<<<grid, block>>>(A, B, C, n, sm, times, marks);
        else
          drift_naive<<<grid, block>>>(A, B, C, n, sm, times, marks);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        if (run < 0) continue;
        CHECK(cudaMemcpy(hsm.data(), sm, sizeof(unsigned) * blocks, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(ht.data(), times, sizeof(unsigned long long) * ht.size(), cudaMemcpyDeviceToHost));
        unsigned long long t0 = ht[0];
        for (int b = 0; b < blocks; ++b) t0 = ht[static_cast<size_t>(b) * marks] < t0 ? ht[static_cast<size_t>(b) * marks] : t0;
        std::fprintf(out, "%s{\"sm\": [", run == 0 ? "" : ", ");
        for (int b = 0; b < blocks; ++b) std::fprintf(out, "%s%u", b ? "," : "", hsm[b]);
        std::fprintf(out, "], \"times_ns\": [");
        for (size_t i = 0; i < ht.size(); ++i) std::fprintf(out, "%s%llu", i ? "," : "", ht[i] - t0);
        std::fprintf(out, "]}");
      }
      std::fprintf(out, "]}");
      CHECK(cudaFree(A));
      CHECK(cudaFree(B));
      CHECK(cudaFree(C));
      CHECK(cudaFree(sm));
      CHECK(cudaFree(times));
    }
  std::fprintf(out, "\n  ]\n}\n");
  return 0;
}
