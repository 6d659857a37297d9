// How the time of persisting_l2.cu's kernel (out[i] = stream[i] + hot[i % hot_n], 64 MiB streamed in and out, a hot
// buffer read 4 times a launch) grows with the persisting set-aside, way by way: persisting_l2.cu found 10 of the
// H100's 16 ways (its persistingL2CacheMaxSize) 1.9x slower than 6 with a window on a 16 MiB buffer, with the same DRAM
// traffic, and under ncu (no line persisting) slower still. Here every set-aside from 0 ways to the maximum, in whole
// ways (l2CacheSize / 16, the H100's associativity), with no window (the set-aside unused) and with a window on a
// 16 MiB hot buffer (hitRatio 1, hitProp persisting, missProp streaming). Each configuration starts from
// cudaCtxResetPersistingL2Cache, runs one warm-up pair of launches, then `runs` timed pairs (CUDA events, each launch
// alone); the second launch of a pair is the steady state. Then a read-only and a write-only stream of the same 64 MiB
// (no window; each launch timed alone after a warm-up) at each set-aside.
// Usage: setaside_ways [runs] (default 15). Output: one JSON object on stdout.
// Build: nvcc -O2 -arch=sm_90 setaside_ways.cu -o setaside_ways
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"
#include "persisting_window.cuh"
#include "probe_args.cuh"

// `kinds`: the same stream read only (a warp's sum stored once) and written only, with no window.
__global__ void read_only(const float* stream, float* out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  float v = i < n ? stream[i] : 0.0F;
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xFFFFFFFFU, v, d);
  if ((threadIdx.x & 31U) == 0 && v == 12345.0F) out[i / 32] = v;  // never true: the loads stay, no stores
}

__global__ void write_only(float* out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(i);
}

int main(int argc, char** argv) {
  const int runs = probe::runs_arg(argc, argv, "setaside_ways", 15);
  if (runs == 0) return 2;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const long long n = 1LL << 24;
  const long long hot_n = 16LL << 20 >> 2;  // 16 MiB of floats
  float *stream = nullptr, *hot = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&stream, sizeof(float) * n));
  CHECK(cudaMalloc(&hot, sizeof(float) * hot_n));
  CHECK(cudaMalloc(&out, sizeof(float) * n));
  CHECK(cudaMemset(stream, 0, sizeof(float) * n));
  CHECK(cudaMemset(hot, 0, sizeof(float) * hot_n));
  const std::size_t way = static_cast<std::size_t>(prop.l2CacheSize) / 16;
  const std::size_t max_ways = static_cast<std::size_t>(prop.persistingL2CacheMaxSize) / way;
  cudaStream_t st;
  CHECK(cudaStreamCreate(&st));
  cudaEvent_t ev[3];
  for (cudaEvent_t& e : ev) CHECK(cudaEventCreate(&e));
  std::printf(
      "{\n  \"name\": \"%s\",\n  \"l2_bytes\": %d,\n  \"persisting_max_bytes\": %d,\n  \"runs\": %d,\n"
      "  \"stream_floats\": %lld,\n  \"hot_bytes\": %lld,\n  \"configs\": [\n",
      prop.name, prop.l2CacheSize, prop.persistingL2CacheMaxSize, runs, n, hot_n * 4);
  bool first_config = true;
  for (int window = 0; window <= 1; ++window) {
    for (std::size_t ways = 0; ways <= max_ways; ++ways) {
      std::size_t granted = 0;
      if (probe::set_aside(ways * way, granted) != 0) return 1;
      cudaLaunchAttribute attr{};
      const cudaLaunchConfig_t lc = window_launch(hot, hot_n, 1.0F, n, st, window != 0, attr);
      std::vector<double> first, second;
      if (time_pairs(lc, stream, hot, out, n, hot_n, runs, ev, first, second) != 0) return 1;
      std::sort(second.begin(), second.end());
      std::printf(
          "    %s{\"window\": %s, \"ways\": %zu, \"set_aside_granted_bytes\": %zu, \"launch2_us_median\": %.3f, "
          "\"launch2_us_min\": %.3f, \"launch2_us_max\": %.3f}\n",
          first_config ? "" : ",", window != 0 ? "true" : "false", ways, granted, second[second.size() / 2],
          second.front(), second.back());
      first_config = false;
    }
  }
  // Read-only and write-only streams of the same 64 MiB, no window, at each set-aside (the GPU's time: events).
  for (int kind = 0; kind <= 1; ++kind) {
    for (std::size_t ways = 0; ways <= max_ways; ++ways) {
      std::size_t granted = 0;
      if (probe::set_aside(ways * way, granted) != 0) return 1;
      std::vector<double> t;
      for (int r = 0; r <= runs; ++r) {
        CHECK(cudaEventRecord(ev[0], st));
        if (kind == 0) {
          read_only<<<static_cast<unsigned>(n / 256), 256, 0, st>>>(stream, out, n);
        } else {
          write_only<<<static_cast<unsigned>(n / 256), 256, 0, st>>>(out, n);
        }
        CHECK(cudaEventRecord(ev[1], st));
        CHECK(cudaEventSynchronize(ev[1]));
        CHECK(cudaGetLastError());
        if (r == 0) continue;
        float a = 0;
        CHECK(cudaEventElapsedTime(&a, ev[0], ev[1]));
        t.push_back(a * 1000.0);
      }
      std::sort(t.begin(), t.end());
      std::printf("    ,{\"kernel\": \"%s\", \"ways\": %zu, \"us_median\": %.3f, \"us_min\": %.3f, \"us_max\": %.3f}\n",
                  kind == 0 ? "read_only" : "write_only", ways, t[t.size() / 2], t.front(), t.back());
    }
  }
  std::printf("  ]\n}\n");
  std::size_t none = 0;
  return probe::set_aside(0, none);
}
