// The simulation driver: blocks to SMs in launch order, as many resident on an SM as occupancy allows, the next one
// starting on an SM as soon as one there ends; each SM issues its resident warps' memory instructions oldest first
// within each sub-partition, the sub-partitions in turn, cycle by cycle, as loads' latencies and barriers let them
// (warp_scheduler.h); then the L2 replays the SMs' sector requests in issue-cycle order across all SMs, group of
// slices by group (a line's home slice and its copies in the other partitions form one group), a read the other SM
// of its TPC has in flight merged into that one (tpc_merge.h). SMs and groups are independent within a batch of
// blocks, so both phases run in parallel with results identical to one thread.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>

#include "../l2/l2_slice.h"
#include "memhier/error.h"
#include "memhier/sim.h"
#include "memhier/units.h"
#include "replay_order.h"
#include "sm_front.h"
#include "tpc_merge.h"
#include "warp_scheduler.h"

namespace memhier {
namespace {

constexpr std::uint64_t kLocalWindowBase = 0x00007ffe01000000ULL;  // away from descriptions' global heap
// Blocks are simulated in batches of waves (a wave: a block on every place of every SM): each SM runs its blocks of the
// batch, so its L1 state stays in the host's caches, until a place frees up with none left to take it; the blocks still
// running go on in the next batch, their cycles counting on. Each slice group then replays the batch's requests in
// cycle order. (A request of the next batch may come before one of this batch from another SM; the batches' ends are a
// few blocks' time apart.) A batch ends after kBatchWaves waves, once it holds kBatchAddresses lane addresses (32 MiB
// of them; this bounds the memory the trace takes, but a batch holds at least a wave, and its blocks whole: a wave of
// blocks that run long, matmul_naive's 256 blocks of 512 loads a thread, is held at once, 256 MiB of addresses), or
// once the L2 requests it would make at the previous batch's rate pass kBatchRequests (16 MiB of them, with as much
// again for their copy sorted by slice group: a gather makes one a lane). The rate is requests per lane the batch
// issued, not per lane it read: a batch issues only part of its last wave (blocks still running go on in the next),
// so the first batch of the benchmark gather, one wave, issued a third of the lanes it read, and the second, taking
// five waves at that rate, held 1.4 million requests: `memhier simulate` of that trace peaked at 147 MB resident, 81
// now. (Batch ends move the counts a little: the TPC merge table starts over at each, forgetting the reads in flight;
// the suite's random_gather m=1<<18 has 2% fewer merged sectors with the smaller batches, 0.03% more L2 reads.)
constexpr std::size_t kBatchWaves = 8;
constexpr std::size_t kBatchAddresses = std::size_t{1} << 22U;
constexpr double kBatchRequests = 1 << 19;
// Rounds: an SM's list holds at most SimOptions::round_requests L2 requests (2 MiB of them by default, with their copy
// sorted by slice group). A batch whose blocks run long (a wave of a kernel whose threads each loop over a whole row)
// would otherwise hold all of its requests at once (softmax_naive with 1024 columns: 11.5 million, 740 MB; twice that
// with 2048). An SM whose list fills stops before its next instruction; the slice groups then replay every SM's
// requests issued before the earliest cycle an SM stopped at, keeping the later ones for the next round, in which the
// SMs that stopped go on. Every request is replayed in the order one round would have given (by cycle, then SM), so
// rounds change no count; each round frees at least the earliest-stopped SM's whole list.
constexpr std::uint64_t kMaxCycle = kRequestCycleMask + 1;  // issue cycles of a launch: the merge key's 48 bits
// Blocks are taken in parts where their source gives them so (BlockTrace::part_records: a description's runner, a
// .mht reader): a warp's records kPartRecords at a time, the next part made or decoded when the warp has issued the
// last, on the SM's thread. A batch then holds a wave of blocks' first parts, not the blocks whole (matmul_naive at
// n=1024, 8 warps a block of 2049 records each: 1.84 GB peak with whole blocks, 690 MB in parts).
constexpr std::size_t kPartRecords = 256;
// Issues one SM's blocks of a batch (see warp_scheduler.h); `last`: the launch's, to the end. Returns whether the SM
// stopped, with more of the batch to issue, once its list held `round_requests` requests (`held` at the start).
bool run_sm(SmFront& sm, WarpScheduler& scheduler, bool last, std::uint64_t held, std::uint64_t round_requests) {
  const std::uint64_t room = round_requests > held ? round_requests - held : 0;
  return scheduler.run(
      sm.counters,
      [&](const BlockTrace& b, const WarpRecord& r, std::uint64_t cycle, std::uint32_t /*slot*/,
          std::uint64_t thread_base) { return sm.issue(b, r, cycle, thread_base); },
      last, [&] { return sm.requests() >= room; });
}

// A value alone in its cache lines (two: Intel's adjacent-line prefetcher fetches pairs), for one written by one thread
// while its neighbours are written by others.
template <typename T>
struct alignas(128) Padded {
  T value{};
};

struct Machine {
  std::vector<L2Slice> slices;
};

// Adds the wall time since it was made, or since the last lap(), to a phase of SimPhaseTimes (nothing when not asked
// for).
class PhaseClock {
 public:
  explicit PhaseClock(SimPhaseTimes* times) : m_times(times), m_start(now()), m_last(m_start) {}
  ~PhaseClock() {
    if (m_times != nullptr) m_times->total += seconds(m_start, now());
  }
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;
  void start() {
    if (m_times != nullptr) m_last = now();
  }
  void lap(double SimPhaseTimes::*phase) {
    if (m_times == nullptr) return;
    const auto t = now();
    m_times->*phase += seconds(m_last, t);
    m_last = t;
  }

