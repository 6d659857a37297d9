// Trace format speed and size: .mht decode and encode rates, and bytes on disk per warp memory instruction, for a
// regular (coalesced), a strided and a random-gather trace made from the shipped kernel descriptions.
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

void BM_DecodeCoalescedCopy(benchmark::State& s) { decode(s, "coalesced_copy", {{"n", "1 << 22"}}); }
void BM_DecodeStridedCopy(benchmark::State& s) { decode(s, "strided_copy", {{"n", "1 << 21"}, {"stride", "8"}}); }
void BM_DecodeTransposeTiled(benchmark::State& s) { decode(s, "transpose_tiled", {{"n", "2048"}}); }
void BM_DecodeRandomGather(benchmark::State& s) { decode(s, "random_gather", {{"n", "1 << 20"}}); }
void BM_EncodeCoalescedCopy(benchmark::State& s) { encode(s, "coalesced_copy", {{"n", "1 << 22"}}); }
void BM_EncodeRandomGather(benchmark::State& s) { encode(s, "random_gather", {{"n", "1 << 20"}}); }

}  // namespace

BENCHMARK(BM_DecodeCoalescedCopy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeStridedCopy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeTransposeTiled)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeRandomGather)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeCoalescedCopy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeRandomGather)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
