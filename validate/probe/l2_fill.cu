// When the L2 counts a read of a sector as a hit: right away once a miss has fetched it (with the rest of its 64-byte
// DRAM granule), or only once the data are back from DRAM. The simulator's L2 (model/l2/l2_slice.cpp) marks fetched
// sectors valid at the miss; for misaligned_copy, whose warps re-read sectors neighbouring warps fetched a few cycles
// before, it counts 2.6 times the L2 hits ncu does (lts__t_sectors_op_read_lookup_hit; stencil_2d 0.59 times).
//
// One lane of each warp reads, for each of its lines, one sector (`first`), waits `delay` SM cycles (a clock64 spin),
// then reads another (`second`) of the same line, both through ld.global.cg (L2 only: no L1 allocation, so every read
// is an L2 request of one sector). A warp's lines lie 4 lines apart in a 256 MiB buffer, cold under ncu's cache
// control (it flushes the caches before each counted launch). Pairs:
//   partner  sector 0, then sector 1 (the other half of sector 0's 64-byte granule)
//   same     sector 0, then sector 0 again
//   other    sector 0, then sector 2 (another granule: a miss however long the wait; the control)
// at delays of 0 to 8000 cycles. The kernel names carry the pair; the launch order (and so the delay) is in
// l2_fill.json. Usage: l2_fill. Build: nvcc -O2 -arch=sm_90 l2_fill.cu -o l2_fill
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "cuda_check.h"

namespace {

constexpr int kLinesPerWarp = 64;
constexpr int kLineStride = 4;  // lines between a warp's lines
constexpr int kFloatsPerLine = 32, kFloatsPerSector = 8;

__device__ __forceinline__ float load_cg(const float* p) {
  float v;
  asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

template <int kFirst, int kSecond>
__device__ void pair(const float* a, long long delay, float* sink) {
  if (threadIdx.x % 32 != 0) return;
  const long long warp = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
  float sum = 0.0F;
  for (int i = 0; i < kLinesPerWarp; ++i) {
    const float* line = a + ((warp * kLinesPerWarp + i) * kLineStride) * kFloatsPerLine;
    const float x = load_cg(line + kFirst * kFloatsPerSector);
    spin(delay);
    const float y = load_cg(line + kSecond * kFloatsPerSector);
    sum += x + y;
  }
  if (sum < 0.0F) sink[0] = sum;  // the data are positive: no store
}

__global__ void l2fill_partner(const float* a, long long delay, float* sink) { pair<0, 1>(a, delay, sink); }
__global__ void l2fill_same(const float* a, long long delay, float* sink) { pair<0, 0>(a, delay, sink); }
__global__ void l2fill_other(const float* a, long long delay, float* sink) { pair<0, 2>(a, delay, sink); }

__global__ void fill(float* a, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) a[i] = 1.0F;
}

}  // namespace

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int threads = 256, blocks = sms * 4;
  const long long warps = static_cast<long long>(blocks) * threads / 32;
  const long long floats = warps * kLinesPerWarp * kLineStride * kFloatsPerLine;
  float* a = nullptr;
  float* sink = nullptr;
  CHECK(cudaMalloc(&a, floats * sizeof(float)));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  fill<<<static_cast<unsigned>((floats + 255) / 256), 256>>>(a, floats);
  CHECK(cudaDeviceSynchronize());
  const std::vector<long long> delays = {0, 250, 500, 750, 1000, 1500, 2000, 3000, 5000, 8000};
  std::printf("{\n  \"sms\": %d, \"blocks\": %d, \"block\": %d, \"warps\": %lld, \"lines_per_warp\": %d,\n", sms, blocks,
              threads, warps, kLinesPerWarp);
  std::printf("  \"launches\": [\n");
  bool first = true;
  for (const char* pair_name : {"partner", "same", "other"})
    for (long long delay : delays) {
      cudaEvent_t start, stop;
      CHECK(cudaEventCreate(&start));
      CHECK(cudaEventCreate(&stop));
      CHECK(cudaEventRecord(start));
      if (pair_name[0] == 'p') l2fill_partner<<<blocks, threads>>>(a, delay, sink);
      if (pair_name[0] == 's') l2fill_same<<<blocks, threads>>>(a, delay, sink);
      if (pair_name[0] == 'o') l2fill_other<<<blocks, threads>>>(a, delay, sink);
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      CHECK(cudaGetLastError());
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, stop));
      std::printf("%s    {\"pair\": \"%s\", \"delay_cycles\": %lld, \"us\": %.3f}", first ? "" : ",\n", pair_name, delay,
                  ms * 1000.0F);
      first = false;
      CHECK(cudaEventDestroy(start));
      CHECK(cudaEventDestroy(stop));
    }
  std::printf("\n  ]\n}\n");
  CHECK(cudaFree(a));
  CHECK(cudaFree(sink));
  return 0;
}