 private:
  using Clock = std::chrono::steady_clock;
  static Clock::time_point now() { return Clock::now(); }
  static double seconds(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  }
  SimPhaseTimes* m_times;
  Clock::time_point m_start, m_last;
};

// Runs f(i) for i in [0, n) on `threads` threads, then rethrows the first exception any raised (none may leave a
// parallel region).
template <typename F>
void parallel_for(int threads, std::size_t n, F&& f) {
  std::vector<std::exception_ptr> failed(n);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::size_t i = 0; i < n; ++i) {
    try {
      f(i);
    } catch (...) {
      failed[i] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

// Rethrows `e`; an InputError that names no file (a record the SM front refused) is given the launch's trace and name.
[[noreturn]] void rethrow_naming(const KernelLaunch& launch, const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const InputError& x) {
    if (!x.where().file.empty()) throw;
    throw InputError({launch.source}, launch.name, x.message());
  }
}

// The L2 slices, built on `threads` threads (a slice is hundreds of KiB to clear).
Machine make_machine(const Arch& arch, int threads) {
  Machine m;
  const L2Spec& l2 = arch.l2;
  CacheGeometry g{l2.line, l2.sector, 0, static_cast<std::uint32_t>(l2.associativity)};
  g.sets = static_cast<std::uint32_t>(l2.size / (static_cast<std::uint64_t>(l2.slices) * l2.associativity * l2.line));
  const std::uint32_t dirty_ways = l2_dirty_ways(arch, 0);  // each launch sets its own (its set-aside's)
  // The L2's limit shared evenly by its slices, at least one each.
  const auto partial_max = static_cast<std::uint32_t>(
      l2.partial_sectors_max <= 0 ? 0 : std::max(1, (l2.partial_sectors_max + l2.slices - 1) / l2.slices));
  // The device's banks shared evenly by the slices (rounded, at least one each): each slice fronts its share.
  const double banks = arch.dram.banks > 0 ? arch.dram.banks : 16.0 * arch.dram.channels;
  const auto slice_banks = static_cast<std::uint32_t>(std::max(1.0, std::round(banks / l2.slices)));
  std::vector<std::optional<L2Slice>> built(static_cast<std::size_t>(l2.slices));
  parallel_for(threads, built.size(), [&](std::size_t s) {
    const int partition = static_cast<int>(s) % l2.partitions;
    built[s].emplace(L2SliceSpec{g, l2.dram_fetch_granularity, partition, l2.partitions, arch.dram.row_bytes,
                                 slice_banks, static_cast<std::uint32_t>(s),
                                 static_cast<std::uint32_t>(arch.dram.channels), l2.slice_width,
                                 static_cast<std::uint32_t>(l2.slices), dirty_ways, partial_max});
  });
  m.slices.reserve(built.size());
  for (std::optional<L2Slice>& slice : built) m.slices.push_back(std::move(*slice));
  return m;
}

}  // namespace

SimCounters& SimCounters::operator+=(const SimCounters& o) {
  for (const SimCounterInfo& i : sim_counter_table()) this->*i.field += o.*i.field;
  return *this;
}

std::optional<std::string> set_aside_problem(const Arch& arch, std::uint64_t set_aside) {
  if (set_aside == 0) return std::nullopt;  // the runtime's default, accepted everywhere
  if (arch.l2.persisting_max == 0)
    return fmt::format("{} has no persisting L2 set-aside (l2.persisting_max is 0B)", arch.name);
  if (set_aside > arch.l2.persisting_max)
    return fmt::format("more than {}'s l2.persisting_max, {}: cudaDeviceSetLimit refuses it", arch.name,
                       units::format_size_exact(arch.l2.persisting_max));
  return std::nullopt;
}

// The H100 (validate/results/h100-2026-11-27b/probe, l2_capacity.cu at 0 to 10 of 16 ways set aside, no window):
// reads keep the whole L2 whatever the set-aside, but the footprint a write-only kernel keeps dirty from launch to
// launch shrinks from 8 ways' worth (half its DRAM writes back at 8.5 ways of footprint with 0 or 4 ways set aside)
// to 7.3, 5.3, 4.7 and 3.4 ways' worth at 6, 8, 9 and 10 set aside: 13 less the set-aside, 3 of the ways left kept
// clean (l2.clean_ways_min).
std::uint32_t l2_dirty_ways(const Arch& arch, std::uint32_t persisting_ways) {
  const auto ways = static_cast<std::int64_t>(arch.l2.associativity);
  std::int64_t limit = ways;
  if (arch.l2.dirty_fraction_max > 0)
    limit = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::floor(arch.l2.dirty_fraction_max * static_cast<double>(ways))));
  if (arch.l2.clean_ways_min > 0)
    limit = std::min(limit, std::max<std::int64_t>(
                                1, ways - std::min<std::int64_t>(persisting_ways, ways) - arch.l2.clean_ways_min));
  return limit >= ways ? 0 : static_cast<std::uint32_t>(limit);
}

