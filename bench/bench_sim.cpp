// Simulation speed (warp memory instructions per second through coalescer + L1 + L2 + DRAM) on a streaming and a
// random-gather trace read from .mht files, on 1, 2, 4, ... threads up to the host's cores (at least 2), and on the
// same traces decoded beforehand (the simulator alone); a 1-billion-access streaming run whose peak memory is reported
// (max RSS), to show memory stays bounded by cache state plus one wave of blocks; and a trace of 500 short launches
// (the per-launch cost: emptying the L1s and L2 between launches).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "../model/util/sort_unique.h"
#include "memhier/arch_loader.h"
#include "memhier/kernel_desc.h"
#include "memhier/mht.h"
#include "memhier/sim.h"

namespace {

using namespace memhier;
namespace fs = std::filesystem;

const Arch& h100() {
  static const Arch arch = load_arch_file(fs::path(MEMHIER_BENCH_ARCH_DIR) / "h100.yaml");
  return arch;
}

// The example's trace with `sets`, written once a process; `name` names its file (the example's name unless several
// benchmarks take the example with different sets).
fs::path trace_file(const std::string& example, const std::vector<ParamOverride>& sets, std::string name = {}) {
  if (name.empty()) name = example;
  static std::map<std::string, fs::path> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  fs::path p = fs::temp_directory_path() / ("memhier_bench_sim_" + name + ".mht");
  auto src = load_kernel_description(fs::path(MEMHIER_BENCH_TRACES_DIR) / "examples" / (example + ".yaml"), sets);
  write_mht(*src, p);
  return cache.emplace(name, p).first->second;
}

// Shares of the simulation's wall time by phase (SimPhaseTimes): reading blocks, the SM phase, the L2 phase, the
// set-up, the rest.
void report_phases(benchmark::State& state, const SimPhaseTimes& t) {
  if (t.total <= 0) return;
  state.counters["read_share"] = t.read / t.total;
  state.counters["sm_share"] = t.sm / t.total;
  state.counters["l2_share"] = t.l2 / t.total;
  state.counters["setup_share"] = t.setup / t.total;
  state.counters["other_share"] = (t.total - t.read - t.sm - t.l2 - t.setup) / t.total;
}

void sim(benchmark::State& state, const std::string& example, const std::vector<ParamOverride>& sets,
         const std::string& name = {}) {
  const fs::path p = trace_file(example, sets, name);
  SimPhaseTimes times;
  SimOptions opt;
  opt.times = &times;
  opt.threads = static_cast<int>(state.range(0));
  std::uint64_t instr = 0;
  for (auto _ : state) {
    MhtReader r(p);
    auto result = simulate(h100(), r, opt);
    instr = result[0].counters.warp_instructions - result[0].counters.barriers;
    benchmark::DoNotOptimize(result);
  }
  state.counters["warp_mem_instr_per_s"] = benchmark::Counter(
      static_cast<double>(instr) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  report_phases(state, times);
}

// A trace decoded once and kept in memory, handed out as copies (made on simulate()'s threads): the benchmark times
// what simulate() does with the blocks and the copying, with no file reading or .mht decoding.
class DecodedTrace final : public TraceSource {
 public:
  explicit DecodedTrace(const fs::path& p) {
    MhtReader r(p);
    KernelLaunch k;
    while (r.next_kernel(k)) {
      m_launches.push_back({k, {}});
      BlockTrace b;
      b.compact_strided = true;  // as simulate() asks of its sources: strided records as first and stride
      while (r.next_block(b)) m_launches.back().blocks.push_back(b);
    }
  }
  void rewind() {
    m_launch = 0;
    m_block = 0;
    m_started = false;
  }
  bool next_kernel(KernelLaunch& k) override {
    if (m_started) ++m_launch;
    m_started = true;
    m_block = 0;
    if (m_launch >= m_launches.size()) return false;
    k = m_launches[m_launch].launch;
    return true;
  }
  bool next_block(BlockTrace& b) override {
    const std::vector<BlockTrace>& blocks = m_launches[m_launch].blocks;
    if (m_block == blocks.size()) return false;
    copy(blocks[m_block++], b);
    return true;
  }
  // The copies on all the threads simulate() offers, as a source that decodes in parallel would make them.
  std::size_t next_blocks(std::span<BlockTrace> out, int threads) override {
    const std::vector<BlockTrace>& blocks = m_launches[m_launch].blocks;
    const std::size_t n = std::min(out.size(), blocks.size() - m_block);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t i = 0; i < n; ++i) copy(blocks[m_block + i], out[i]);
    m_block += n;
    return n;
  }

 private:
  struct Launch {
    KernelLaunch launch;
    std::vector<BlockTrace> blocks;
  };
  static void copy(const BlockTrace& from, BlockTrace& b) {
    b.index = from.index;
    b.compact_strided = from.compact_strided;
    b.records.assign(from.records.begin(), from.records.end());
    b.warp_begin.assign(from.warp_begin.begin(), from.warp_begin.end());
    b.addresses.assign(from.addresses.begin(), from.addresses.end());
    b.lanes = from.lanes;
  }
  std::vector<Launch> m_launches;
  std::size_t m_launch = 0, m_block = 0;
  bool m_started = false;
};

// As sim(), from the trace decoded in memory beforehand: the simulator's own speed (coalescer, L1, L2, DRAM and the
// warp scheduler), without the trace reader's. Run these in a process of their own (bench/run_host.sh does): after
// the benchmarks from files in one process the decoded gather ran 1.2-1.45x slower on this project's VM, in the heap
// they left (bench/results/sim-2026-12-02-session66.txt).
void sim_decoded(benchmark::State& state, const std::string& example, const std::vector<ParamOverride>& sets) {
  DecodedTrace trace(trace_file(example, sets));
  SimPhaseTimes times;
  SimOptions opt;
  opt.times = &times;
  opt.threads = static_cast<int>(state.range(0));
  std::uint64_t instr = 0;
  for (auto _ : state) {
    trace.rewind();
    auto result = simulate(h100(), trace, opt);
    instr = result[0].counters.warp_instructions - result[0].counters.barriers;
    benchmark::DoNotOptimize(result);
  }
  const double done = static_cast<double>(instr) * static_cast<double>(state.iterations());
  state.counters["warp_mem_instr_per_s"] = benchmark::Counter(done, benchmark::Counter::kIsRate);
  report_phases(state, times);
}

// A streaming copy generated on the fly: y[i] = x[i], 2 warp instructions of 32 lanes per warp.
class SyntheticCopy final : public TraceSource {
 public:
  explicit SyntheticCopy(std::uint64_t lane_accesses) : m_blocks(lane_accesses / 2 / 256) {}
  bool next_kernel(KernelLaunch& k) override {
    if (m_done) return false;
    m_done = true;
    k = {};
    k.name = "synthetic_copy";
    k.grid = {static_cast<std::uint32_t>(m_blocks), 1, 1};
    k.block = {256, 1, 1};
    k.registers_per_thread = 16;
    return true;
  }
  bool next_block(BlockTrace& b) override {
    if (m_next == m_blocks) return false;
    b.clear();
    b.index = {static_cast<std::uint32_t>(m_next), 0, 0};
    for (std::uint64_t w = 0; w < 8; ++w) {
      b.begin_warp();
      const std::uint64_t i = (m_next * 256 + w * 32) * 4;
      for (int op = 0; op < 2; ++op) {
        WarpRecord r;
        r.pc = 16 * static_cast<std::uint32_t>(op + 1);
        r.active_mask = 0xFFFFFFFFU;
        r.kind = op == 0 ? AccessKind::load : AccessKind::store;
        std::array<std::uint64_t, 32> a{};
        const std::uint64_t base = (op == 0 ? 0x7f0000000000ULL : 0x7f8000000000ULL) + i;
        for (std::uint64_t l = 0; l < 32; ++l) a[l] = base + 4 * l;
        b.add(r, a);
      }
    }
    ++m_next;
    return true;
  }

