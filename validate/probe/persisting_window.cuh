#pragma once
// The kernel of persisting_l2.cu and setaside_ways.cu (out[i] = stream[i] + hot[i % hot_n]: a stream read and written
// once, a hot buffer re-read) and their timing of it in pairs of launches.
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "cuda_check.h"

__global__ void persisting_l2_window(const float* stream, const float* hot, float* out, long long n, long long hot_n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = stream[i] + hot[i % hot_n];
}

// A launch of persisting_l2_window over n floats, blocks of 256, on `st`; where `window`, with an access-policy window
// on hot's hot_n floats (hitRatio `hit_ratio`, hits persisting, misses streaming), held in `attr`.
inline cudaLaunchConfig_t window_launch(float* hot, long long hot_n, float hit_ratio, long long n, cudaStream_t st,
                                        bool window, cudaLaunchAttribute& attr) {
  attr = {};
  attr.id = cudaLaunchAttributeAccessPolicyWindow;
  attr.val.accessPolicyWindow.base_ptr = hot;
  attr.val.accessPolicyWindow.num_bytes = static_cast<std::size_t>(hot_n) * sizeof(float);
  attr.val.accessPolicyWindow.hitRatio = hit_ratio;
  attr.val.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.val.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaLaunchConfig_t lc{};
  lc.gridDim = dim3(static_cast<unsigned>(n / 256));
  lc.blockDim = dim3(256);
  lc.stream = st;
  lc.attrs = window ? &attr : nullptr;
  lc.numAttrs = window ? 1 : 0;
  return lc;
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
