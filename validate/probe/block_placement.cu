// Which SM runs which thread block: the placement the simulator's block scheduler has to reproduce, since blocks
// sharing an SM share its L1 (a tile one block loads is an L1 hit for another block of that SM).
//
// Each configuration launches `blocks` blocks of `threads` threads (dynamic shared memory to set the resident
// blocks a SM holds) whose thread 0 records its SM (%smid), its start and end (%globaltimer, ns) and spins `spin` SM
// cycles in between, so the later waves' blocks go where earlier ones finished. Each configuration runs 3 times
// (the placement may differ from run to run). Output: one JSON object on stdout, each run's per-block SMs and start
// offsets (ns from the launch's first block) in block order. Build: nvcc -O2 -arch=sm_90 block_placement.cu
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda_check.h"
#include "sm_clock.cuh"

__global__ void place(unsigned* sm, unsigned long long* start, unsigned long long* stop, long long spin) {
  extern __shared__ float pad[];
  if (threadIdx.x + threadIdx.y == 0) {
    const unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
    start[b] = globaltimer();
    sm[b] = smid();
    const long long t0 = clock64();
    while (clock64() - t0 < spin) {
    }
    pad[0] = static_cast<float>(b);  // keeps the shared allocation
    stop[b] = globaltimer();
  }
}

struct Config {
  const char* name;
  unsigned gx, gy, bx, by;
  int shared_bytes;  // dynamic shared memory a block (at least the 16 bytes the kernel writes): fewer resident blocks
  long long spin;
};

int main() {
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  const unsigned sms = static_cast<unsigned>(p.multiProcessorCount);
  const Config configs[] = {
      {"grid16x16_block16x16", 16, 16, 16, 16, 0, 2000},   // matmul n=256's launch
      {"grid1056_block256", 8 * sms, 1, 256, 1, 0, 2000},  // one full wave at 8 a SM
      {"grid132_block256", sms, 1, 256, 1, 0, 2000},
      {"grid264_block256", 2 * sms, 1, 256, 1, 0, 2000},
      {"grid4096_block256_spin", 4096, 1, 256, 1, 0, 20000},               // several waves
      {"grid1024_block256_smem100k", 1024, 1, 256, 1, 100 * 1024, 20000},  // 2 a SM: waves of 264
      {"grid64x64_block16x16", 64, 64, 16, 16, 0, 2000},                   // matmul n=1024's launch
  };
  std::printf("{\n  \"name\": \"%s\",\n  \"sms\": %u,\n  \"configs\": [\n", p.name, sms);
  for (std::size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); ++c) {
    const Config& k = configs[c];
    const unsigned n = k.gx * k.gy;
    unsigned* sm = nullptr;
    unsigned long long *start = nullptr, *stop = nullptr;
    CHECK(cudaMalloc(&sm, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&start, n * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&stop, n * sizeof(unsigned long long)));
    if (k.shared_bytes > 48 * 1024)
      CHECK(cudaFuncSetAttribute(place, cudaFuncAttributeMaxDynamicSharedMemorySize, k.shared_bytes));
    int resident = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, place, static_cast<int>(k.bx * k.by),
                                                        std::max(k.shared_bytes, 16)));
    std::printf(
        "%s    {\"name\": \"%s\", \"grid\": [%u, %u], \"block\": [%u, %u], \"shared_bytes\": %d, "
        "\"spin\": %lld, "
        "\"resident_per_sm\": %d, \"runs\": [",
        c == 0 ? "" : ",\n", k.name, k.gx, k.gy, k.bx, k.by, k.shared_bytes, k.spin, resident);
    for (int r = 0; r < 3; ++r) {
      place<<<dim3(k.gx, k.gy), dim3(k.bx, k.by), std::max(k.shared_bytes, 16)>>>(sm, start, stop, k.spin);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      std::vector<unsigned> hs(n);
      std::vector<unsigned long long> ht(n);
      CHECK(cudaMemcpy(hs.data(), sm, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(ht.data(), start, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      const unsigned long long t0 = *std::min_element(ht.begin(), ht.end());
      std::printf("%s\n      {\"sm\": [", r == 0 ? "" : ",");
      for (unsigned b = 0; b < n; ++b) std::printf("%s%u", b == 0 ? "" : ",", hs[b]);
      std::printf("], \"start_ns\": [");
      for (unsigned b = 0; b < n; ++b) std::printf("%s%llu", b == 0 ? "" : ",", ht[b] - t0);
      std::printf("]}");
    }
    std::printf("]}");
    cudaFree(sm);
    cudaFree(start);
    cudaFree(stop);
  }
  std::printf("\n  ]\n}\n");
  return 0;
}
