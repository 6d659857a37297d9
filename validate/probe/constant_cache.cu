// What a divergent __constant__ load costs, by how many lines and words it reads and how they map to the constant
// cache: the source of the constant-cache geometry and miss cost in archs/h100.yaml.
//
// 4096 blocks of 256 threads (8 resident per SM, as the suite's constant cases) each run k_count loads of
//   line(lane, k) = ((lane % d) * stride + (k / 16) * phase) % table_lines       (64-byte lines, 16 floats)
//   word(lane, k) = (k + (lane / d) % w) % 16
//   sum += c_table[line * 16 + word]
// so a warp's load reads d distinct lines (stride lines apart) and w distinct words in each, and every 16 loads the
// lines move on by `phase`. Thread 0 of each block records its SM and clock64() around the loop; an SM's busy span
// (last end - first start, one clock) over the loads its warps made gives cycles per warp load, which, divided by the
// distinct addresses a load reads (d x w), gives cycles per serialized access.
// Patterns run 4096 blocks of 256 threads unless they name fewer: 132 blocks (one an SM: 8 warps, no other block's
// loads in between), of 32 or 128 threads (one warp an SM, or one a sub-partition).
// Output: one JSON object on stdout. Usage: constant_cache [RUNS] (default 6, the first a warm-up;
// run_constant_cache.sh passes 2 under ncu). Build: nvcc -O2 -arch=sm_90 constant_cache.cu -o constant_cache
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "cuda_check.h"
#include "sm_clock.cuh"

constexpr int kTableFloats = 16384;  // 64 KB, all of constant bank 3's user space
__constant__ float c_table[kTableFloats];

struct Pattern {
  const char* name;
  int d, stride, phase, table_lines, w;
  int blocks = 4096;
  int threads = 256;
};

