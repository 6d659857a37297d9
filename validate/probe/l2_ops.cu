// What an L2 lookup costs by its kind, with every line already in L2: the model charges a lookup whole beats of the
// slice's data path (l2.slice_width, 64 B on the H100: one beat for one or two sectors), whatever it does, which puts
// the clean suite's transpose_naive (a 4-byte write to each of 32 lines a store) 25% short of the GPU and
// random_gather over 1 MiB (a 4-byte read of each of 32 lines a load) 17-22% long
// (validate/results/h100-2026-11-28b-suite); atomics and reductions it costed as reads, unmeasured (kinds 6-9:
// validate/results/h100-2026-11-28-l2atomics).
//
// Each warp makes `iters` requests of one kind over an 8 MiB buffer (262,144 sectors, in L2 after a warm-up launch),
// its lines picked by urand (model/include/memhier/urand.h) from instruction k = warp x iters + i:
//   0 read_word     each lane reads 4 bytes of a sector of its own (ld.global.cg): 32 lookups of 1 sector
//   1 write_word    each lane writes 4 bytes of a sector of its own: 32 lookups of 1 sector, written in part
//   2 read_sector   each 8 lanes read a whole sector (ld.global.cg): 4 lookups of 1 sector
//   3 write_sector  each 8 lanes write a whole sector: 4 lookups of 1 sector, written whole
//   4 read_line     the warp reads a whole line (ld.global.cg): 1 lookup of 4 sectors
//   5 write_line    the warp writes a whole line: 1 lookup of 4 sectors
// 132 x 8 blocks of 256 threads (every SM full), `iters` 64. Output: one JSON object on stdout, each kind's
// CUDA-event times (us, sorted) of `runs` launches (argument 1, default 20) after a warm-up, back to back (no flush:
// the buffer stays in L2). validate/probe/l2_ops/l2_ops.yaml describes the same launches.
// Build: nvcc -O2 -arch=sm_90 -I../../model/include l2_ops.cu
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "cuda_check.h"
#include "memhier/urand.h"
#include "probe_util.cuh"

namespace {

constexpr long long kSectors = 1LL << 18;  // 8 MiB
constexpr int kIters = 64;
constexpr int kThreads = 256;
constexpr const char* kKinds[] = {"read_word",  "write_word", "read_sector", "write_sector", "read_line",
                                  "write_line", "red_word",   "atom_word",   "red_line",     "atom_line"};
constexpr int kKindCount = sizeof(kKinds) / sizeof(kKinds[0]);

template <int kKind>
__global__ void l2_ops(float* buf, float* sink) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const long long warp = t / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  float sum = 0.0F;
  for (int i = 0; i < kIters; ++i) {
    const auto k = static_cast<unsigned long long>(warp * kIters + i);
    if constexpr (kKind == 6 || kKind == 7) {
      const long long s = memhier::urand(1, k * 32 + lane, 0, kSectors);
      if constexpr (kKind == 6)
        atomicAdd(buf + s * 8, 1.0F);
      else
        sum += atomicAdd(buf + s * 8, 1.0F);
    } else if constexpr (kKind == 8 || kKind == 9) {
      const long long line = memhier::urand(1, k, 0, kSectors / 4);
      if constexpr (kKind == 8)
        atomicAdd(buf + line * 32 + lane, 1.0F);
      else
        sum += atomicAdd(buf + line * 32 + lane, 1.0F);
    } else if constexpr (kKind == 0 || kKind == 1) {
      const long long s = memhier::urand(1, k * 32 + lane, 0, kSectors);
      if constexpr (kKind == 0)
        sum += __ldcg(buf + s * 8);
      else
        buf[s * 8] = static_cast<float>(i);
    } else if constexpr (kKind == 2 || kKind == 3) {
      const long long s = memhier::urand(1, k * 4 + lane / 8, 0, kSectors);
      if constexpr (kKind == 2)
        sum += __ldcg(buf + s * 8 + lane % 8);
      else
        buf[s * 8 + lane % 8] = static_cast<float>(i);
    } else {
      const long long line = memhier::urand(1, k, 0, kSectors / 4);
      if constexpr (kKind == 4)
        sum += __ldcg(buf + line * 32 + lane);
      else
        buf[line * 32 + lane] = static_cast<float>(i);
    }
  }
  if (sum < 0.0F) sink[0] = sum;  // the buffer holds no negative number: keeps the loads
}

template <int kKind>
void launch(float* buf, float* sink, int blocks) {
  l2_ops<kKind><<<blocks, kThreads>>>(buf, sink);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = probe::runs_arg(argc, argv, "l2_ops", 20);
  if (runs == 0) return 2;
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  const int blocks = 8 * p.multiProcessorCount;
  float *buf = nullptr, *sink = nullptr;
  CHECK(cudaMalloc(&buf, sizeof(float) * kSectors * 8));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  probe::fill<<<1024, 256>>>(buf, kSectors * 8, 977);
  CHECK(cudaDeviceSynchronize());
  void (*kinds[])(float*, float*, int) = {launch<0>, launch<1>, launch<2>, launch<3>, launch<4>,
                                          launch<5>, launch<6>, launch<7>, launch<8>, launch<9>};
  std::printf(
      "{\n  \"name\": \"%s\",\n  \"sms\": %d,\n  \"blocks\": %d,\n  \"threads\": %d,\n  \"iters\": %d,\n"
      "  \"sectors\": %lld,\n  \"configs\": [\n",
      p.name, p.multiProcessorCount, blocks, kThreads, kIters, kSectors);
  unsigned long long seed = 1;
  for (int kind = 0; kind < kKindCount; ++kind) {
    std::vector<float> us;
    if (probe::timed_runs(
            runs, seed, [&](unsigned long long) { kinds[kind](buf, sink, blocks); }, us) != 0)
      return 1;
    std::printf("%s    {\"kind\": %d, \"name\": \"%s\", \"us\": [", kind ? ",\n" : "", kind, kKinds[kind]);
    for (std::size_t i = 0; i < us.size(); ++i) std::printf("%s%.3f", i ? ", " : "", us[i]);
    std::printf("]}");
  }
  std::printf("\n  ]\n}\n");
  return 0;
}
