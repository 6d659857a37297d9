// How fast DRAM traffic moves with a large persisting set-aside, by the share of it that is written: l2_capacity.cu
// found a copy and a write-only stream both moving their DRAM bytes at about 1.1 TB/s with 10 of the H100's 16 ways
// set aside and unused (validate/results/h100-2026-11-27b), where a read-only stream does not slow down. Here streams
// that read K arrays of 64 MiB and write one (K = 0, 1, 2, 4), and one that reads 2 and writes nothing, float4 a
// thread and grid-stride (blocks of 256 threads, 16 a SM: the DRAM, not the block scheduler, bounds them), at each
// set-aside from 0 ways to the most the device takes (cudaDeviceSetLimit in ways of l2CacheSize / 16), no window.
// Each configuration: two warm-up launches, then `runs` launches back to back, each timed alone with CUDA events (no
// flush: the steady state). Under ncu (runs = 1) the last launch of each configuration gives its DRAM bytes.
// Usage: setaside_rates [runs] (default 10). Output: one JSON object on stdout.
// Build: nvcc -O2 -arch=sm_90 -I../../model/include setaside_rates.cu -o setaside_rates
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"
#include "probe_util.cuh"

// out[i] = the sum of the K inputs' element i (K = 0: i); kWrite false: nothing stored unless the impossible happens.
template <int K, bool kWrite>
__global__ void rates_stream(const float4* __restrict__ in, float4* __restrict__ out, long long n, long long stride) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float4 v = make_float4(static_cast<float>(i), 0.0F, 0.0F, 0.0F);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const float4 a = in[k * stride + i];
      v.x += a.x;
      v.y += a.y;
      v.z += a.z;
      v.w += a.w;
    }
    if (kWrite || v.x < 0.0F) out[i] = v;  // the inputs are positive: a read-only stream stores nothing
  }
}

int main(int argc, char** argv) {
  const int runs = probe::runs_arg(argc, argv, "setaside_rates", 10);
  if (runs == 0) return 2;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const long long n = (64LL << 20) / 16;  // float4s an array
  float4 *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof(float4) * n * 4));
  CHECK(cudaMalloc(&out, sizeof(float4) * n));
  probe::fill<<<static_cast<unsigned>((n * 16 + 255) / 256), 256>>>(reinterpret_cast<float*>(in), n * 16, 1000);
  probe::fill<<<static_cast<unsigned>((n * 4 + 255) / 256), 256>>>(reinterpret_cast<float*>(out), n * 4, 1000);
  CHECK(cudaDeviceSynchronize());
  const std::size_t way = static_cast<std::size_t>(prop.l2CacheSize) / 16;
  const auto max_ways = static_cast<int>(static_cast<std::size_t>(prop.persistingL2CacheMaxSize) / way);
  const unsigned blocks = static_cast<unsigned>(prop.multiProcessorCount) * 16;
  struct Kind {
    const char* name;
    int reads;
    bool write;
  };
  const Kind kinds[] = {{"rates_w", 0, true},
                        {"rates_r1w", 1, true},
                        {"rates_r2w", 2, true},
                        {"rates_r4w", 4, true},
                        {"rates_r2", 2, false}};
  std::printf(
      "{\n  \"name\": \"%s\",\n  \"l2_bytes\": %d,\n  \"runs\": %d,\n  \"array_bytes\": %lld,\n  \"blocks\": %u,\n"
      "  \"configs\": [\n",
      prop.name, prop.l2CacheSize, runs, n * 16, blocks);
  std::vector<int> ways_list;
  for (int w = 0; w <= max_ways; ++w) ways_list.push_back(w);
  bool first = true;
  for (int ways : ways_list) {
    std::size_t granted = 0;
    if (probe::set_aside(static_cast<std::size_t>(ways) * way, granted) != 0) return 1;
    for (const Kind& kind : kinds) {
      auto launch = [&](unsigned long long /*seed*/) {
        switch (kind.reads * 2 + (kind.write ? 1 : 0)) {
          case 1:
            rates_stream<0, true><<<blocks, 256>>>(in, out, n, n);
            break;
          case 3:
            rates_stream<1, true><<<blocks, 256>>>(in, out, n, n);
            break;
          case 5:
            rates_stream<2, true><<<blocks, 256>>>(in, out, n, n);
            break;
          case 9:
            rates_stream<4, true><<<blocks, 256>>>(in, out, n, n);
            break;
          default:
            rates_stream<2, false><<<blocks, 256>>>(in, out, n, n);
            break;
        }
      };
      std::vector<float> us;
      unsigned long long seed = 0;
      if (probe::timed_runs(
              runs, seed, launch, us, [] {}, 2) != 0)
        return 1;  // two warm-ups
      std::printf(
          "%s    {\"kernel\": \"%s\", \"reads\": %d, \"write\": %s, \"ways\": %d, \"set_aside_bytes\": %zu, "
          "\"us_median\": %.3f, \"us_min\": %.3f, \"us_max\": %.3f}",
          first ? "" : ",\n", kind.name, kind.reads, kind.write ? "true" : "false", ways, granted, us[us.size() / 2],
          us.front(), us.back());
      first = false;
    }
  }
  std::printf("\n  ]\n}\n");
  std::size_t none = 0;
  return probe::set_aside(0, none);
}
