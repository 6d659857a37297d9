// Asks the CUDA driver for occupancy of real compiled kernels over many block sizes, dynamic shared-memory sizes and
// carveout preferences, and prints one JSON record per launch. tests/test_occupancy_driver.cpp replays the records
// through memhier's calculator on the CPU. Build: nvcc -O2 -arch=sm_90 occupancy_probe.cu
#include <cuda_runtime.h>

#include <cstdio>

#include "cuda_check.h"

// Kernels with different register and static shared-memory footprints. The register counts come from the compiler
// (cudaFuncGetAttributes), so the probe records whatever they are.
__global__ void light(float* out) { out[threadIdx.x] = 1.0f; }

__global__ void smem_static(float* out) {
  __shared__ float tile[4096];  // 16 KiB
  tile[threadIdx.x] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}

__global__ void __launch_bounds__(128) heavy(float* out, int n) {
  float acc[48];
#pragma unroll
  for (int i = 0; i < 48; ++i) acc[i] = out[(threadIdx.x * 48 + i) % n];
#pragma unroll
  for (int r = 0; r < 8; ++r) {
#pragma unroll
    for (int i = 0; i < 48; ++i) acc[i] = acc[i] * acc[(i + r + 1) % 48] + 1.0f;
  }
  float s = 0;
#pragma unroll
  for (int i = 0; i < 48; ++i) s += acc[i];
  out[threadIdx.x] = s;
}

extern __shared__ float dyn[];
__global__ void dynamic_smem(float* out) {
  dyn[threadIdx.x] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = dyn[(threadIdx.x + 1) % blockDim.x];
}

template <typename F>
int probe(const char* name, F* kernel, bool first) {
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  int max_dyn = static_cast<int>(227 * 1024 - attr.sharedSizeBytes);
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_dyn));
  const int carveouts[] = {-1, 0, 25, 50, 100};
  const int dyn_sizes[] = {0, 1000, 8192, 20000, 49152, 65536, 100000, 150000};
  for (int carveout : carveouts) {
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
    for (int threads = 32; threads <= attr.maxThreadsPerBlock; threads += 32) {
      for (int dyn_bytes : dyn_sizes) {
        if (dyn_bytes > max_dyn) continue;
        int blocks = -1;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dyn_bytes));
        std::printf(
            "%s{\"kernel\":\"%s\",\"regs\":%d,\"static_smem\":%zu,\"max_threads\":%d,\"carveout\":%d,"
            "\"threads\":%d,\"dynamic_smem\":%d,\"blocks\":%d}",
            first ? "" : ",\n", name, attr.numRegs, attr.sharedSizeBytes, attr.maxThreadsPerBlock, carveout, threads,
            dyn_bytes, blocks);
        first = false;
      }
    }
  }
  return 0;
}

int main() {
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("{\"device\":\"%s\",\"records\":[\n", p.name);
  if (probe("light", light, true) || probe("smem_static", smem_static, false) || probe("heavy", heavy, false) ||
      probe("dynamic_smem", dynamic_smem, false)) {
    return 1;
  }
  std::printf("\n]}\n");
  return 0;
}
