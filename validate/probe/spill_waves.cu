// How the suite's register_spill kernel uses L1, L2 and DRAM by the number of waves it runs: its 64 local floats a
// thread are written, then read back twice, by 8 blocks of 256 threads an SM, and its local memory belongs to thread
// slots (validate/results/h100-2026-11-24e), so each later wave writes the lines the wave before left in L2. The
// simulator writes 54% more of the suite case's (n = 2^20, 3.9 waves) data back to DRAM than the H100; it starts a
// wave when the whole previous one is done, where the GPU starts a block on an SM as soon as one there ends.
// The suite's register_spill itself (kernels/suite_kernels.cuh), launched with n = 1, 2, 3, 4, 8 and 16 waves'
// threads (132 SMs x 2048) and 2^20; each launch once after a 192 MiB read has emptied the L2, so ncu runs with cache
// control off and application replay (spill_waves_ncu.csv). A one-wave launch goes first as a warm-up: the program's
// first launch of the kernel ran slower (104 us against 95) and kept 14% of its local loads in L1 against the same
// launch's 20% made second (a first call without it). Output (stdout): the launches in order, warm-up marked, with
// their CUDA-event times.
// Usage: spill_waves. Build: nvcc -O2 -arch=sm_90 -I../../kernels -I../../model/include spill_waves.cu -o spill_waves
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "cuda_check.h"
#include "probe_util.cuh"
#include "suite_kernels.cuh"

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long long wave = static_cast<long long>(sms) * 2048;
  std::vector<long long> sizes{wave};  // a warm-up: the program's first launch of the kernel (see the header)
  for (long long w : {1LL, 2LL, 3LL, 4LL, 8LL, 16LL}) sizes.push_back(w * wave);
  sizes.push_back(1LL << 20);
  const long long most = 16 * wave, e_floats = 192LL << 20 >> 2;
  float *in = nullptr, *out = nullptr, *e = nullptr, *sink = nullptr;
  CHECK(cudaMalloc(&in, most * sizeof(float)));
  CHECK(cudaMalloc(&out, most * sizeof(float)));
  CHECK(cudaMalloc(&e, e_floats * sizeof(float)));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  probe::fill<<<sms * 8, 256>>>(in, most, 7);
  probe::fill<<<sms * 8, 256>>>(e, e_floats, 1);
  CHECK(cudaDeviceSynchronize());
  std::printf("{\n  \"sms\": %d,\n  \"launches\": [\n", sms);
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const long long n = sizes[k];
    probe::evict_l2<<<sms * 8, 256>>>(e, e_floats, sink);
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start));
    suite::register_spill<<<static_cast<unsigned>((n + 255) / 256), 256>>>(in, out, n);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("%s    {\"n\": %lld, \"waves\": %.3f, \"warm_up\": %s, \"us\": %.3f}", k == 0 ? "" : ",\n", n,
                static_cast<double>(n) / static_cast<double>(wave), k == 0 ? "true" : "false", ms * 1000.0F);
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
  }
  std::printf("\n  ]\n}\n");
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  CHECK(cudaFree(e));
  CHECK(cudaFree(sink));
  return 0;
}