std::vector<CacheHostState> cache_host_state(const Arch& arch) {
  const double sms_held = std::max(arch.sm.count, 1);
  const bool constant_cached = arch.constant_cache.associativity > 0 && arch.constant_cache.line > 0;
  return {
      {"l2.size", fmt::format("an L2 of {} takes", units::format_size(arch.l2.size)),
       static_cast<double>(arch.l2.size / kLineBytes) * 20},
      {"unified_l1.size", fmt::format("{} L1s of {} take", arch.sm.count, units::format_size(arch.unified_l1.size)),
       static_cast<double>(arch.unified_l1.size / kLineBytes) * 40 * sms_held},
      {"constant_cache.size",
       fmt::format("{} constant caches of {} take", arch.sm.count, units::format_size(arch.constant_cache.size)),
       constant_cached ? static_cast<double>(arch.constant_cache.size / arch.constant_cache.line) * 8 * sms_held : 0}};
}

std::uint64_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_bytes > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_bytes) : 0;
}

std::optional<std::string> window_problem(const Arch& arch, const AccessPolicyWindow& w) {
  if (arch.l2.max_window_size == 0)
    return fmt::format("{} has no L2 access-policy windows (l2.max_window_size is 0B)", arch.name);
  if (w.bytes > arch.l2.max_window_size)
    return fmt::format("{} is more than {}'s l2.max_window_size, {}: the CUDA runtime refuses it",
                       units::format_size_exact(w.bytes), arch.name, units::format_size_exact(arch.l2.max_window_size));
  if (!(w.hit_ratio >= 0 && w.hit_ratio <= 1))
    return fmt::format("hit_ratio {} is outside [0, 1]: the CUDA runtime refuses it", w.hit_ratio);
  if (w.miss_prop == L2Property::persisting)
    return "miss_prop persisting: the CUDA runtime refuses it (a miss's property is normal or streaming)";
  return std::nullopt;
}

