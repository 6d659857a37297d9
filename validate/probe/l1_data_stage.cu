// When a global load or store takes more L1 data-stage passes than its lines (ncu
// l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read for loads, _cmd_write for stores): the simulator gives a request
// one pass a line it touches (fewer where the lines' words share the banks), so a coalesced one-line load one pass; on
// the H100 the suite's copies take about 0.2 more a load and 0.1 more a store, and a 32-line gather from DRAM about 13
// in all (the simulator 17). Which of these decides the extra passes: whether the line is in L1 (hit), in L2 or in
// DRAM; whether the load allocates in L1 (default) or not (.cg); how many lines a request touches (float or float4
// lanes, gathers); stores in the same loop (a copy, a read-modify-write of the same line, stores alone); how fast the
// SM issues (a clock64 spin of 0, 200 or 1000 cycles after each request); how many warps share the SM (eight 256-thread
// blocks or one 32-thread block an SM).
//
// Each warp makes `requests` requests. load: request i reads the 32 x width floats after request i - 1 (a fresh line
// each, or `width` lines for float4 lanes); reread: every request reads the warp's first line (L1 hits after the
// first); copy: reads as load, writes the same offsets of a second buffer; store: writes as copy does, reads nothing;
// rmw: a[p] += 1 on the load's lines; gather: lane l of request i reads one float of line mix(warp, i, l) of a table of
// `table_lines` lines.
// Data sources, set up by the launches before each counted one (the program runs under ncu with cache control off and
// application replay, so each pass sees the same sequence):
//   dram  fresh regions of 640 MiB buffers after a 192 MiB read of another buffer has pushed everything out of L2
//   l2    the same launch run twice back to back; the second is counted (its lines in L2, none in L1: the L1 starts
//         every launch empty)
//   l1    reread, and a gather over a 16 KiB table: hits after each warp's first requests
// Output (stdout): one JSON object listing the launches in order (the warm-ups too), each with its kernel, source and
// settings; ncu's CSV gives each launch's counters in the same order.
// Usage: l1_data_stage. Build: nvcc -O2 -arch=sm_90 -I../../model/include l1_data_stage.cu -o l1_data_stage
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "probe_util.cuh"

namespace {

__device__ __forceinline__ void spin(long long cycles) {
  asm volatile("" ::: "memory");  // requests stay in program order around the spin
  if (cycles == 0) return;
  const long long start = clock64();
  while (clock64() - start < cycles) {
    asm volatile("" ::: "memory");
  }
}

template <int kWidth>
struct Vec;
template <>
struct Vec<1> {
  using T = float;
  static __device__ float sum(float v) { return v; }
  static __device__ float one() { return 1.0F; }
};
template <>
struct Vec<4> {
  using T = float4;
  static __device__ float sum(float4 v) { return v.x + v.y + v.z + v.w; }
  static __device__ float4 one() { return make_float4(1.0F, 1.0F, 1.0F, 1.0F); }
};

template <int kWidth, bool kCg>
__device__ __forceinline__ typename Vec<kWidth>::T load(const typename Vec<kWidth>::T* p) {
  if constexpr (kCg) return __ldcg(p);
  return *p;  // a plain load (LDG.E), as the suite's kernels make
}

// Request i of a warp: its lanes' elements at base + i * stride (stride 32: a fresh line or `kWidth` lines a request;
// 0: the same one every time).
template <int kWidth>
__device__ __forceinline__ long long element(long long requests, long long i, long long stride) {
  const long long warp = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
  return warp * requests * 32 + i * stride + threadIdx.x % 32;
}

template <int kWidth, bool kCg>
__global__ void ds_load(const typename Vec<kWidth>::T* a, long long requests, long long stride, long long cycles,
                        float* sink) {
  float sum = 0.0F;
  for (long long i = 0; i < requests; ++i) {
    sum += Vec<kWidth>::sum(load<kWidth, kCg>(a + element<kWidth>(requests, i, stride)));
    spin(cycles);
  }
  if (sum < 0.0F) sink[0] = sum;  // the data are positive: no store
}

template <int kWidth>
__global__ void ds_copy(const typename Vec<kWidth>::T* a, typename Vec<kWidth>::T* b, long long requests,
                        long long cycles) {
  for (long long i = 0; i < requests; ++i) {
    const long long e = element<kWidth>(requests, i, 32);
    b[e] = a[e];
    spin(cycles);
  }
}

template <int kWidth>
__global__ void ds_store(typename Vec<kWidth>::T* b, long long requests, long long cycles) {
  for (long long i = 0; i < requests; ++i) {
    b[element<kWidth>(requests, i, 32)] = Vec<kWidth>::one();
    spin(cycles);
  }
}

__global__ void ds_rmw(float* a, long long requests, long long cycles) {
  for (long long i = 0; i < requests; ++i) {
    const long long e = element<1>(requests, i, 32);
    a[e] = a[e] + 1.0F;
    spin(cycles);
  }
}

// SplitMix64 of (warp, request, lane): the gather's line.
__device__ __forceinline__ unsigned long long mix(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27U)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31U);
}

