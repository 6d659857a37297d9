// The suite's kernels (kernels/suite_kernels.cuh, written as traces/examples describe them), launched once each with
// the parameters in validate/sim_check/cases.txt (left column: the launch labels of the committed run), so `ncu`
// counters can be compared with `memhier simulate` on the same descriptions. Inputs are zero-filled (the counted
// traffic does not depend on values); random indices come from memhier's urand.
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "../../kernels/suite_kernels.cuh"  // the same kernels the validation suite times
#include "../probe/cuda_check.h"
#include "memhier/urand.h"

int main() {
  using namespace suite;
  const size_t big = size_t{1} << 30;  // 1 GiB each: stride 32 over 4 Mi floats reads 512 MiB
  float *a = nullptr, *b = nullptr;
  CHECK(cudaMalloc(&a, big));
  CHECK(cudaMalloc(&b, big));
  CHECK(cudaMemset(a, 0, big));
  const long long n = 1 << 22;
  for (int stride : {1, 2, 4, 8, 32}) {
    strided_copy<<<static_cast<unsigned>(n / 256), 256>>>(a, b, n, stride);
  }
  misaligned_copy<<<static_cast<unsigned>(n / 256), 256>>>(a, b, n, 1);
  vector_copy<float4>
      <<<static_cast<unsigned>(n / 4 / 256), 256>>>(reinterpret_cast<float4*>(a), reinterpret_cast<float4*>(b), n / 4);
  coalesced_copy<<<static_cast<unsigned>((1 << 24) / 256), 256>>>(a, b, 1 << 24);
  transpose_shared<32><<<dim3(2048 / 32, 2048 / 32), dim3(32, 8)>>>(a, b, 2048);
  transpose_shared<33><<<dim3(2048 / 32, 2048 / 32), dim3(32, 8)>>>(a, b, 2048);
  {
    const long long gn = 1 << 22, m = 1 << 24;
    std::vector<int> idx(static_cast<size_t>(gn));
    for (long long i = 0; i < gn; ++i)
      idx[static_cast<size_t>(i)] = static_cast<int>(memhier::urand(1, static_cast<unsigned long long>(i), 0, m));
    int* d_idx = nullptr;
    CHECK(cudaMalloc(&d_idx, idx.size() * sizeof(int)));
    CHECK(cudaMemcpy(d_idx, idx.data(), idx.size() * sizeof(int), cudaMemcpyHostToDevice));
    random_gather<<<static_cast<unsigned>(gn / 256), 256>>>(d_idx, a, b, gn);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(d_idx));
  }
  matmul_naive<<<dim3(512 / 16, 512 / 16), dim3(16, 16)>>>(a, a + (1 << 20), b, 512);
  CHECK(cudaDeviceSynchronize());
  std::printf("sim_check: all kernels ran\n");
  return 0;
}
