// What decides how much a moderate persisting set-aside slows write-backs: setaside_rates.cu's float4 grid-stride
// streams slow 1.03-1.38x with 5 to 8 of the H100's 16 ways set aside, where one-float-a-thread kernels of one
// thread an element (l2_capacity.cu's copy, setaside_ways.cu's persisting-window kernel) slow 1.00-1.17x
// (validate/results/h100-2026-11-27c). Here the same streams (read 1 or 2 arrays of 64 MiB, write one) in three shapes:
// float4 grid-stride (16 blocks of 256 threads an SM, as setaside_rates.cu), float grid-stride (the same grid, a
// quarter of the bytes an access), and float one thread an element (64 Mi / 4 threads, blocks of 256), at 0, 6, 8 and
// 10 ways set aside, no window. Each configuration: two warm-up launches, then `runs` launches timed alone with CUDA
// events, no flush. The DRAM bytes are those of setaside_rates.cu's streams (the same arrays, read and written whole).
// The one-shot shape runs the grid-stride loop once a thread, which costs each thread a 64-bit division for its trip
// count: 68.2 us where the same copy written `if (i < n)` takes 54.9 from a clean L2
// (validate/results/h100-2026-11-27d).
// Usage: setaside_shapes [runs] (default 10). Output: one JSON object on stdout.
// Build: nvcc -O2 -arch=sm_90 -I../../model/include setaside_shapes.cu -o setaside_shapes
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"
#include "probe_util.cuh"

template <typename T>
__device__ T add(T a, T b);
template <>
__device__ float add(float a, float b) {
  return a + b;
}
template <>
__device__ float4 add(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

// out[i] = in[i] (+ in[stride + i] for K = 2), over n elements of T, grid-stride (a one-shot grid covers n at once).
template <typename T, int K>
__global__ void shapes_stream(const T* __restrict__ in, T* __restrict__ out, long long n, long long stride) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    T v = in[i];
    if (K == 2) v = add(v, in[stride + i]);
    out[i] = v;
  }
}

int main(int argc, char** argv) {
  const int runs = probe::runs_arg(argc, argv, "setaside_shapes", 10);
  if (runs == 0) return 2;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const long long floats = (64LL << 20) / 4;  // an array
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof(float) * floats * 2));
  CHECK(cudaMalloc(&out, sizeof(float) * floats));
  probe::fill<<<static_cast<unsigned>((floats * 2 + 255) / 256), 256>>>(in, floats * 2, 1000);
  probe::fill<<<static_cast<unsigned>((floats + 255) / 256), 256>>>(out, floats, 1000);
  CHECK(cudaDeviceSynchronize());
  const std::size_t way = static_cast<std::size_t>(prop.l2CacheSize) / 16;
  const auto max_ways = static_cast<int>(static_cast<std::size_t>(prop.persistingL2CacheMaxSize) / way);
  const unsigned resident = static_cast<unsigned>(prop.multiProcessorCount) * 16;
  std::printf("{\n  \"name\": \"%s\",\n  \"runs\": %d,\n  \"array_bytes\": %lld,\n  \"configs\": [\n", prop.name, runs,
              floats * 4);
  const char* shapes[] = {"float4_stride", "float_stride", "float_one_shot"};
  bool first = true;
  for (int ways : {0, 6, 8, max_ways}) {
    std::size_t granted = 0;
    if (probe::set_aside(static_cast<std::size_t>(ways) * way, granted) != 0) return 1;
    for (int reads = 1; reads <= 2; ++reads) {
      for (int shape = 0; shape < 3; ++shape) {
        auto launch = [&](unsigned long long /*seed*/) {
          const auto* in4 = reinterpret_cast<const float4*>(in);
          auto* out4 = reinterpret_cast<float4*>(out);
          const long long n4 = floats / 4;
          const auto one_shot = static_cast<unsigned>((floats + 255) / 256);
          if (shape == 0 && reads == 1) shapes_stream<float4, 1><<<resident, 256>>>(in4, out4, n4, n4);
          if (shape == 0 && reads == 2) shapes_stream<float4, 2><<<resident, 256>>>(in4, out4, n4, n4);
          if (shape == 1 && reads == 1) shapes_stream<float, 1><<<resident, 256>>>(in, out, floats, floats);
          if (shape == 1 && reads == 2) shapes_stream<float, 2><<<resident, 256>>>(in, out, floats, floats);
          if (shape == 2 && reads == 1) shapes_stream<float, 1><<<one_shot, 256>>>(in, out, floats, floats);
          if (shape == 2 && reads == 2) shapes_stream<float, 2><<<one_shot, 256>>>(in, out, floats, floats);
        };
        std::vector<float> us;
        unsigned long long seed = 0;
        if (probe::timed_runs(
                runs, seed, launch, us, [] {}, 2) != 0)
          return 1;  // two warm-ups
        std::printf(
            "%s    {\"shape\": \"%s\", \"reads\": %d, \"ways\": %d, \"us_median\": %.3f, \"us_min\": %.3f, "
            "\"us_max\": %.3f}",
            first ? "" : ",\n", shapes[shape], reads, ways, us[us.size() / 2], us.front(), us.back());
        first = false;
      }
    }
  }
  std::printf("\n  ]\n}\n");
  std::size_t none = 0;
  return probe::set_aside(0, none);
}
