#pragma once
// The kernel of persisting_l2.cu and setaside_ways.cu (out[i] = stream[i] + hot[i % hot_n]: a stream read and written
// once, a hot buffer re-read) and their timing of it in pairs of launches.
#include <cuda_runtime.h>

#include <vector>

#include "cuda_check.h"

__global__ void persisting_l2_window(const float* stream, const float* hot, float* out, long long n, long long hot_n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = stream[i] + hot[i % hot_n];
}

// One warm-up pair of launches through `lc`, then `runs` timed pairs back to back, each launch timed alone with the
// events `ev`: the pairs' first and second launches' times (us) appended to `first` and `second`. 1 on a CUDA error
// (CHECK's message printed), else 0.
inline int time_pairs(const cudaLaunchConfig_t& lc, const float* stream, const float* hot, float* out, long long n,
                      long long hot_n, int runs, cudaEvent_t (&ev)[3], std::vector<double>& first,
                      std::vector<double>& second) {
  for (int r = 0; r <= runs; ++r) {
    CHECK(cudaEventRecord(ev[0], lc.stream));
    CHECK(cudaLaunchKernelEx(&lc, persisting_l2_window, stream, hot, out, n, hot_n));
    CHECK(cudaEventRecord(ev[1], lc.stream));
    CHECK(cudaLaunchKernelEx(&lc, persisting_l2_window, stream, hot, out, n, hot_n));
    CHECK(cudaEventRecord(ev[2], lc.stream));
    CHECK(cudaEventSynchronize(ev[2]));
    CHECK(cudaGetLastError());
    if (r == 0) continue;  // warm-up pair
    float a = 0, b = 0;
    CHECK(cudaEventElapsedTime(&a, ev[0], ev[1]));
    CHECK(cudaEventElapsedTime(&b, ev[1], ev[2]));
    first.push_back(a * 1000.0);
    second.push_back(b * 1000.0);
  }
  return 0;
}