std::vector<KernelSim> simulate(const Arch& arch, TraceSource& trace, const SimOptions& options) {
  // Options the architecture refuses fail the call; a trace's refused set-aside and windows are left out of its
  // launch, which says so (L2Residency::left_out).
  if (options.persisting_set_aside)
    if (auto problem = set_aside_problem(arch, *options.persisting_set_aside))
      throw InputError({"SimOptions"}, "persisting_set_aside", *problem);
  if (options.window)
    if (auto problem = window_problem(arch, *options.window)) throw InputError({"SimOptions"}, "window", *problem);
  if (options.window_hit_ratio && !(*options.window_hit_ratio >= 0 && *options.window_hit_ratio <= 1))
    throw InputError({"SimOptions"}, "window_hit_ratio",
                     fmt::format("{} is outside [0, 1]: the CUDA runtime refuses it", *options.window_hit_ratio));
  if (arch.shared_memory.banks < 1 || arch.shared_memory.banks > 64)
    throw InputError({arch.source_file}, "shared_memory.banks", "the bank model handles 1 to 64 banks");
  // Requests carry the SM in 16 bits and partitions in 8.
  if (arch.sm.count > 0xFFFF)
    throw InputError({arch.source_file}, "sm.count", "the simulator handles at most 65535 SMs");
  // L2 placement numbers the sets of all slices in 32 bits (place_in_sets).
  if (arch.l2.associativity > 0 &&
      arch.l2.size / (static_cast<std::uint64_t>(arch.l2.associativity) * kLineBytes) > 0xFFFFFFFFULL)
    throw InputError({arch.source_file}, "l2.size", "the simulator handles at most 2^32 L2 sets");
  if (arch.l2.partitions > 0xFF)
    throw InputError({arch.source_file}, "l2.partitions", "the simulator handles at most 255 partitions");
  // Requests carry their slice group in 16 bits (L2Request).
  if (arch.l2.partitions > 0 && arch.l2.slices / arch.l2.partitions > 0x10000)
    throw InputError({arch.source_file}, "l2.slices", "the simulator handles at most 65536 slices a partition");
  // The coalescer and both cache levels count 32-byte sectors in 128-byte lines, as every NVIDIA GPU since Maxwell
  // has them and ncu counts them; another geometry would be simulated silently wrong.
  const std::pair<const char*, std::uint64_t> geometry[] = {{"l1.line", arch.l1.line},
                                                            {"l1.sector", arch.l1.sector},
                                                            {"l2.line", arch.l2.line},
                                                            {"l2.sector", arch.l2.sector}};
  for (const auto& [key, bytes] : geometry) {
    const bool line = std::string_view(key).ends_with("line");
    if (bytes != (line ? kLineBytes : kSectorBytes))
      throw InputError({arch.source_file}, key,
                       fmt::format("is {} B; the simulator models {} B {}s only", bytes,
                                   line ? kLineBytes : kSectorBytes, line ? "line" : "sector"));
  }
  // Caches whose state this machine's memory cannot hold (cache_host_state()) are refused before they are built: a
  // 100 GiB L2 ended in std::bad_alloc or the out-of-memory killer, 4 GiB L1s or constant caches in the latter, 1 TiB
  // constant caches in a segmentation fault (their 32-bit set counts overflowed).
  const std::uint64_t host_bytes = host_memory_bytes();
  using HostState = CacheHostState;
  const std::vector<HostState> host_state = cache_host_state(arch);
  auto too_large = [](const HostState& h) {
    return fmt::format("{} about {} of host memory to simulate", h.what,
                       units::format_size(static_cast<std::uint64_t>(std::min(h.bytes, 1.8e19))));
  };
  for (const HostState& h : host_state)
    if (host_bytes != 0 && h.bytes > static_cast<double>(host_bytes))
      throw InputError(
          {arch.source_file}, h.key,
          fmt::format("{}, more than this machine has ({})", too_large(h), units::format_size(host_bytes)));
  PhaseClock clock(options.times);
  const std::uint64_t round_requests = std::max<std::uint64_t>(options.round_requests, 1);  // each round issues
  Machine machine;
  try {
    machine = make_machine(arch, options.threads);
  } catch (const std::bad_alloc&) {
    const HostState& largest =
        *std::max_element(std::begin(host_state), std::end(host_state),
                          [](const HostState& a, const HostState& b) { return a.bytes < b.bytes; });
    throw InputError({arch.source_file}, largest.key, too_large(largest) + ", more than the host could allocate");
  }
  clock.lap(&SimPhaseTimes::setup);
  const int num_sms = arch.sm.count;
  std::vector<KernelSim> out;
  KernelLaunch launch;
  std::uint64_t earlier_instructions = 0;  // warp instructions of the launches done (SimProgress)
  std::vector<BlockTrace> blocks;  // of the batch being simulated (those still running move into the schedulers)
  // Kept from launch to launch, emptied rather than rebuilt (a trace of many short kernels would otherwise spend its
  // time building 132 L1s a launch): the SMs' L1s, the request lists and the warp schedulers.
  std::vector<std::optional<SectoredCache>> l1s(static_cast<std::size_t>(arch.sm.count));
  const auto groups = machine.slices.size() / static_cast<std::size_t>(arch.l2.partitions);
  RequestLists lists(groups, static_cast<std::size_t>(num_sms));
  // The TPC merge tables of the slice groups through the rounds of a batch that takes several (see the replay below).
  std::vector<TpcMerge> merges_saved;
  // Each SM's blocks, in launch order, through its places (warp_scheduler.h); started afresh each launch.
  std::vector<WarpScheduler> schedulers(static_cast<std::size_t>(num_sms));
  // Each launch's SM front ends, made in place (an SmFront is over-aligned: 132 aligned allocations a launch cost a
  // trace of 500 short launches 3.5% more host instructions than plain ones).
  std::vector<std::optional<SmFront>> sms(static_cast<std::size_t>(num_sms));
  std::vector<Padded<SimCounters>> group_counters;  // of a round's replay, a slice group each
  std::vector<std::uint16_t> slice_group;           // SmFrontSpec::slice_group and slice_home
  std::vector<std::uint8_t> slice_home;
  for (int slice = 0; slice < arch.l2.slices; ++slice) {
    slice_group.push_back(static_cast<std::uint16_t>(slice / arch.l2.partitions));  // checked above: < 2^16 groups
    slice_home.push_back(static_cast<std::uint8_t>(slice % arch.l2.partitions));
  }
  while (trace.next_kernel(launch)) {
    clock.start();
    KernelSim ks;
    ks.launch = launch;
    LaunchResources res;
    res.threads_per_block = static_cast<int>(launch.block.count());
    // 0 = not recorded (some imported traces): registers then do not limit occupancy, an upper bound.
    res.registers_per_thread = static_cast<int>(launch.registers_per_thread);
    res.static_shared_bytes = launch.static_shared_bytes;
    res.dynamic_shared_bytes = launch.dynamic_shared_bytes;
    try {
      ks.occupancy = compute_occupancy(arch, res);
    } catch (const InputError&) {  // a launch a trace describes: it names the trace
      rethrow_naming(launch, std::current_exception());
    }
    if (ks.occupancy.blocks_per_sm == 0)
      throw InputError({launch.source}, launch.name,
                       fmt::format("cannot run on {}: {}", arch.name, ks.occupancy.not_launchable));
    SimCounters& total = ks.counters;
    // L2 residency control for this launch: the options' (checked above), else the trace's, less what the runtime
    // refuses on this architecture. A refused cudaDeviceSetLimit leaves the set-aside as it was (the H100 probe of
    // 2026-11-27), which for a trace whose every launch asks the same is none; a refused window is not in effect.
    L2Residency& residency = ks.residency;
    residency.set_aside_requested = options.persisting_set_aside.value_or(launch.persisting_set_aside_bytes);
    std::uint64_t set_aside = residency.set_aside_requested;
    auto leave_out = [&](const std::string& what) {
      residency.left_out += (residency.left_out.empty() ? "" : "; ") + what;
    };
    if (auto problem = set_aside_problem(arch, set_aside)) {
      leave_out(fmt::format("set-aside {} left out: {}", units::format_size_exact(set_aside), *problem));
      set_aside = 0;
    }
    for (AccessPolicyWindow w : options.window ? std::vector<AccessPolicyWindow>{*options.window} : launch.windows) {
      if (options.window_hit_ratio) w.hit_ratio = *options.window_hit_ratio;
      if (auto problem = window_problem(arch, w)) {
        leave_out(fmt::format("window {:#x}+{} left out: {}", w.base, units::format_size_exact(w.bytes), *problem));
      } else {
        residency.windows.push_back(w);
      }
    }
    // The driver grants the set-aside in whole ways, rounding up: on the H100 (16 ways of 3.125 MiB) 4 MiB asked gives
    // 6.25 MiB, 8 gives 9.375, 16 gives 18.75 (cudaDeviceGetLimit after cudaDeviceSetLimit; validate/results/
    // h100-2026-11-22f/probe/persisting_l2.json).
    const auto ways = static_cast<std::uint64_t>(arch.l2.associativity);
    const auto persist_ways =
        static_cast<std::uint32_t>(std::min(ways, (set_aside * ways + arch.l2.size - 1) / arch.l2.size));
    residency.persisting_ways = persist_ways;
    residency.set_aside_granted = ways == 0 ? 0 : arch.l2.size / ways * persist_ways;
    residency.dirty_ways = l2_dirty_ways(arch, persist_ways);
    for (L2Slice& s : machine.slices) {
      if (options.flush_between_launches) s.flush(total);
      if (launch.reset_persisting) s.demote_persisting();
      s.set_persisting_ways(persist_ways);
      s.set_dirty_ways(residency.dirty_ways);
    }
    if (options.flush_between_launches) {  // write-backs of the previous launch are not this one's traffic
      total = {};
      for (L2Slice& s : machine.slices) {
        s.forget_channel_bytes();
        s.close_rows();
      }
    }
    ks.dram_channel_read_bytes.assign(static_cast<std::size_t>(arch.dram.channels), 0);
    ks.dram_channel_write_bytes.assign(static_cast<std::size_t>(arch.dram.channels), 0);
    const PolicyMap policy(residency.windows);
    SmFrontSpec spec;
    spec.paired_blocks = static_cast<std::size_t>(num_sms) * static_cast<std::size_t>(ks.occupancy.blocks_per_sm);
    spec.tpc_merge = arch.l1.miss_merge_sms == 2;
    spec.grid_x = launch.grid.x;
    spec.grid_y = launch.grid.y;
    spec.l1.line_bytes = arch.l1.line;
    spec.l1.sector_bytes = arch.l1.sector;
    // The carveout's capacity split into sets of the arch's ways, or ways of its sets (validated: one of the two).
    const std::uint64_t l1_lines = ks.occupancy.l1_capacity / arch.l1.line;
    const auto fixed = static_cast<std::uint64_t>(arch.l1.ways > 0 ? arch.l1.ways : arch.l1.sets);
    const std::uint64_t follows = l1_lines / fixed;  // lines past a whole number of them are left out
    spec.l1_enabled = follows > 0;
    spec.l1.sets = static_cast<std::uint32_t>(arch.l1.ways > 0 ? std::max<std::uint64_t>(follows, 1) : fixed);
    spec.l1.ways = static_cast<std::uint32_t>(arch.l1.ways > 0 ? fixed : std::max<std::uint64_t>(follows, 1));
    const bool l1_plru = arch.l1.replacement == Replacement::plru;
    spec.banks = static_cast<unsigned>(arch.shared_memory.banks);
    spec.bank_bytes = static_cast<unsigned>(arch.shared_memory.bank_width);
    spec.local_base = kLocalWindowBase;
    // The driver allocates local memory for every thread slot of every SM (MAX_THREADS_PER_SM x SMs x local bytes a
    // thread, context-wide: NVIDIA's answer on forums.developer.nvidia.com/t/local-memory-management/289339), so a
    // thread's local words belong to the slot it runs in, and later waves reuse the addresses of earlier ones.
    const std::uint64_t max_threads_per_sm =
        std::max<std::uint64_t>(static_cast<std::uint64_t>(std::max(arch.sm.max_threads_per_sm, 0)),
                                static_cast<std::uint64_t>(ks.occupancy.blocks_per_sm) * launch.block.count());
    spec.local_threads = max_threads_per_sm * static_cast<std::uint64_t>(num_sms);
    spec.slices = arch.l2.slices;
    spec.l2_sets = static_cast<std::uint64_t>(arch.l2.slices) * machine.slices.front().sets();
    spec.partitions = arch.l2.partitions;
    spec.slice_group = slice_group.data();
    spec.slice_home = slice_home.data();
    auto cycles = [](double c) { return static_cast<std::uint32_t>(std::max(1.0, std::round(c))); };
    spec.l1_latency = cycles(arch.l1.latency_cycles);
    spec.l2_latency = cycles((arch.l2.near_latency_cycles + arch.l2.far_latency_cycles) / 2);
    spec.shared_latency = cycles(arch.shared_memory.latency_cycles);
    spec.constant_latency = cycles(arch.constant_cache.latency_cycles);
    spec.async_copy_predicated_loads = static_cast<std::uint32_t>(arch.shared_memory.async_copy_predicated_loads);
    spec.dram_row_line_shift = static_cast<unsigned>(std::countr_zero(arch.dram.row_bytes / kLineBytes));  // validated
    spec.bulk_bytes_max = std::max(arch.shared_memory.max_per_block_optin, arch.shared_memory.per_block_default);
    if (arch.constant_cache.associativity > 0) {  // validated: a power-of-two number of sets
      spec.constant_ways = static_cast<std::uint32_t>(arch.constant_cache.associativity);
      spec.constant_sets =
          static_cast<std::uint32_t>(arch.constant_cache.size / arch.constant_cache.line / spec.constant_ways);
      spec.constant_line_shift = static_cast<unsigned>(std::countr_zero(arch.constant_cache.line));
    }
    const std::uint32_t barrier_latency = cycles(arch.shared_memory.barrier_latency_cycles);
    // Each SM's L1: the previous launch's, emptied, else a new one. In parallel: an L1 is hundreds of KiB to clear.
    parallel_for(options.threads, sms.size(), [&](std::size_t s) {
      std::optional<SectoredCache>& l1 = l1s[s];
      if (l1 && l1->geometry() == spec.l1 && l1->plru() == l1_plru) {
        l1->reset();
      } else {
        l1.emplace(spec.l1, l1_plru);
      }
      sms[s].emplace(spec, policy, lists, static_cast<int>(s), *l1);
    });

    const std::size_t wave_blocks = spec.paired_blocks;
    const auto sm_count = static_cast<std::size_t>(num_sms);
    const int parts = arch.l2.partitions;
    double warp_weight = 0, instr_weight = 0;
    std::uint64_t launch_instructions = 0;
    double requests_per_lane = 1;     // per lane issued, of the previous batch (one a lane until one has run)
    std::vector<std::size_t> active;  // SMs that made requests in the batch
    std::size_t ready = 0;            // blocks read ahead: blocks[0, ready) at the start of a batch
    std::size_t wave_addresses = 0;   // lane addresses of the last whole wave read
    bool in_parts = false;            // a wave read had a block in parts
    // A block's threads take the thread slots of its place (local memory belongs to the slot, not to the thread: see
    // spec.local_threads).
    const std::size_t warps_per_block = (launch.block.count() + kWarpSize - 1) / kWarpSize;
    for (std::size_t s = 0; s < sm_count; ++s) {
      std::vector<std::uint64_t> bases;
      bases.reserve(static_cast<std::size_t>(std::max(ks.occupancy.blocks_per_sm, 0)));
      for (int p = 0; p < ks.occupancy.blocks_per_sm; ++p)
        bases.push_back(s * max_threads_per_sm + static_cast<std::uint64_t>(p) * launch.block.count());
      schedulers[s].start(bases, warps_per_block, barrier_latency,
                          static_cast<std::size_t>(std::max(arch.sm.sub_partitions, 1)));
    }
    clock.lap(&SimPhaseTimes::setup);
    bool trace_done = false;
    for (;;) {
      // A batch of waves: blocks [wave_end[w - 1], wave_end[w]) form wave w.
      std::vector<std::size_t> wave_end;
      std::size_t n = 0, lane_addresses = 0;
      clock.start();
      while (wave_end.size() < kBatchWaves && lane_addresses < kBatchAddresses &&
             static_cast<double>(lane_addresses) * requests_per_lane < kBatchRequests) {
        const std::size_t start = n;
        if (ready < start + wave_blocks) {
          // With several threads, read the waves the batch will probably still take (at the last whole wave's
          // addresses) in one call, which a source can decode in parallel (MhtReader: chunk by chunk); blocks past the
          // batch go to the next one. Where later waves are larger than that estimate, up to kBatchWaves waves are
          // read at once (reading wave by wave, as one thread does, holds at most one wave past kBatchAddresses).
          std::size_t ahead = 1;
          if (wave_addresses != 0 && options.threads > 1 && !in_parts) {
            auto room = static_cast<double>(kBatchAddresses - lane_addresses);
            if (requests_per_lane > 0)
              room = std::min(room, kBatchRequests / requests_per_lane - static_cast<double>(lane_addresses));
            ahead = static_cast<std::size_t>(std::clamp(std::ceil(room / static_cast<double>(wave_addresses)), 1.0,
                                                        static_cast<double>(kBatchWaves - wave_end.size())));
          }
          if (blocks.size() < start + ahead * wave_blocks) {
            blocks.resize(start + ahead * wave_blocks);
            for (BlockTrace& b : blocks) {
              b.compact_strided = true;  // SmFront reads lanes through a LaneBuffer
              b.part_records = kPartRecords;
            }
          }
          ready += trace.next_blocks({blocks.data() + ready, start + ahead * wave_blocks - ready}, options.threads);
        }
        n = std::min(ready, start + wave_blocks);
        std::size_t addresses = 0;
        bool parted = false;
        for (std::size_t i = start; i < n; ++i) {
          addresses += blocks[i].lanes;
          parted |= static_cast<bool>(blocks[i].rest);
        }
        lane_addresses += addresses;
        if (n != start) wave_end.push_back(n);
        if (n - start < wave_blocks) break;  // the launch's last wave
        // A wave with a block in parts ends its batch, and later waves are read one at a time: their first parts'
        // addresses say nothing of the blocks' length (matmul_naive at n=1024 as a .mht trace read its four waves
        // at once, 2.1 GB).
        in_parts |= parted;
        if (parted) break;
        wave_addresses = std::max<std::size_t>(addresses, 1);
      }
      clock.lap(&SimPhaseTimes::read);
      // The launch's last wave was partial, or nothing more came: the blocks still running finish in this batch.
      if (wave_end.empty() || n - (wave_end.size() > 1 ? wave_end[wave_end.size() - 2] : 0) < wave_blocks)
        trace_done = true;
      if (wave_end.empty() &&
          std::none_of(schedulers.begin(), schedulers.end(), [](const WarpScheduler& w) { return w.busy(); }))
        break;
      const std::size_t waves = wave_end.size();
      total.waves += waves;
      total.blocks += n;
      std::vector<std::uint64_t> resident(sm_count, 0), issued(sm_count, 0), requests(sm_count, 0), lanes(sm_count, 0);
      // Rounds (see round_requests above): every SM in the first, then those that stopped full, until every SM has
      // issued its blocks of the batch and every request is replayed.
      std::vector<std::uint8_t> to_run(sm_count, 1);
      std::vector<std::size_t> take(sm_count, 0);  // requests of each SM's list the round replays
      // An SM's error (a block's next part may be a bad one: a description's index out of its array), the lowest SM's
      // raised after the round, whatever the threads (none may leave a parallel region).
      std::vector<std::exception_ptr> failed(sm_count);
      for (bool first_round = true;; first_round = false) {
        clock.start();
#pragma omp parallel for num_threads(options.threads) schedule(dynamic, 1)
        for (int si = 0; si < num_sms; ++si) {
          const auto s = static_cast<std::size_t>(si);
          SmFront& sm = *sms[s];
          sm.begin_round();
          // Blocks to SMs in launch order, wave by wave (block j of a wave on SM j mod SMs); on each SM a block starts
          // when one of the SM's earlier ones ends (WarpScheduler), so the batch's requests are one timeline an SM.
          // Each SM takes its own, on its thread: handed out by one thread, the streaming benchmark's 32768 blocks
          // took 0.5 ms of its 100 ms on one thread (this project's VM), a serial part whatever the threads.
          std::uint64_t lanes_given = 0;  // of the batch's blocks the SM takes
          if (first_round)
            for (std::size_t w = 0; w < waves; ++w)
              for (std::size_t i = (w == 0 ? 0 : wave_end[w - 1]) + s; i < wave_end[w]; i += sm_count) {
                schedulers[s].push(&blocks[i]);
                lanes_given += blocks[i].lanes;
              }
          if (to_run[s] != 0) {
            // Other SMs' tables and the requests have pushed this SM's L1 out of the host's caches since its last run
            // (a later round: it stopped with work left).
            sm.warm_l1(first_round ? lanes_given : ~std::uint64_t{0});
            const std::uint64_t before = sm.counters.warp_instructions;
            try {
              to_run[s] = run_sm(sm, schedulers[s], trace_done, lists.issued(s).size(), round_requests) ? 1 : 0;
            } catch (...) {
              failed[s] = std::current_exception();
              to_run[s] = 0;
            }
            resident[s] = std::max(resident[s], schedulers[s].resident_warps());
            issued[s] += sm.counters.warp_instructions - before;
          }
          // All of it, unless an SM stopped (below); one that stopped is sorted there only, by the earliest stop.
          take[s] = lists.issued(s).size();
          if (to_run[s] == 0) lists.sort_by_group(s, take[s]);
        }
        for (const std::exception_ptr& e : failed)
          if (e) rethrow_naming(launch, e);
        // The earliest cycle an SM stopped at: requests before it are all issued (lists go in cycle order).
        std::uint64_t until = ~std::uint64_t{0};
        for (std::size_t s = 0; s < sm_count; ++s)
          if (to_run[s] != 0) until = std::min(until, schedulers[s].now());
        if (until != ~std::uint64_t{0}) {
#pragma omp parallel for num_threads(options.threads) schedule(dynamic, 1)
          for (int si = 0; si < num_sms; ++si) {
            const auto s = static_cast<std::size_t>(si);
            const std::vector<L2Request>& list = lists.issued(s);
            take[s] = static_cast<std::size_t>(
                std::partition_point(list.begin(), list.end(), [&](const L2Request& r) { return r.cycle < until; }) -
                list.begin());
            lists.sort_by_group(s, take[s]);
          }
        }
        clock.lap(&SimPhaseTimes::sm);
        for (std::size_t s = 0; s < sm_count; ++s) {
          requests[s] += sms[s]->requests();
          lanes[s] += sms[s]->lanes_issued();
          // The replay packs a request's cycle and SM into one 64-bit key (cycle << 16 | SM).
          if (sms[s]->last_cycle() >= kMaxCycle)
            throw InputError(
                {launch.source}, launch.name,
                fmt::format("the launch runs past {} issue cycles on one SM (the trace's work counts are too large "
                            "to simulate)",
                            kMaxCycle));
        }
        // The SMs with requests to replay (a launch of a few blocks has a few): the replay looks at no other.
        active.clear();
        for (std::size_t s = 0; s < sm_count; ++s)
          if (take[s] != 0) active.push_back(s);
        // Slice groups are independent (a line's home and its copies sit in one group), so they replay in parallel.
        group_counters.assign(groups, {});
        if (until != ~std::uint64_t{0} && merges_saved.size() != groups) merges_saved.resize(groups);
        clock.start();
#pragma omp parallel for num_threads(options.threads) schedule(dynamic, 1)
        for (int gi = 0; gi < static_cast<int>(groups); ++gi) {
          const auto g = static_cast<std::size_t>(gi);
          SimCounters& sc = group_counters[g].value;
          L2Slice* group = &machine.slices[g * static_cast<std::size_t>(parts)];
          // Reads the other SM of the TPC has in flight for the same sectors (tpc_merge.h): 128 KiB of table a host
          // thread, kept from batch to batch (warm in its caches). A batch in several rounds keeps a table a group
          // from the end of its first round (merges_saved), so that a read of one round merges with one of the round
          // before, whichever thread replays it.
          thread_local TpcMerge local;
          TpcMerge& merge = first_round ? local : merges_saved[g];
          auto replay = [&](const L2Request& request, std::size_t sm) {
            if (request.paired != 0) {
              const std::uint32_t merged = merge.merged(request, sm);
              if (merged != 0) {
                sc.l2_merged_sectors += static_cast<std::uint64_t>(std::popcount(merged));
                L2Request r = request;
                r.sectors = static_cast<std::uint8_t>(r.sectors & ~merged);
                if (r.sectors != 0) L2Slice::serve(group, parts, r, sc);
                return;
              }
            }
            L2Slice::serve(group, parts, request, sc);
          };
          thread_local ReplayOrder order;  // its scratch kept from batch to batch
          if (first_round) merge.begin(spec.l2_latency);
          // The sets a request will look up, into the host's caches kAhead requests before its replay (a set's block
          // is four host lines: set_cache.h). memhier_bench_sim on this project's VM, one thread: transpose_tiled
          // 71-72 -> 63-65 ms, streaming -1 to -3%, the gather -1 to -2%; a read's TPC merge set as well: the
          // gather 271-281 -> 264-265 ms. On the GPU machine's Xeon, whose 300 MiB L3 holds the whole simulated L2,
          // transpose_tiled gains and the others move within that host's spread
          // (bench/results/compare-gpu-machine-2026-11-27-session48).
          auto ahead = [&](const L2Request& r, std::size_t sm) {
            if (r.paired != 0) merge.prefetch(r.line, sm);
            // The requester's partition's set too, without a test (a request is near or far at random in a gather:
            // the host mispredicted that test on half of them); for a near request it is the same set again.
            group[r.home].prefetch(r.set);
            group[r.from].prefetch(r.set);
          };
          order.for_each(lists, g, active, sm_count, replay, ahead);
          if (first_round && until != ~std::uint64_t{0}) merges_saved[g] = local;
        }
        clock.lap(&SimPhaseTimes::l2);
        for (const Padded<SimCounters>& c : group_counters) total += c.value;
        for (std::size_t s = 0; s < sm_count; ++s) lists.drop_replayed(s, take[s]);
        if (until == ~std::uint64_t{0}) break;  // no SM stopped: every list was replayed whole
        if (options.progress) {                 // a batch of long blocks goes in many rounds
          std::uint64_t so_far = earlier_instructions + launch_instructions;
          for (const std::uint64_t i : issued) so_far += i;
          options.progress({out.size(), launch.name, total.blocks, launch.grid.count(), so_far, false});
        }
      }
      std::uint64_t batch_requests = 0, batch_lanes = 0, batch_instr = 0, batch_warps = 0;
      for (std::size_t s = 0; s < sm_count; ++s) {
        batch_requests += requests[s];
        batch_lanes += lanes[s];
        batch_instr += issued[s];
        batch_warps += resident[s];
      }
      requests_per_lane =
          static_cast<double>(batch_requests) / static_cast<double>(std::max<std::uint64_t>(batch_lanes, 1));
      warp_weight += static_cast<double>(batch_warps) / num_sms * static_cast<double>(batch_instr);
      instr_weight += static_cast<double>(batch_instr);
      for (std::size_t i = n; i < ready; ++i) std::swap(blocks[i - n], blocks[i]);  // read ahead: the next batch's
      ready -= n;
      launch_instructions += batch_instr;
      if (options.progress)
        options.progress({out.size(), launch.name, total.blocks, launch.grid.count(),
                          earlier_instructions + launch_instructions, false});
    }
    for (std::optional<SmFront>& sm : sms) {
      total += sm->counters;
      sm.reset();  // before this launch's policy, which it refers to
    }
    ks.achieved_warps_per_sm = instr_weight > 0 ? warp_weight / instr_weight : 0;
    for (L2Slice& s : machine.slices) s.take_channel_bytes(ks.dram_channel_read_bytes, ks.dram_channel_write_bytes);
    earlier_instructions += total.warp_instructions;
    if (options.progress)
      options.progress({out.size(), launch.name, total.blocks, launch.grid.count(), earlier_instructions, true});
    out.push_back(std::move(ks));
  }
  return out;
}

}  // namespace memhier
