// How much of a reused buffer an L2 persisting access-policy window keeps, by set-aside size: the source of the
// persisting-line rules in model/cache/set_cache.cpp.
//
// The suite's persisting_l2_window kernel (out[i] = stream[i] + hot[i % hot_n]; 64 MiB streamed in and out, a hot
// buffer read 4 times a launch) runs with a window on `hot` (hitRatio h, hitProp persisting, missProp streaming) after
// cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, S), for several S, hot sizes and hit ratios, and once with no
// window. Each configuration starts from cudaCtxResetPersistingL2Cache, runs one warm-up pair of launches, then `runs`
// timed pairs back to back (no flush: the steady state the suite's warm case measures); each launch is timed with
// CUDA events on its own. The time a launch saves against the no-window run, at the DRAM bandwidth the no-window run
// reaches, says how many hot bytes stayed in L2.
// Usage: persisting_l2 [runs] (default 15; 2 under ncu). Output: one JSON object on stdout.
// Build: nvcc -O2 -arch=sm_90 persisting_l2.cu -o persisting_l2
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"
#include "persisting_window.cuh"
#include "probe_args.cuh"

struct Config {
  const char* name;
  double set_aside_mib;  // 0 with window = false: no window
  double hot_mib;
  float hit_ratio;
  bool window;
};

int main(int argc, char** argv) {
  const int runs = probe::runs_arg(argc, argv, "persisting_l2", 15);
  if (runs == 0) return 2;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const long long n = 1LL << 24;
  const long long max_hot = 32LL << 20 >> 2;  // floats
  float *stream = nullptr, *hot = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&stream, sizeof(float) * n));
  CHECK(cudaMalloc(&hot, sizeof(float) * max_hot));
  CHECK(cudaMalloc(&out, sizeof(float) * n));
  CHECK(cudaMemset(stream, 0, sizeof(float) * n));
  CHECK(cudaMemset(hot, 0, sizeof(float) * max_hot));
  const double max_mib = static_cast<double>(prop.persistingL2CacheMaxSize) / (1 << 20);
  std::vector<Config> configs{
      {"no_window", 0, 16, 1.0F, false},
      {"s4_hot16", 4, 16, 1.0F, true},
      {"s8_hot16", 8, 16, 1.0F, true},
      {"s12_hot16", 12, 16, 1.0F, true},
      {"s14_hot16", 14, 16, 1.0F, true},
      {"s16_hot16", 16, 16, 1.0F, true},  // the suite's case
      {"s20_hot16", 20, 16, 1.0F, true},
      {"s24_hot16", 24, 16, 1.0F, true},
      {"s32_hot16", 32, 16, 1.0F, true},
      {"smax_hot16", max_mib, 16, 1.0F, true},
      {"s8_hot16_ratio0.5", 8, 16, 0.5F, true},
      {"no_window_hot12", 0, 12, 1.0F, false},
      {"s12_hot12", 12, 12, 1.0F, true},
      {"s12_hot10", 12, 10, 1.0F, true},
      {"s6_hot8", 6, 8, 1.0F, true},
      {"no_window_hot8", 0, 8, 1.0F, false},
      {"s8_hot8", 8, 8, 1.0F, true},
      {"s16_hot8", 16, 8, 1.0F, true},
      {"no_window_hot32", 0, 32, 1.0F, false},
      {"s16_hot32", 16, 32, 1.0F, true},
      {"smax_hot32", max_mib, 32, 1.0F, true},
  };
  cudaStream_t st;
  CHECK(cudaStreamCreate(&st));
  cudaEvent_t ev[3];
  for (cudaEvent_t& e : ev) CHECK(cudaEventCreate(&e));
  std::printf(
      "{\n  \"name\": \"%s\",\n  \"l2_bytes\": %d,\n  \"persisting_max_bytes\": %d,\n  \"runs\": %d,\n"
      "  \"stream_floats\": %lld,\n  \"configs\": [\n",
      prop.name, prop.l2CacheSize, prop.persistingL2CacheMaxSize, runs, n);
  for (std::size_t c = 0; c < configs.size(); ++c) {
    const Config& cfg = configs[c];
    const long long hot_n = static_cast<long long>(cfg.hot_mib * (1 << 20)) / 4;
    // The driver refuses more than persistingL2CacheMaxSize (31.25 MiB on the H100, not the 75 % the guide names).
    const auto set_aside = std::min(static_cast<std::size_t>(cfg.set_aside_mib * (1 << 20)),
                                    static_cast<std::size_t>(prop.persistingL2CacheMaxSize));
    std::size_t granted = 0;
    if (probe::set_aside(set_aside, granted) != 0) return 1;
    cudaLaunchAttribute attr{};
    const cudaLaunchConfig_t lc = window_launch(hot, hot_n, cfg.hit_ratio, n, st, cfg.window, attr);
    std::vector<double> first, second;
    if (time_pairs(lc, stream, hot, out, n, hot_n, runs, ev, first, second) != 0) return 1;
    std::sort(first.begin(), first.end());
    std::sort(second.begin(), second.end());
    std::printf(
        "    {\"config\": \"%s\", \"window\": %s, \"set_aside_requested_bytes\": %zu, "
        "\"set_aside_granted_bytes\": %zu, \"hot_bytes\": %lld, \"hit_ratio\": %.2f, "
        "\"launch1_us_median\": %.3f, \"launch2_us_median\": %.3f, \"launch2_us_min\": %.3f, "
        "\"launch2_us_max\": %.3f}%s\n",
        cfg.name, cfg.window ? "true" : "false", set_aside, granted, hot_n * 4, cfg.hit_ratio, first[first.size() / 2],
        second[second.size() / 2], second.front(), second.back(), c + 1 < configs.size() ? "," : "");
  }
  std::printf("  ]\n}\n");
  std::size_t none = 0;
  return probe::set_aside(0, none);
}
