// Which of two warps of a block reaches the L1 first when both load right away: the order the simulator's scheduler
// gives them (model/sim/warp_scheduler.h: oldest, lowest slot, first) decides how many of misaligned_copy's re-read
// sectors the L2 counts as hits (ncu 195,610 a launch on the H100, the model 506,763).
//
// Each block (8 warps) has two warps act, A and B, on a line of its own (128 MiB of lines, cold under ncu's cache
// control): lane 0 of warp A loads sector 0 of the line (one sector), warp B loads the whole line (four sectors, a
// float a lane). If A's request reaches the L1 first, its miss fetches sector 0's 64-byte granule and B's request
// sends sectors 1-3 to L2, sector 1 a hit there (validate/results/h100-2026-11-26, l2_fill: the other half of a
// granule being fetched is a hit at once): 1 L2 hit a line. If B's comes first it misses all four sectors (no hit)
// and A's sector is in flight (no L2 lookup). So L2 read hits a line = the share of lines whose A request came first.
// Pairs (A, B): (0, 1), (1, 0), (0, 4), (4, 0), (0, 7), (7, 0), (2, 3), (3, 2); the warps an SM sub-partition
// schedules are w mod 4 (so 0 and 4 share one). The other warps exit at once. Also `same_warp`: one warp loads the
// sector and then the line (A before B by program order: 1 hit a line). Usage: warp_order.
// Build: nvcc -O2 -arch=sm_90 warp_order.cu -o warp_order
#include <cuda_runtime.h>

#include <cstdio>

#include "cuda_check.h"

namespace {

constexpr int kWarps = 8;

__global__ void warp_order(const float* a, int warp_a, int warp_b, float* sink) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const float* line = a + static_cast<long long>(blockIdx.x) * 32;
  float v = 0.0F;
  if (warp == warp_a && lane == 0) v = line[0];
  if (warp == warp_b) v = line[lane];
  if (v < 0.0F) sink[0] = v;  // the data are positive: no store
}

__global__ void warp_order_same(const float* a, float* sink) {
  if (threadIdx.x >= 32) return;
  const float* line = a + static_cast<long long>(blockIdx.x) * 32;
  const float x = threadIdx.x == 0 ? line[0] : 0.0F;
  const float y = line[threadIdx.x];
  if (x + y < 0.0F) sink[0] = x;
}

__global__ void fill(float* a, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) a[i] = 1.0F;
}

}  // namespace

int main() {
  constexpr int kBlocks = 1 << 20;  // one 128-byte line each: 128 MiB
  float* a = nullptr;
  float* sink = nullptr;
  CHECK(cudaMalloc(&a, static_cast<size_t>(kBlocks) * 128));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  fill<<<kBlocks / 8, 256>>>(a, static_cast<long long>(kBlocks) * 32);
  CHECK(cudaDeviceSynchronize());
  const int pairs[][2] = {{0, 1}, {1, 0}, {0, 4}, {4, 0}, {0, 7}, {7, 0}, {2, 3}, {3, 2}};
  std::printf("{\n  \"blocks\": %d, \"block\": %d,\n  \"launches\": [\n", kBlocks, kWarps * 32);
  for (const auto& p : pairs) {
    warp_order<<<kBlocks, kWarps * 32>>>(a, p[0], p[1], sink);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaGetLastError());
    std::printf("    {\"kernel\": \"warp_order\", \"a\": %d, \"b\": %d},\n", p[0], p[1]);
  }
  warp_order_same<<<kBlocks, kWarps * 32>>>(a, sink);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaGetLastError());
  std::printf("    {\"kernel\": \"warp_order_same\", \"a\": 0, \"b\": 0}\n  ]\n}\n");
  CHECK(cudaFree(a));
  CHECK(cudaFree(sink));
  return 0;
}