 private:
  std::uint64_t m_blocks;
  std::uint64_t m_next = 0;
  bool m_done = false;
};

void BM_SimStreaming(benchmark::State& s) { sim(s, "coalesced_copy", {{"n", "1 << 23"}}); }
// The same stream eight times as long (4.2 M warp memory instructions): what a simulate() call costs whatever its
// trace's length (its tables' clearing, its first batch's block storage) spread over eight times the instructions.
void BM_SimStreamingLong(benchmark::State& s) { sim(s, "coalesced_copy", {{"n", "1 << 26"}}, "coalesced_copy_long"); }
void BM_SimRandomGather(benchmark::State& s) { sim(s, "random_gather", {{"n", "1 << 21"}, {"m", "1 << 24"}}); }
void BM_SimTransposeTiled(benchmark::State& s) { sim(s, "transpose_tiled", {{"n", "2048"}}); }
void BM_SimStreamingDecoded(benchmark::State& s) { sim_decoded(s, "coalesced_copy", {{"n", "1 << 23"}}); }
void BM_SimRandomGatherDecoded(benchmark::State& s) {
  sim_decoded(s, "random_gather", {{"n", "1 << 21"}, {"m", "1 << 24"}});
}

// A trace of many short launches, as a captured framework program has (PyTorch: a kernel per operator): 500
// launches of a 4096-element copy, 16 blocks and 256 warp memory instructions each, every launch cold (flushed).
void BM_SimManyLaunches(benchmark::State& state) {
  static const fs::path p = [] {
    fs::path f = fs::temp_directory_path() / "memhier_bench_sim_many_launches.mht";
    auto src = load_kernel_description_string(R"(kernel: tiny_copy
params: {n: 4096}
launches: 500
launch: {grid: 'ceil_div(n, 256)', block: 256, registers: 16}
arrays: {x: {element: 4, length: n}, y: {element: 4, length: n}}
body:
  - let: {i: blockIdx.x * 256 + threadIdx.x}
  - load: x[i]
  - store: y[i]
)",
                                              "many_launches.yaml");
    write_mht(*src, f);
    return f;
  }();
  std::uint64_t launches = 0, instr = 0;
  for (auto _ : state) {
    MhtReader r(p);
    auto result = simulate(h100(), r, {});
    launches = result.size();
    instr = 0;
    for (const KernelSim& k : result) instr += k.counters.warp_instructions;
    benchmark::DoNotOptimize(result);
  }
  state.counters["launches_per_s"] = benchmark::Counter(
      static_cast<double>(launches) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["warp_mem_instr_per_s"] = benchmark::Counter(
      static_cast<double>(instr) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_SimBillionAccesses(benchmark::State& state) {
  for (auto _ : state) {
    SyntheticCopy src(1000000000ULL);
    auto result = simulate(h100(), src, {});
    benchmark::DoNotOptimize(result);
    state.counters["lane_accesses"] =
        static_cast<double>(result[0].counters.global_ld_sectors * 8 + result[0].counters.global_st_sectors * 8);
    state.counters["warp_mem_instr_per_s"] =
        benchmark::Counter(static_cast<double>(result[0].counters.warp_instructions), benchmark::Counter::kIsRate);
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  state.counters["max_rss_MiB"] = static_cast<double>(u.ru_maxrss) / 1024.0;
}

// A wave of blocks that run long (softmax_naive, one thread a row, at 4096 columns: one wave of 64 blocks, 134 million
// lane accesses), from its description: the peak memory (max RSS; run it alone, as bench/run_host.sh does) shows what
// the simulator holds for such a wave: its L2 requests in rounds (SimOptions::round_requests), its blocks whole.
void BM_SimLongRows(benchmark::State& state) {
  for (auto _ : state) {
    auto src = load_kernel_description(fs::path(MEMHIER_BENCH_TRACES_DIR) / "examples" / "softmax_naive.yaml",
                                       {{"rows", "8192"}, {"cols", "4096"}});
    auto result = simulate(h100(), *src, {});
    benchmark::DoNotOptimize(result);
    state.counters["lane_accesses"] =
        static_cast<double>(result[0].counters.global_ld_requests + result[0].counters.global_st_requests) * 32;
    state.counters["warp_mem_instr_per_s"] =
        benchmark::Counter(static_cast<double>(result[0].counters.warp_instructions), benchmark::Counter::kIsRate);
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  state.counters["max_rss_MiB"] = static_cast<double>(u.ru_maxrss) / 1024.0;
}

// Thread counts 1, 2, 4, ... up to the host's cores (at least 1 and 2): how the simulation scales where it runs.
void thread_counts(benchmark::internal::Benchmark* b) {
  const int cores = std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  for (int t = 1; t <= cores; t *= 2) b->Arg(t);
  if (!std::has_single_bit(static_cast<unsigned>(cores))) b->Arg(cores);
}

// A warp's sectors sorted without repeats, as the coalescer does for a gather (sort_unique, model/util/sort_unique.h)
// and as it did before (std::sort then std::unique): range(0) random sectors of a 64 MiB table, fresh each time.
template <bool kCounting>
void sort_sectors(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::mt19937_64 rng(1);
  std::vector<std::uint64_t> pool(1 << 16);
  for (std::uint64_t& s : pool) s = rng() % (std::uint64_t{1} << 21U);
  std::array<std::uint64_t, 64> v{};
  std::size_t at = 0, kept = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) v[i] = pool[(at + i) & (pool.size() - 1)];
    at += n;
    if constexpr (kCounting) {
      kept = sort_unique(v.data(), n);
    } else {
      std::sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
      kept = static_cast<std::size_t>(std::unique(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n)) - v.begin());
    }
    benchmark::DoNotOptimize(kept);
    benchmark::DoNotOptimize(v.data());
  }
}
void BM_SortUnique(benchmark::State& state) { sort_sectors<true>(state); }
void BM_StdSortUnique(benchmark::State& state) { sort_sectors<false>(state); }

}  // namespace

BENCHMARK(BM_SortUnique)->Arg(8)->Arg(32)->Arg(64);
BENCHMARK(BM_StdSortUnique)->Arg(8)->Arg(32)->Arg(64);
BENCHMARK(BM_SimStreaming)->Apply(thread_counts)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SimStreamingLong)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SimRandomGather)->Apply(thread_counts)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SimTransposeTiled)->Apply(thread_counts)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SimStreamingDecoded)->Apply(thread_counts)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SimRandomGatherDecoded)->Apply(thread_counts)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SimManyLaunches)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SimBillionAccesses)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_SimLongRows)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK_MAIN();
