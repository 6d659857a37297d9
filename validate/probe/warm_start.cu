// What the L2's state at a launch's start costs a stream, by the stream's shape. The model predicts a copy of one
// float a thread, launched back to back with nothing set aside, 8-18% faster than the H100 runs it
// (validate/results/h100-2026-11-27b and -27c: l2_capacity.cu's copy at 40-96 MiB, setaside_shapes.cu's 128 MiB copy
// 73.5 us), where the same copy started from a flushed L2 (the suite's coalesced_copy, 55.9 us) and the grid-stride
// streams launched back to back are within 6%. Here five kernels over 64 MiB arrays, each timed alone with CUDA events
// after one of three starts:
// - warm: right after the same kernel (the previous timed launch), as a loop of launches runs it;
// - clean: after reading 4 L2s' worth of another buffer through L2 (ld.global.cg): the L2 holds clean lines only;
// - dirty: after writing 64 MiB of another buffer: the L2 holds that buffer's last dirty lines.
// Kernels: copy, one float a thread (65536 blocks of 256); copy, float grid-stride (16 blocks of 256 an SM); copy, one
// float4 a thread; write only, one float a thread; read only, one float a thread.
// Usage: warm_start [runs] (default 10). Output: one JSON object on stdout.
// Build: nvcc -O2 -arch=sm_90 -I. -I../../model/include warm_start.cu -o warm_start
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda_check.h"
#include "probe_util.cuh"

// One element a thread, as the suite's kernels and l2_capacity.cu's: `if (i < n)`, no loop (a grid-stride loop, run
// once a thread, costs each thread a 64-bit division for its trip count: 20-30% of these kernels' time).
template <typename T>
__global__ void ws_copy(const T* __restrict__ in, T* __restrict__ out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i];
}

__global__ void ws_write(float* __restrict__ out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(i & 1023);
}

__global__ void ws_read(const float* __restrict__ in, float* sink, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n && in[i] < 0.0F) sink[0] = in[i];  // never: the inputs are positive
}

// out[i] = in[i], grid-stride.
__global__ void ws_copy_stride(const float* __restrict__ in, float* __restrict__ out, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

// The dirty start's writes (not one of the kernels ncu is asked about).
__global__ void prep_write(float* __restrict__ out, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    out[i] = 2.0F;
}

int main(int argc, char** argv) {
  const int runs = probe::runs_arg(argc, argv, "warm_start", 10);
  if (runs == 0) return 2;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const long long floats = (64LL << 20) / 4;  // an array
  const long long flush_floats = 4LL * prop.l2CacheSize / 4;
  float *in = nullptr, *out = nullptr, *scratch = nullptr, *flush = nullptr, *sink = nullptr;
  CHECK(cudaMalloc(&in, sizeof(float) * floats));
  CHECK(cudaMalloc(&out, sizeof(float) * floats));
  CHECK(cudaMalloc(&scratch, sizeof(float) * floats));
  CHECK(cudaMalloc(&flush, sizeof(float) * flush_floats));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  probe::fill<<<4096, 256>>>(in, floats, 1000);
  probe::fill<<<4096, 256>>>(out, floats, 1000);
  probe::fill<<<4096, 256>>>(flush, flush_floats, 1000);
  for (int w = 0; w < 50; ++w) probe::evict_l2<<<4096, 256>>>(flush, flush_floats, sink);  // clocks up first
  CHECK(cudaDeviceSynchronize());
  const auto one_a_thread = static_cast<unsigned>((floats + 255) / 256);
  const unsigned grid_stride = static_cast<unsigned>(prop.multiProcessorCount) * 16;
  const char* kernels[] = {"copy_float_one", "copy_float_stride", "copy_float4_one", "write_float_one",
                           "read_float_one"};
  const char* starts[] = {"warm", "clean", "dirty"};
  auto launch = [&](int k) {
    switch (k) {
      case 0:
        ws_copy<float><<<one_a_thread, 256>>>(in, out, floats);
        break;
      case 1:
        ws_copy_stride<<<grid_stride, 256>>>(in, out, floats);
        break;
      case 2:
        ws_copy<float4><<<one_a_thread / 4, 256>>>(reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out),
                                                   floats / 4);
        break;
      case 3:
        ws_write<<<one_a_thread, 256>>>(out, floats);
        break;
      default:
        ws_read<<<one_a_thread, 256>>>(in, sink, floats);
        break;
    }
  };
  std::printf("{\n  \"name\": \"%s\",\n  \"runs\": %d,\n  \"array_bytes\": %lld,\n  \"configs\": [\n", prop.name, runs,
              floats * 4);
  bool first = true;
  for (int k = 0; k < 5; ++k) {
    for (int s = 0; s < 3; ++s) {
      auto before = [&] {
        if (s == 1) probe::evict_l2<<<4096, 256>>>(flush, flush_floats, sink);
        if (s == 2) prep_write<<<4096, 256>>>(scratch, floats);
      };
      std::vector<float> us;
      unsigned long long seed = 0;
      auto timed = [&](unsigned long long /*seed*/) { launch(k); };
      if (probe::timed_runs(runs, seed, timed, us, before, 2) != 0) return 1;  // two warm-ups
      std::printf(
          "%s    {\"kernel\": \"%s\", \"start\": \"%s\", \"us_median\": %.3f, \"us_min\": %.3f, \"us_max\": %.3f}",
          first ? "" : ",\n", kernels[k], starts[s], us[us.size() / 2], us.front(), us.back());
      first = false;
    }
  }
  std::printf("\n  ]\n}\n");
  return 0;
}
