// Trace format speed and size: .mht decode and encode rates, and bytes on disk per warp memory instruction, for a
// regular (coalesced), a strided and a random-gather trace made from the shipped kernel descriptions; and how fast
// kernel descriptions generate their blocks (what predict, simulate and sweep do first with a .yaml) on one thread.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>

#include "memhier/kernel_desc.h"
#include "memhier/mht.h"

namespace {

using namespace memhier;
namespace fs = std::filesystem;

struct Prepared {
  fs::path file;
  std::vector<BlockTrace> blocks;  // for the encode benchmark
  KernelLaunch launch;
  std::uint64_t instructions = 0;
  std::uint64_t decoded_bytes = 0;  // what a consumer receives: one WarpRecord + 8 bytes per active lane
  std::uint64_t raw_bytes = 0;      // the uncompressed record stream inside the chunks
};

const Prepared& prepare(const std::string& example, const std::vector<ParamOverride>& sets) {
  static std::map<std::string, Prepared> cache;
  auto it = cache.find(example);
  if (it != cache.end()) return it->second;
  Prepared p;
  p.file = fs::temp_directory_path() / ("memhier_bench_" + example + ".mht");
  auto src = load_kernel_description(fs::path(MEMHIER_BENCH_TRACES_DIR) / "examples" / (example + ".yaml"), sets);
  MhtWriter w(p.file);
  BlockTrace b;
  src->next_kernel(p.launch);
  w.begin_kernel(p.launch);
  while (src->next_block(b)) {
    w.add_block(b);
    p.blocks.push_back(b);
    for (const WarpRecord& r : b.records) {
      p.instructions += r.is_memory() ? 1 : 0;
      p.decoded_bytes += sizeof(WarpRecord) + 8 * static_cast<std::uint64_t>(b.lane_addresses(r).size());
    }
  }
  w.close();
  MhtReader r(p.file);
  p.raw_bytes = r.kernels()[0].raw_bytes;
  return cache.emplace(example, std::move(p)).first->second;
}

void decode(benchmark::State& state, const std::string& example, const std::vector<ParamOverride>& sets) {
  const Prepared& p = prepare(example, sets);
  BlockTrace b;
  KernelLaunch k;
  for (auto _ : state) {
    MhtReader r(p.file);
    std::uint64_t n = 0;
    while (r.next_kernel(k))
      while (r.next_block(b)) n += b.records.size();
    benchmark::DoNotOptimize(n);
  }
  const auto iters = static_cast<double>(state.iterations());
  state.counters["warp_instr_per_s"] =
      benchmark::Counter(static_cast<double>(p.instructions) * iters, benchmark::Counter::kIsRate);
  state.counters["decoded_MB_per_s"] =
      benchmark::Counter(static_cast<double>(p.decoded_bytes) * iters / 1e6, benchmark::Counter::kIsRate);
  state.counters["raw_stream_MB_per_s"] =
      benchmark::Counter(static_cast<double>(p.raw_bytes) * iters / 1e6, benchmark::Counter::kIsRate);
  state.counters["disk_B_per_instr"] = static_cast<double>(fs::file_size(p.file)) / static_cast<double>(p.instructions);
}

void encode(benchmark::State& state, const std::string& example, const std::vector<ParamOverride>& sets) {
  const Prepared& p = prepare(example, sets);
  const fs::path out = fs::temp_directory_path() / "memhier_bench_encode.mht";
  for (auto _ : state) {
    MhtWriter w(out);
    w.begin_kernel(p.launch);
    for (const BlockTrace& b : p.blocks) w.add_block(b);
    w.close();
  }
  const auto iters = static_cast<double>(state.iterations());
  state.counters["warp_instr_per_s"] =
      benchmark::Counter(static_cast<double>(p.instructions) * iters, benchmark::Counter::kIsRate);
  state.counters["decoded_MB_per_s"] =
      benchmark::Counter(static_cast<double>(p.decoded_bytes) * iters / 1e6, benchmark::Counter::kIsRate);
}

// Every block of one launch of a description, generated on one thread into one reused BlockTrace (as simulate()
// fills its blocks: compact strided records). warp_instr_per_s counts memory records; lanes_per_s their active
// lanes, each an index expression evaluated and an address checked.
void generate(benchmark::State& state, const std::string& example, const std::vector<ParamOverride>& sets) {
  const fs::path file = fs::path(MEMHIER_BENCH_TRACES_DIR) / "examples" / (example + ".yaml");
  std::uint64_t instructions = 0, lanes = 0;
  for (auto _ : state) {
    auto src = load_kernel_description(file, sets);
    KernelLaunch k;
    src->next_kernel(k);
    BlockTrace b;
    b.compact_strided = true;
    instructions = lanes = 0;
    while (src->next_block(b)) {
      for (const WarpRecord& r : b.records) instructions += r.is_memory() ? 1 : 0;
      lanes += b.lanes;
    }
  }
  const auto iters = static_cast<double>(state.iterations());
  state.counters["warp_instr_per_s"] =
      benchmark::Counter(static_cast<double>(instructions) * iters, benchmark::Counter::kIsRate);
  state.counters["lanes_per_s"] = benchmark::Counter(static_cast<double>(lanes) * iters, benchmark::Counter::kIsRate);
}

void BM_DecodeCoalescedCopy(benchmark::State& s) { decode(s, "coalesced_copy", {{"n", "1 << 22"}}); }
void BM_DecodeStridedCopy(benchmark::State& s) { decode(s, "strided_copy", {{"n", "1 << 21"}, {"stride", "8"}}); }
void BM_DecodeTransposeTiled(benchmark::State& s) { decode(s, "transpose_tiled", {{"n", "2048"}}); }
void BM_DecodeRandomGather(benchmark::State& s) { decode(s, "random_gather", {{"n", "1 << 20"}}); }
void BM_EncodeCoalescedCopy(benchmark::State& s) { encode(s, "coalesced_copy", {{"n", "1 << 22"}}); }
void BM_EncodeRandomGather(benchmark::State& s) { encode(s, "random_gather", {{"n", "1 << 20"}}); }

}  // namespace

// A guarded copy (global index, bounds test), a gather (urand per lane), a block reduction (shared memory, a loop of
// halving steps with predicated lanes), a row-per-thread softmax (three loops over the columns), a matrix product
// of 16 x 16 blocks (two thread rows a warp: runs of 16 lanes).
void BM_GenerateCoalescedCopy(benchmark::State& s) { generate(s, "coalesced_copy", {{"n", "1 << 22"}}); }
void BM_GenerateRandomGather(benchmark::State& s) { generate(s, "random_gather", {{"n", "1 << 20"}}); }
void BM_GenerateReductionShared(benchmark::State& s) { generate(s, "reduction_shared", {{"n", "1 << 22"}}); }
void BM_GenerateSoftmaxNaive(benchmark::State& s) { generate(s, "softmax_naive", {{"rows", "2048"}}); }
void BM_GenerateMatmulNaive(benchmark::State& s) { generate(s, "matmul_naive", {{"n", "256"}}); }

BENCHMARK(BM_DecodeCoalescedCopy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeStridedCopy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeTransposeTiled)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeRandomGather)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeCoalescedCopy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeRandomGather)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GenerateCoalescedCopy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GenerateRandomGather)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GenerateReductionShared)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GenerateSoftmaxNaive)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GenerateMatmulNaive)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
