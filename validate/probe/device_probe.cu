// Reads the device facts that archs/*.yaml cite as "ours", and measures launch overhead.
// Output: one JSON object on stdout. Build: nvcc -O2 -arch=sm_90 device_probe.cu -o device_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda_check.h"

__global__ void empty_kernel() {}

static double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  int dev = 0, driver = 0, runtime = 0;
  CHECK(cudaSetDevice(dev));
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, dev));
  int clock_khz = 0, mem_clock_khz = 0, bus_width = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, dev);
  cudaDeviceGetAttribute(&bus_width, cudaDevAttrGlobalMemoryBusWidth, dev);

  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 100; ++i) empty_kernel<<<1, 32>>>();
  CHECK(cudaDeviceSynchronize());
  // One event-timed empty launch: what CUDA-event timing of a tiny kernel reports.
  std::vector<float> single;
  for (int i = 0; i < 200; ++i) {
    CHECK(cudaEventRecord(a));
    empty_kernel<<<1, 32>>>();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    single.push_back(ms * 1000.0f);
  }
  // Back-to-back launches: per-launch cost when the queue is full.
  std::vector<float> b2b;
  for (int r = 0; r < 20; ++r) {
    CHECK(cudaEventRecord(a));
    for (int i = 0; i < 1000; ++i) empty_kernel<<<p.multiProcessorCount, 128>>>();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    b2b.push_back(ms);  // ms per 1000 launches == us per launch
  }
  std::printf("{\n");
  std::printf("  \"name\": \"%s\",\n  \"driver_version\": %d,\n  \"runtime_version\": %d,\n", p.name, driver, runtime);
  std::printf("  \"compute_capability\": \"%d.%d\",\n", p.major, p.minor);
  std::printf("  \"multiProcessorCount\": %d,\n", p.multiProcessorCount);
  std::printf("  \"clockRate_khz\": %d,\n  \"memoryClockRate_khz\": %d,\n  \"memoryBusWidth_bits\": %d,\n", clock_khz,
              mem_clock_khz, bus_width);
  std::printf("  \"totalGlobalMem\": %zu,\n", p.totalGlobalMem);
  std::printf("  \"l2CacheSize\": %d,\n  \"persistingL2CacheMaxSize\": %d,\n  \"accessPolicyMaxWindowSize\": %d,\n",
              p.l2CacheSize, p.persistingL2CacheMaxSize, p.accessPolicyMaxWindowSize);
  std::printf("  \"sharedMemPerMultiprocessor\": %zu,\n  \"sharedMemPerBlock\": %zu,\n", p.sharedMemPerMultiprocessor,
              p.sharedMemPerBlock);
  std::printf("  \"sharedMemPerBlockOptin\": %zu,\n  \"reservedSharedMemPerBlock\": %zu,\n", p.sharedMemPerBlockOptin,
              p.reservedSharedMemPerBlock);
  std::printf("  \"regsPerMultiprocessor\": %d,\n  \"regsPerBlock\": %d,\n", p.regsPerMultiprocessor, p.regsPerBlock);
  std::printf("  \"maxThreadsPerMultiProcessor\": %d,\n  \"maxThreadsPerBlock\": %d,\n", p.maxThreadsPerMultiProcessor,
              p.maxThreadsPerBlock);
  std::printf("  \"maxBlocksPerMultiProcessor\": %d,\n  \"warpSize\": %d,\n", p.maxBlocksPerMultiProcessor, p.warpSize);
  std::printf("  \"empty_kernel_event_timed_us_median\": %.3f,\n", median(single));
  std::printf("  \"empty_kernel_back_to_back_us_per_launch_median\": %.3f\n", median(b2b));
  std::printf("}\n");
  return 0;
}