__global__ void constant_pattern(float* out, int k_count, Pattern p, long long* start, long long* stop, unsigned* sm) {
  const unsigned lane = threadIdx.x % 32;
  const int lane_line = static_cast<int>(lane) % p.d * p.stride;
  const int lane_word = static_cast<int>(lane) / p.d % p.w;
  __syncthreads();
  const long long t0 = clock64();
  float sum = 0;
  for (int k = 0; k < k_count; ++k) {
    const int line = (lane_line + k / 16 * p.phase) & (p.table_lines - 1);  // powers of two: masks, not divisions
    sum += c_table[line * 16 + ((k + lane_word) & 15)];
  }
  __syncthreads();
  const long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  if (threadIdx.x == 0) {
    start[blockIdx.x] = t0;
    stop[blockIdx.x] = t1;
    sm[blockIdx.x] = smid();
  }
}

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 6;
  if (runs < 2) {
    std::fprintf(stderr, "constant_cache: RUNS must be at least 2 (a warm-up and a measured run), got '%s'\n", argv[1]);
    return 2;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  constexpr int kBlocks = 4096, kThreads = 256, kLoads = 64;
  std::vector<float> table(kTableFloats);
  for (int i = 0; i < kTableFloats; ++i) table[i] = 1.0F + static_cast<float>(i % 97) / 97.0F;
  CHECK(cudaMemcpyToSymbol(c_table, table.data(), sizeof(float) * kTableFloats));
  float* out = nullptr;
  long long *start = nullptr, *stop = nullptr;
  unsigned* sm = nullptr;
  CHECK(cudaMalloc(&out, sizeof(float) * kBlocks * kThreads));
  CHECK(cudaMalloc(&start, sizeof(long long) * kBlocks));
  CHECK(cudaMalloc(&stop, sizeof(long long) * kBlocks));
  CHECK(cudaMalloc(&sm, sizeof(unsigned) * kBlocks));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));

  const std::vector<Pattern> patterns{
      {"broadcast", 1, 0, 0, 64, 1},
      {"lines8_stride1", 8, 1, 0, 64, 1},
      {"lines16_stride1", 16, 1, 0, 64, 1},
      {"lines32_stride1", 32, 1, 0, 64, 1},  // suite constant_distinct distinct=32
      {"words16_line1", 1, 0, 0, 64, 16},    // 16 addresses in one line
      {"words2_lines16", 16, 1, 0, 64, 2},   // 32 addresses in 16 lines
      {"lines16_stride2", 16, 2, 0, 64, 1},  // 2 KB span, every other line
      {"lines32_stride2", 32, 2, 0, 64, 1},  // 4 KB span, 32 lines
      {"lines16_stride4", 16, 4, 0, 64, 1},
      {"lines8_stride4", 8, 4, 0, 64, 1},
      {"lines8_stride8", 8, 8, 0, 64, 1},
      {"lines4_stride8", 4, 8, 0, 64, 1},
      {"lines8_stride16", 8, 16, 0, 256, 1},
      {"lines4_stride16", 4, 16, 0, 256, 1},
      {"lines2_stride32", 2, 32, 0, 256, 1},
      {"lines32_stride1_phase1", 32, 1, 1, 64, 1},          // a 2 KB window sliding a line every 16 loads
      {"lines32_stride1_phase32", 32, 1, 32, 64, 1},        // two 2 KB halves alternating every 16 loads
      {"lines16_stride1_phase16", 16, 1, 16, 64, 1},        // two 1 KB quarters alternating
      {"lines32_stride2_phase1", 32, 2, 1, 64, 1},          // suite constant_divergent
      {"lines32_stride1_phase32_t256", 32, 1, 32, 256, 1},  // 2 KB windows over 16 KB, none reused within 64 loads
      // Replacement and miss handling (8 sets of 4 ways by line mod 8, if the stride results are read right): 5, 6
      // and 16 lines of one set, 6 lines a set over 2 and 4 sets, and the one-set and four-set cases with one block
      // (8 warps) an SM instead of eight.
      {"lines5_stride8", 5, 8, 0, 64, 1},
      {"lines6_stride8", 6, 8, 0, 64, 1},
      {"lines16_stride8", 16, 8, 0, 256, 1},
      {"lines12_stride4", 12, 4, 0, 64, 1},
      {"lines24_stride2", 24, 2, 0, 64, 1},
      {"lines8_stride8_b132", 8, 8, 0, 64, 1, 132},
      {"lines32_stride2_b132", 32, 2, 0, 64, 1, 132},
      {"lines32_stride1_b132", 32, 1, 0, 64, 1, 132},
      // One warp an SM (no other warp's requests in between), then one warp per SM sub-partition (4 an SM).
      {"lines32_stride1_w1", 32, 1, 0, 64, 1, 132, 32},
      {"lines4_stride8_w1", 4, 8, 0, 64, 1, 132, 32},
      {"lines5_stride8_w1", 5, 8, 0, 64, 1, 132, 32},
      {"lines8_stride8_w1", 8, 8, 0, 64, 1, 132, 32},
      {"lines32_stride2_w1", 32, 2, 0, 64, 1, 132, 32},
      {"lines8_stride8_w4", 8, 8, 0, 64, 1, 132, 128},
      {"lines32_stride2_w4", 32, 2, 0, 64, 1, 132, 128},
      {"lines32_stride1_w4", 32, 1, 0, 64, 1, 132, 128},
  };
  std::printf(
      "{\n  \"name\": \"%s\",\n  \"blocks\": %d,\n  \"threads\": %d,\n  \"loads_per_thread\": %d,\n"
      "  \"patterns\": [\n",
      prop.name, kBlocks, kThreads, kLoads);
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const Pattern& p = patterns[i];
    std::vector<double> per_load, event_us;
    for (int run = 0; run < runs; ++run) {
      CHECK(cudaEventRecord(a));
      constant_pattern<<<p.blocks, p.threads>>>(out, kLoads, p, start, stop, sm);
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      CHECK(cudaGetLastError());
      if (run == 0) continue;  // warm-up
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      event_us.push_back(ms * 1000.0);
      const auto n = static_cast<std::size_t>(p.blocks);
      std::vector<long long> t0(n), t1(n);
      std::vector<unsigned> s(n);
      CHECK(cudaMemcpy(t0.data(), start, sizeof(long long) * n, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(t1.data(), stop, sizeof(long long) * n, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(s.data(), sm, sizeof(unsigned) * n, cudaMemcpyDeviceToHost));
      std::map<unsigned, std::pair<long long, long long>> span;
      std::map<unsigned, int> blocks_on;
      for (int blk = 0; blk < p.blocks; ++blk) {
        auto [it, fresh] = span.try_emplace(s[blk], t0[blk], t1[blk]);
        if (!fresh) it->second = {std::min(it->second.first, t0[blk]), std::max(it->second.second, t1[blk])};
        ++blocks_on[s[blk]];
      }
      double sum = 0;
      for (const auto& [id, se] : span)
        sum += static_cast<double>(se.second - se.first) /
               (blocks_on[id] * (p.threads / 32) * static_cast<double>(kLoads));
      per_load.push_back(sum / static_cast<double>(span.size()));
    }
    std::sort(per_load.begin(), per_load.end());
    std::sort(event_us.begin(), event_us.end());
    const double med = per_load[per_load.size() / 2];
    std::printf(
        "    {\"pattern\": \"%s\", \"lines\": %d, \"stride_lines\": %d, \"phase_lines\": %d, \"table_lines\": %d, "
        "\"words_per_line\": %d, \"blocks\": %d, \"threads\": %d, \"event_us_median\": %.3f, "
        "\"sm_cycles_per_warp_load\": %.2f, "
        "\"cycles_per_address\": %.3f}%s\n",
        p.name, p.d, p.stride, p.phase, p.table_lines, p.w, p.blocks, p.threads, event_us[event_us.size() / 2], med,
        med / (p.d * p.w), i + 1 < patterns.size() ? "," : "");
  }
  std::printf("  ]\n}\n");
  return 0;
}