template <bool kCg>
__global__ void ds_gather(const float* a, long long requests, long long table_lines, long long cycles, float* sink) {
  const unsigned long long warp = (blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  float sum = 0.0F;
  for (long long i = 0; i < requests; ++i) {
    const unsigned long long line = mix((warp << 32U) ^ (static_cast<unsigned long long>(i) << 5U) ^ lane) %
                                    static_cast<unsigned long long>(table_lines);
    sum += load<1, kCg>(a + line * 32 + lane % 8);
    spin(cycles);
  }
  if (sum < 0.0F) sink[0] = sum;
}

struct Config {
  std::string kernel;  // load, reread, copy, store, rmw, gather
  std::string source;  // dram, l2, l1
  int width;           // floats a lane
  bool cg;
  long long cycles;
  int blocks_per_sm, threads;
  long long requests;     // a warp
  long long table_lines;  // gather only
};

}  // namespace

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long long a_floats = 640LL << 20 >> 2, e_floats = 192LL << 20 >> 2;
  float *a = nullptr, *b = nullptr, *e = nullptr, *sink = nullptr;
  CHECK(cudaMalloc(&a, a_floats * sizeof(float)));
  CHECK(cudaMalloc(&b, a_floats * sizeof(float)));
  CHECK(cudaMalloc(&e, e_floats * sizeof(float)));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  probe::fill<<<sms * 8, 256>>>(a, a_floats, 1);
  probe::fill<<<sms * 8, 256>>>(b, a_floats, 1);
  probe::fill<<<sms * 8, 256>>>(e, e_floats, 1);
  CHECK(cudaDeviceSynchronize());

  // Footprints: a dram launch reads (and writes) at most 69 MiB of fresh lines, an l2 one about 13 MiB each way.
  std::vector<Config> configs;
  auto add = [&](const char* kernel, const char* source, int width, bool cg, long long cycles, bool full) {
    const bool dram = source[0] == 'd';
    long long requests = full ? (dram ? 64 : 12) : (dram ? 1024 : 512);
    configs.push_back({kernel, source, width, cg, cycles, full ? 8 : 1, full ? 256 : 32, requests / width, 0});
  };
  for (const char* source : {"dram", "l2"}) {
    for (bool cg : {false, true})
      for (int width : {1, 4})
        for (long long cycles : {0LL, 1000LL}) add("load", source, width, cg, cycles, true);
    for (int width : {1, 4}) add("load", source, width, false, 0, false);
    for (int width : {1, 4})
      for (long long cycles : {0LL, 200LL, 1000LL}) add("copy", source, width, false, cycles, true);
    for (int width : {1, 4}) add("copy", source, width, false, 0, false);
    for (long long cycles : {0LL, 1000LL}) add("store", source, 1, false, cycles, true);
    for (long long cycles : {0LL, 1000LL}) add("rmw", source, 1, false, cycles, true);
  }
  for (long long cycles : {0LL, 200LL})
    for (bool full : {true, false})
      configs.push_back({"reread", "l1", 1, false, cycles, full ? 8 : 1, full ? 256 : 32, 64, 0});
  for (bool cg : {false, true}) {
    configs.push_back({"gather", "dram", 1, cg, 0, 8, 256, 16, a_floats / 32});
    configs.push_back({"gather", "l2", 1, cg, 0, 8, 256, 16, 100000});
  }
  configs.push_back({"gather", "l1", 1, false, 0, 8, 256, 16, 128});

  std::printf("{\n  \"sms\": %d,\n  \"launches\": [\n", sms);
  long long next_fresh = 0;  // the dram launches' regions, in floats (the same in both buffers)
  bool first = true;
  for (const Config& c : configs) {
    const unsigned blocks = static_cast<unsigned>(sms * c.blocks_per_sm);
    const long long warps = static_cast<long long>(blocks) * c.threads / 32;
    const long long floats = warps * c.requests * 32 * c.width;
    long long offset = 0;
    if (c.source == "dram" && c.kernel != "gather") {
      if (next_fresh + floats > a_floats) next_fresh = 0;
      offset = next_fresh;
      next_fresh += floats;
    }
    float* ra = a + offset;
    float* rb = b + offset;
    auto* a4 = reinterpret_cast<float4*>(ra);
    auto* b4 = reinterpret_cast<float4*>(rb);
    const int runs = c.source == "l2" ? 2 : 1;
    for (int run = 0; run < runs; ++run) {
      if (c.source == "dram" && run == 0) probe::evict_l2<<<sms * 8, 256>>>(e, e_floats, sink);
      cudaEvent_t start, stop;
      CHECK(cudaEventCreate(&start));
      CHECK(cudaEventCreate(&stop));
      CHECK(cudaEventRecord(start));
      const bool w4 = c.width == 4;
      if (c.kernel == "load" || c.kernel == "reread") {
        const long long stride = c.kernel == "reread" ? 0 : 32;
        if (w4 && c.cg) ds_load<4, true><<<blocks, c.threads>>>(a4, c.requests, stride, c.cycles, sink);
        if (w4 && !c.cg) ds_load<4, false><<<blocks, c.threads>>>(a4, c.requests, stride, c.cycles, sink);
        if (!w4 && c.cg) ds_load<1, true><<<blocks, c.threads>>>(ra, c.requests, stride, c.cycles, sink);
        if (!w4 && !c.cg) ds_load<1, false><<<blocks, c.threads>>>(ra, c.requests, stride, c.cycles, sink);
      } else if (c.kernel == "copy") {
        if (w4) ds_copy<4><<<blocks, c.threads>>>(a4, b4, c.requests, c.cycles);
        if (!w4) ds_copy<1><<<blocks, c.threads>>>(ra, rb, c.requests, c.cycles);
      } else if (c.kernel == "store") {
        ds_store<1><<<blocks, c.threads>>>(rb, c.requests, c.cycles);
      } else if (c.kernel == "rmw") {
        ds_rmw<<<blocks, c.threads>>>(ra, c.requests, c.cycles);
      } else if (c.cg) {
        ds_gather<true><<<blocks, c.threads>>>(a, c.requests, c.table_lines, c.cycles, sink);
      } else {
        ds_gather<false><<<blocks, c.threads>>>(a, c.requests, c.table_lines, c.cycles, sink);
      }
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      CHECK(cudaGetLastError());
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, stop));
      std::printf(
          "%s    {\"kernel\": \"%s\", \"source\": \"%s\", \"width\": %d, \"cg\": %s, \"spin_cycles\": %lld, "
          "\"blocks\": %u, \"threads\": %d, \"requests_per_warp\": %lld, \"table_lines\": %lld, \"warm_up\": %s, "
          "\"us\": %.3f}",
          first ? "" : ",\n", c.kernel.c_str(), c.source.c_str(), c.width, c.cg ? "true" : "false", c.cycles, blocks,
          c.threads, c.requests, c.table_lines, run + 1 < runs ? "true" : "false", ms * 1000.0F);
      first = false;
      CHECK(cudaEventDestroy(start));
      CHECK(cudaEventDestroy(stop));
    }
  }
  std::printf("\n  ]\n}\n");
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(e));
  CHECK(cudaFree(sink));
  return 0;
}
