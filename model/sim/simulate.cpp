// The simulation driver: blocks to SMs in waves as occupancy allows; each SM issues its resident warps' memory
// instructions greedy-then-oldest, cycle by cycle, as loads' latencies and barriers let them (warp_scheduler.h); then
// the L2 replays the SMs' sector requests in issue-cycle order across all SMs, group of slices by group (a line's home
// slice and its copies in the other partitions form one group). SMs and groups are independent within a wave, so
// both phases run in parallel with results identical to one thread.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <queue>
#include <string_view>
#include <utility>

#include "../l2/l2_slice.h"
#include "memhier/error.h"
#include "memhier/sim.h"
#include "sm_front.h"
#include "warp_scheduler.h"

namespace memhier {
namespace {

constexpr std::uint64_t kLocalWindowBase = 0x00007ffe01000000ULL;  // away from descriptions' global heap
// Row locality is counted on 1 KiB rows: the HBM2/HBM3 page size per pseudo-channel (JEDEC JESD235, JESD238). Every
// shipped arch has HBM or GDDR with pages of at least that size; a DRAM page key in the arch would make it exact.
constexpr std::uint64_t kDramRowBytes = 1024;

// Issues one SM's share of a wave (see warp_scheduler.h); returns the resident warps it held.
std::uint64_t run_sm(SmFront& sm, const std::vector<Resident>& blocks, std::uint32_t barrier_latency) {
  return schedule_warps(blocks, barrier_latency, sm.counters,
                        [&](const BlockTrace& b, const WarpRecord& r, std::uint64_t cycle, std::uint32_t slot,
                            std::uint64_t thread_base) { return sm.issue(b, r, cycle, slot, thread_base); },
                        [&](const BlockTrace& b, const WarpRecord& r) { sm.prefetch(b, r); });
}

struct Machine {
  std::vector<L2Slice> slices;
  std::uint64_t slice_lines = 0;
};

Machine make_machine(const Arch& arch) {
  Machine m;
  const L2Spec& l2 = arch.l2;
  CacheGeometry g{l2.line, l2.sector, 0, static_cast<std::uint32_t>(l2.associativity)};
  g.sets = static_cast<std::uint32_t>(l2.size / (static_cast<std::uint64_t>(l2.slices) * l2.associativity * l2.line));
  for (int s = 0; s < l2.slices; ++s)
    m.slices.emplace_back(
        L2SliceSpec{g, l2.dram_fetch_granularity, s % l2.partitions, l2.partitions, kDramRowBytes, l2.slice_width});
  return m;
}

}  // namespace

SimCounters& SimCounters::operator+=(const SimCounters& o) {
  for (const SimCounterInfo& i : sim_counter_table()) this->*i.field += o.*i.field;
  return *this;
}

std::vector<KernelSim> simulate(const Arch& arch, TraceSource& trace, const SimOptions& options) {
  if (arch.shared_memory.banks < 1 || arch.shared_memory.banks > 64)
    throw InputError({arch.source_file}, "shared_memory.banks", "the bank model handles 1 to 64 banks");
  // The coalescer and both cache levels count 32-byte sectors in 128-byte lines, as every NVIDIA GPU since Maxwell
  // has them and ncu counts them; another geometry would be simulated silently wrong.
  const std::pair<const char*, std::uint64_t> geometry[] = {
      {"l1.line", arch.l1.line}, {"l1.sector", arch.l1.sector}, {"l2.line", arch.l2.line}, {"l2.sector", arch.l2.sector}};
  for (const auto& [key, bytes] : geometry) {
    const bool line = std::string_view(key).ends_with("line");
    if (bytes != (line ? kLineBytes : kSectorBytes))
      throw InputError({arch.source_file}, key,
                       fmt::format("is {} B; the simulator models {} B {}s only", bytes, line ? kLineBytes : kSectorBytes,
                                   line ? "line" : "sector"));
  }
  Machine machine = make_machine(arch);
  const int num_sms = arch.sm.count;
  std::vector<KernelSim> out;
  KernelLaunch launch;
  std::vector<BlockTrace> wave;
  while (trace.next_kernel(launch)) {
    KernelSim ks;
    ks.launch = launch;
    LaunchResources res;
    res.threads_per_block = static_cast<int>(launch.block.count());
    // 0 = not recorded (some imported traces): registers then do not limit occupancy, an upper bound.
    res.registers_per_thread = static_cast<int>(launch.registers_per_thread);
    res.static_shared_bytes = launch.static_shared_bytes;
    res.dynamic_shared_bytes = launch.dynamic_shared_bytes;
    ks.occupancy = compute_occupancy(arch, res);
    if (ks.occupancy.blocks_per_sm == 0)
      throw InputError({launch.source}, launch.name,
                       fmt::format("cannot run on {}: {}", arch.name, ks.occupancy.not_launchable));
    SimCounters& total = ks.counters;
    // L2 residency control for this launch.
    std::uint64_t set_aside = options.persisting_set_aside.value_or(launch.persisting_set_aside_bytes);
    set_aside = std::min(set_aside, arch.l2.persisting_max);
    const auto persist_ways = static_cast<std::uint32_t>(set_aside * static_cast<std::uint64_t>(arch.l2.associativity) / arch.l2.size);
    for (L2Slice& s : machine.slices) {
      if (options.flush_between_launches) s.flush(total);
      if (launch.reset_persisting) s.demote_persisting();
      s.set_persisting_ways(persist_ways);
    }
    if (options.flush_between_launches) total = {};  // write-backs of the previous launch are not this one's traffic
    const PolicyMap policy(options.window ? std::vector<AccessPolicyWindow>{*options.window} : launch.windows);
    SmFrontSpec spec;
    spec.l1.line_bytes = arch.l1.line;
    spec.l1.sector_bytes = arch.l1.sector;
    spec.l1.sets = static_cast<std::uint32_t>(arch.l1.sets);
    const std::uint64_t l1_ways = ks.occupancy.l1_capacity / (arch.l1.line * static_cast<std::uint64_t>(arch.l1.sets));
    spec.l1_enabled = l1_ways > 0;
    spec.l1.ways = static_cast<std::uint32_t>(std::max<std::uint64_t>(l1_ways, 1));
    spec.banks = static_cast<unsigned>(arch.shared_memory.banks);
    spec.bank_bytes = static_cast<unsigned>(arch.shared_memory.bank_width);
    spec.local_base = kLocalWindowBase;
    spec.threads_in_grid = launch.grid.count() * launch.block.count();
    spec.slices = arch.l2.slices;
    spec.partitions = arch.l2.partitions;
    auto cycles = [](double c) { return static_cast<std::uint32_t>(std::max(1.0, std::round(c))); };
    spec.l1_latency = cycles(arch.l1.latency_cycles);
    spec.l2_latency = cycles((arch.l2.near_latency_cycles + arch.l2.far_latency_cycles) / 2);
    spec.shared_latency = cycles(arch.shared_memory.latency_cycles);
    spec.constant_latency = cycles(arch.constant_cache.latency_cycles);
    const std::uint32_t barrier_latency = cycles(arch.shared_memory.barrier_latency_cycles);
    std::vector<std::unique_ptr<SmFront>> sms;
    sms.reserve(static_cast<std::size_t>(num_sms));
    for (int s = 0; s < num_sms; ++s) sms.push_back(std::make_unique<SmFront>(spec, policy, s));

    const std::size_t wave_blocks = static_cast<std::size_t>(num_sms) * static_cast<std::size_t>(ks.occupancy.blocks_per_sm);
    double warp_weight = 0, instr_weight = 0;
    for (;;) {
      wave.resize(wave_blocks);
      std::size_t n = 0;
      while (n < wave_blocks && trace.next_block(wave[n])) ++n;
      if (n == 0) break;
      ++total.waves;
      total.blocks += n;
      std::vector<std::vector<Resident>> per_sm(static_cast<std::size_t>(num_sms));
      for (std::size_t i = 0; i < n; ++i) {
        const Dim3& ix = wave[i].index;
        const std::uint64_t linear = ix.x + std::uint64_t{launch.grid.x} * (ix.y + std::uint64_t{launch.grid.y} * ix.z);
        per_sm[i % static_cast<std::size_t>(num_sms)].push_back({&wave[i], linear * launch.block.count()});
      }
      std::vector<std::uint64_t> resident(static_cast<std::size_t>(num_sms), 0);
      std::vector<std::uint64_t> issued(static_cast<std::size_t>(num_sms), 0);
#pragma omp parallel for num_threads(options.threads) schedule(dynamic, 1)
      for (int s = 0; s < num_sms; ++s) {
        SmFront& sm = *sms[static_cast<std::size_t>(s)];
        const std::uint64_t before = sm.counters.warp_instructions;
        resident[static_cast<std::size_t>(s)] = run_sm(sm, per_sm[static_cast<std::size_t>(s)], barrier_latency);
        issued[static_cast<std::size_t>(s)] = sm.counters.warp_instructions - before;
      }
      std::uint64_t wave_instr = 0, wave_warps = 0;
      for (int s = 0; s < num_sms; ++s) {
        wave_instr += issued[static_cast<std::size_t>(s)];
        wave_warps += resident[static_cast<std::size_t>(s)];
      }
      warp_weight += static_cast<double>(wave_warps) / num_sms * static_cast<double>(wave_instr);
      instr_weight += static_cast<double>(wave_instr);
      // Slice groups are independent (a line's home and its copies sit in one group), so they replay in parallel.
      const int parts = arch.l2.partitions;
      const int groups = static_cast<int>(machine.slices.size()) / parts;
      std::vector<SimCounters> group_counters(static_cast<std::size_t>(groups));
#pragma omp parallel for num_threads(options.threads) schedule(dynamic, 1)
      for (int gi = 0; gi < groups; ++gi) {
        // Each SM's list is in (cycle, order) order and order starts with the SM number, so taking cycle by cycle
        // each SM's requests in SM order replays the global issue order without sorting.
        const auto g = static_cast<std::size_t>(gi);
        SimCounters& sc = group_counters[g];
        L2Slice* group = &machine.slices[g * static_cast<std::size_t>(parts)];
        auto replay = [&](const L2Request& r) {
          // A far request goes through the copy in its own partition first; the home slice sees what it lacked.
          const int home = r.slice % parts, from = r.sm % parts;
          const std::uint32_t forward = home == from ? r.sectors : group[from].near(r, sc);
          if (forward != 0) group[home].home(r, forward, home != from, sc);
          if (r.op != L2Op::read)  // the data changed: copies elsewhere are stale (near() dropped the requester's)
            for (int p = 0; p < parts; ++p)
              if (p != home && p != from) group[p].drop_copy(r.line);
        };
        // A merge of the SMs' lists by (cycle, SM): the earliest cycle first, SMs in order within a cycle.
        using Head = std::pair<std::uint64_t, std::size_t>;  // (cycle of the SM's next request, SM)
        std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
        std::vector<std::size_t> next(sms.size(), 0);
        for (std::size_t s = 0; s < sms.size(); ++s)
          if (!sms[s]->to_group[g].empty()) heads.emplace(sms[s]->to_group[g].front().cycle, s);
        while (!heads.empty()) {
          const auto [cycle, s] = heads.top();
          heads.pop();
          const auto& v = sms[s]->to_group[g];
          std::size_t& i = next[s];
          for (; i < v.size() && v[i].cycle == cycle; ++i) replay(v[i]);
          if (i < v.size()) heads.emplace(v[i].cycle, s);
        }
        for (auto& sm : sms) sm->to_group[g].clear();
      }
      for (const SimCounters& c : group_counters) total += c;
    }
    for (auto& sm : sms) total += sm->counters;
    ks.achieved_warps_per_sm = instr_weight > 0 ? warp_weight / instr_weight : 0;
    out.push_back(std::move(ks));
  }
  return out;
}

}  // namespace memhier
