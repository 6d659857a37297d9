// Which SM runs which block in the suite's multi-wave kernels: do blocks 2j and 2j + 1 share a TPC past the first
// wave? The spin-only blocks of block_placement.cu keep the pairs in every wave (64 x 64 blocks: 1,984 of 2,048);
// matmul_tiled n=1024 does not (sibling_drift.cu: 564 of 2,048, about the first wave's 528). The model merges a TPC
// pair's reads (model/sim/tpc_merge.h), so which kernels keep their pairs decides which merge.
//
// The suite's stencil_2d (n=2048), misaligned_copy (n=2^24, offset 1), transpose_naive (n=4096) and random_gather
// (n=2^22 over 2^18 floats), their bodies from kernels/suite_kernels.cuh, thread 0 of each block also recording its SM
// (%smid) and %globaltimer (ns) at the block's start and end. Each runs 3 times after a warm-up.
// Output: one JSON object on stdout (none with an argument: under ncu).
// Build: nvcc -O2 -arch=sm_90 -I../../model/include suite_placement.cu
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "../../kernels/suite_kernels.cuh"
#include "cuda_check.h"
#include "memhier/urand.h"
#include "sm_clock.cuh"

// A block's SM, start and end (ns), kept by thread 0.
struct Marks {
  unsigned* sm;
  unsigned long long* start;
  unsigned long long* end;
};

__device__ unsigned block_id() { return blockIdx.x + gridDim.x * blockIdx.y; }

__device__ bool first_thread() { return threadIdx.x + threadIdx.y == 0; }

__device__ void mark_start(Marks m) {
  if (first_thread()) {
    m.sm[block_id()] = smid();
    m.start[block_id()] = globaltimer();
  }
}

__device__ void mark_end(Marks m) {
  __syncthreads();
  if (first_thread()) m.end[block_id()] = globaltimer();
}

__global__ void sp_stencil_2d(const float* in, float* out, int n, Marks m) {
  mark_start(m);
  suite::stencil_2d_body(in, out, n);
  mark_end(m);
}

__global__ void sp_misaligned_copy(const float* x, float* y, long long n, int offset, Marks m) {
  mark_start(m);
  suite::misaligned_copy_body(x, y, n, offset);
  mark_end(m);
}

__global__ void sp_transpose_naive(const float* in, float* out, int n, Marks m) {
  mark_start(m);
  suite::transpose_naive_body(in, out, n);
  mark_end(m);
}

__global__ void sp_random_gather(const int* idx, const float* in, float* out, long long n, Marks m) {
  mark_start(m);
  suite::random_gather_body(idx, in, out, n);
  mark_end(m);
}

struct Case {
  const char* name;
  dim3 grid, block;
};

int main(int argc, char** /*argv*/) {
  std::FILE* out = argc > 1 ? std::fopen("/dev/null", "w") : stdout;
  if (out == nullptr) return 1;
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  const long long big = 1LL << 24, gather_n = 1LL << 22, table = 1LL << 18;
  float *a = nullptr, *b = nullptr;
  int* idx = nullptr;
  CHECK(cudaMalloc(&a, sizeof(float) * (big + 1)));  // misaligned_copy reads one float past n
  CHECK(cudaMalloc(&b, sizeof(float) * big));
  CHECK(cudaMalloc(&idx, sizeof(int) * gather_n));
  CHECK(cudaMemset(a, 0, sizeof(float) * (big + 1)));
  std::vector<int> h(gather_n);
  for (long long i = 0; i < gather_n; ++i)  // the suite's indices (seed 1)
    h[static_cast<std::size_t>(i)] = static_cast<int>(memhier::urand(1, static_cast<unsigned long long>(i), 0, table));
  CHECK(cudaMemcpy(idx, h.data(), sizeof(int) * gather_n, cudaMemcpyHostToDevice));
  const Case cases[] = {{"stencil_2d n=2048", dim3(128, 128), dim3(16, 16)},
                        {"misaligned_copy n=1<<24 offset=1", dim3(65536), dim3(256)},
                        {"transpose_naive n=4096", dim3(128, 128), dim3(32, 8)},
                        {"random_gather n=1<<22 m=1<<18", dim3(16384), dim3(256)}};
  std::fprintf(out, "{\n  \"name\": \"%s\",\n  \"sms\": %d,\n  \"configs\": [\n", p.name, p.multiProcessorCount);
  for (int c = 0; c < 4; ++c) {
    const unsigned blocks = cases[c].grid.x * cases[c].grid.y;
    Marks m{};
    CHECK(cudaMalloc(&m.sm, sizeof(unsigned) * blocks));
    CHECK(cudaMalloc(&m.start, sizeof(unsigned long long) * blocks));
    CHECK(cudaMalloc(&m.end, sizeof(unsigned long long) * blocks));
    std::vector<unsigned> hsm(blocks);
    std::vector<unsigned long long> hs(blocks), he(blocks);
    const int threads = static_cast<int>(cases[c].block.x * cases[c].block.y);
    int resident = 0;
    const void* kernels[] = {
        reinterpret_cast<const void*>(sp_stencil_2d), reinterpret_cast<const void*>(sp_misaligned_copy),
        reinterpret_cast<const void*>(sp_transpose_naive), reinterpret_cast<const void*>(sp_random_gather)};
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernels[c], threads, 0));
    std::fprintf(out, "%s    {\"name\": \"%s\", \"threads\": %d, \"resident_per_sm\": %d, \"runs\": [", c ? ",\n" : "",
                 cases[c].name, threads, resident);
    for (int run = -1; run < 3; ++run) {
      if (c == 0) sp_stencil_2d<<<cases[c].grid, cases[c].block>>>(a, b, 2048, m);
      if (c == 1) sp_misaligned_copy<<<cases[c].grid, cases[c].block>>>(a, b, big, 1, m);
      if (c == 2) sp_transpose_naive<<<cases[c].grid, cases[c].block>>>(a, b, 4096, m);
      if (c == 3) sp_random_gather<<<cases[c].grid, cases[c].block>>>(idx, a, b, gather_n, m);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      if (run < 0) continue;
      CHECK(cudaMemcpy(hsm.data(), m.sm, sizeof(unsigned) * blocks, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(hs.data(), m.start, sizeof(unsigned long long) * blocks, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(he.data(), m.end, sizeof(unsigned long long) * blocks, cudaMemcpyDeviceToHost));
      unsigned long long t0 = hs[0];
      for (unsigned long long t : hs) t0 = t < t0 ? t : t0;
      std::fprintf(out, "%s{\"sm\": [", run ? ", " : "");
      for (unsigned i = 0; i < blocks; ++i) std::fprintf(out, "%s%u", i ? "," : "", hsm[i]);
      std::fprintf(out, "], \"start_ns\": [");
      for (unsigned i = 0; i < blocks; ++i) std::fprintf(out, "%s%llu", i ? "," : "", hs[i] - t0);
      std::fprintf(out, "], \"end_ns\": [");
      for (unsigned i = 0; i < blocks; ++i) std::fprintf(out, "%s%llu", i ? "," : "", he[i] - t0);
      std::fprintf(out, "]}");
    }
    std::fprintf(out, "]}");
    CHECK(cudaFree(m.sm));
    CHECK(cudaFree(m.start));
    CHECK(cudaFree(m.end));
  }
  std::fprintf(out, "\n  ]\n}\n");
  return 0;
}
