// What it costs the GPU to schedule thread blocks, as CUDA-event timing of one launch sees it.
//
// The suite's empty_blocks cases show a cost that grows with the number of 256-thread blocks. This probe separates
// the questions a model of it has to answer:
//   - per block or per warp: empty kernels of 32 to 1024 threads a block, the same number of waves;
//   - a dispatch rate (a pipeline: blocks leave the scheduler at a fixed rate whatever they do) or a per-slot
//     turnaround (a block's slot is busy for a fixed time on top of the block's own run time): blocks whose thread 0
//     spins for S SM cycles. With a rate, time stays flat until S x blocks-per-slot exceeds it; with a turnaround,
//     time grows by S per wave from S = 0.
// Like the suite's cold cases, each timed launch is queued behind another kernel (a short spin), so the events measure
// GPU-side time, not host submission.
// Output: one JSON object on stdout. Build: nvcc -O2 -arch=sm_90 block_dispatch.cu -o block_dispatch
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda_check.h"

__global__ void spin_blocks(int* done, long long cycles) {
  if (threadIdx.x == 0) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
    done[blockIdx.x] = static_cast<int>(blockIdx.x) + 1;
  }
}

static double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median over 21 runs of one event-timed launch of `blocks` x `threads` spinning `cycles`, in microseconds.
static int time_launch(int blocks, int threads, long long cycles, int* done, cudaEvent_t a, cudaEvent_t b, double* us) {
  std::vector<float> runs;
  for (int r = 0; r < 22; ++r) {
    spin_blocks<<<1, 32>>>(done, 20000);  // keeps the GPU busy while the events and the launch are queued
    CHECK(cudaEventRecord(a));
    spin_blocks<<<blocks, threads>>>(done, cycles);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (r > 0) runs.push_back(ms * 1000.0f);  // the first run warms up
  }
  *us = median(runs);
  return 0;
}

int main() {
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  int* done = nullptr;
  CHECK(cudaMalloc(&done, sizeof(int) << 20));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const int sms = p.multiProcessorCount;
  std::printf("{\n  \"name\": \"%s\",\n  \"sms\": %d,\n  \"clock_khz\": %d,\n  \"runs\": [\n", p.name, sms, clock_khz);
  bool first = true;
  auto emit = [&](const char* series, int blocks, int threads, long long cycles, double us) {
    std::printf(
        "%s    {\"series\": \"%s\", \"blocks\": %d, \"threads\": %d, \"spin_cycles\": %lld, \"median_us\": %.3f}",
        first ? "" : ",\n", series, blocks, threads, cycles, us);
    first = false;
  };
  // Per block or per warp: 1, 8 and 64 waves of blocks at each block size (resident blocks per SM: 2048 threads or
  // 32 blocks, whichever is fewer).
  for (int threads : {32, 64, 128, 256, 512, 1024}) {
    const int resident = std::min(32, 2048 / threads);
    for (int waves : {1, 8, 64}) {
      const int blocks = waves * resident * sms;
      double us = 0;
      if (time_launch(blocks, threads, 0, done, a, b, &us)) return 1;
      emit("threads", blocks, threads, 0, us);
    }
  }
  // Rate or turnaround: 16 waves of 256-thread blocks whose thread 0 spins.
  for (long long cycles : {0LL, 250LL, 500LL, 1000LL, 2000LL, 4000LL, 8000LL}) {
    const int blocks = 16 * 8 * sms;
    double us = 0;
    if (time_launch(blocks, 256, cycles, done, a, b, &us)) return 1;
    emit("spin", blocks, 256, cycles, us);
  }
  // One block: the launch overhead itself.
  double us = 0;
  if (time_launch(1, 32, 0, done, a, b, &us)) return 1;
  emit("single", 1, 32, 0, us);
  std::printf("\n  ]\n}\n");
  cudaFree(done);
  return 0;
}
