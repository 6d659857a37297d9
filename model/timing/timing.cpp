// Timing model: each resource's work over its throughput, a block-scheduling term and a latency term for the loads each
// warp waits on, combined by how well they overlap (see overlap()), plus the launch overhead. Constants all come from
// the arch file.
//
// Wave quantization and tails: SM-local resources (L1, shared memory, constant cache, issue) are as busy as the SM
// with the most blocks (blocks go round-robin, so ceil(blocks / SMs) of them), not the average; the latency term
// counts whole waves, since a warp's waits cannot overlap each other and a partial last wave takes as long as a full
// one. Device-wide resources (L2, DRAM) serve every SM and need no such correction.
#include "memhier/timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "memhier/units.h"

namespace memhier {
namespace {

double safe_div(double a, double b) { return b > 0 ? a / b : 0.0; }
std::string megabytes(std::uint64_t bytes) { return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6); }

// The time of concurrent activities. DRAM and L2 form one pipeline, as fast as its slower stage, and so do the SM's
// own memory pipes (L1, shared memory, constant cache); those two, issue, block scheduling and the latency waits
// overlap imperfectly, as the k-norm of their times (k = 1 adds them up, a large k takes the largest). H100,
// 256-thread blocks spinning S cycles against the block scheduler's rate: the measured times follow k = 2.5 to 3
// within 3% (validate/results/h100-2026-11-22c/probe/block_dispatch.json).
double overlap(const std::vector<TimeTerm>& terms, double k) {
  double device = 0, sm = 0, sum = 0;
  for (const TimeTerm& t : terms) {
    if (t.name == "dram" || t.name == "l2")
      device = std::max(device, t.seconds);
    else if (t.name == "l1" || t.name == "shared" || t.name == "constant")
      sm = std::max(sm, t.seconds);
    else
      sum += std::pow(t.seconds, k);
  }
  return std::pow(sum + std::pow(device, k) + std::pow(sm, k), 1 / k);
}

}  // namespace

double setaside_write_cost(const Arch& arch, std::uint32_t ways) {
  const std::vector<double>& cost = arch.l2.setaside_write_cost;
  if (cost.empty()) return 0;
  return cost[std::min<std::size_t>(ways, cost.size() - 1)] * 1e-12;
}

Prediction predict(const Arch& arch, const KernelSim& sim, const PredictOptions& options) {
  const SimCounters& c = sim.counters;
  Prediction p;
  p.kernel = sim.launch.name;
  p.idle_gpu = options.idle_gpu;
  p.launch_seconds = options.idle_gpu ? arch.launch_idle_overhead_seconds : arch.launch_overhead_seconds;
  const double clock = arch.sm_clock_hz;
  p.active_sms = static_cast<int>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(arch.sm.count), std::max<std::uint64_t>(c.blocks, 1)));
  const double sms = p.active_sms;
  p.warps_per_sm = std::max(sim.achieved_warps_per_sm, 1.0);
  const auto blocks = static_cast<double>(std::max<std::uint64_t>(c.blocks, 1));
  // SM-local work is spread over `sms` SMs but the busiest holds ceil(blocks / SMs) blocks.
  const double tail = std::ceil(blocks / sms) * sms / blocks;

  // DRAM: the bytes at the effective (streaming) bandwidth, and the rows the accesses open (l2_slice.h) at the arch's
  // activation rates, reads and write-backs apart, the two as a k-norm with the arch's exponent (they overlap as the
  // other activities do). H100, 256 MiB moved in runs of k 64-byte granules at random places of 2 GiB
  // (validate/probe/dram_locality.cu): reads take 1.44x a stream's time at k = 1, 1.08x at k = 2, at most 1.05x from
  // k = 4; writes 1.96x, 1.13x and 1.02x. With the rates fitted at k = 1 the model predicts those and single granules
  // within 256 MiB to 1 GiB, 28 configurations, within 7.1%, 1.7% on average (validate/results/h100-2026-11-25b/probe,
  // compare_dram_locality.py).
  const auto dram_bytes = static_cast<double>(c.dram_read_bytes + c.dram_write_bytes);
  // A large persisting set-aside slows write-backs, whether or not a line persists (H100: validate/results/
  // h100-2026-11-27c/probe): with 9 and 10 of 16 ways set aside, streams that write take 1.34-2.26x their time, the
  // DRAM bytes the same, where a read-only one does not change. Each byte written back costs l2.setaside_write_cost
  // (by the ways set aside, picoseconds) more, half of that where writes come alone (a write-only stream slows less
  // than a copy) and as much again as reads come with them. The cost is a time, not a share of the DRAM's: the H200,
  // whose DRAM is 1.4x as fast, loses as many microseconds as the H100 (validate/results/h200-2026-11-27). The H100's
  // entries are 0 up to 8 ways, where the kernels measured disagree (grid-stride streams 1.00-1.41x, kernels of one
  // thread an element 1.00-1.17x): `predict` gives a caveat there.
  const double write_cost = setaside_write_cost(arch, sim.residency.persisting_ways);
  const auto dram_read = static_cast<double>(c.dram_read_bytes), dram_write = static_cast<double>(c.dram_write_bytes);
  const double slowed = write_cost * std::min(dram_write, dram_read + dram_write / 2);  // seconds
  const double dram_data = safe_div(dram_bytes, arch.dram.effective_bandwidth) + slowed;
  const auto write_rows = static_cast<double>(c.dram_write_row_misses);
  const double read_rows = static_cast<double>(c.dram_row_misses) - write_rows;
  const double dram_rows =
      safe_div(read_rows, arch.dram.read_activation_rate) + safe_div(write_rows, arch.dram.write_activation_rate);
  const double k = arch.overlap_exponent;
  const double dram_seconds = std::pow(std::pow(dram_data, k) + std::pow(dram_rows, k), 1 / k);
  const double rows_opened =
      100 * safe_div(static_cast<double>(c.dram_row_misses), static_cast<double>(c.dram_row_hits + c.dram_row_misses));
  const std::string moved = megabytes(c.dram_read_bytes + c.dram_write_bytes);
  std::string dram_detail = fmt::format("{} at {}", moved, units::format_bandwidth(arch.dram.effective_bandwidth));
  if (slowed > 0)
    dram_detail += fmt::format(", write-backs {} slower with {} L2 ways set aside", units::format_duration(slowed),
                               sim.residency.persisting_ways);
  if (dram_rows > 0)
    dram_detail += fmt::format(", {} rows opened ({:.0f}% of accesses)", c.dram_row_misses, rows_opened);
  p.terms.push_back({"dram", dram_seconds, dram_detail});
  // Each lookup (near and far ones alike) holds a slice for whole beats: scattered one-sector requests cost as much
  // slice time as two-sector ones (transpose_naive's stores, random gathers). A write's beat holds it
  // l2.write_beat_cost times as long as a read's (H100, every line in L2: a 4-byte write to each of 32 sectors takes
  // 10.27 ps a write lookup device-wide, a 4-byte read of each 7.58 ps a read lookup: validate/results/
  // h100-2026-11-28-l2ops). Atomics and reductions take a beat a sector (l2_slice.cpp), an atomic's (the old value
  // returned) l2.atom_beat_cost read beats long, a reduction's as long as a read's (H100: 9.96 and 7.50 ps, reads
  // 7.58: validate/results/h100-2026-11-28-l2atomics).
  const auto write_beats = static_cast<double>(c.l2_write_beats);
  const auto atom_beats = static_cast<double>(c.l2_atom_beats);
  const double read_beats = static_cast<double>(c.l2_beats) - write_beats - atom_beats;
  const double l2_bytes = (read_beats + write_beats * arch.l2.write_beat_cost + atom_beats * arch.l2.atom_beat_cost) *
                          static_cast<double>(arch.l2.slice_width);
  std::string l2_detail = fmt::format("{:.0f} read + {:.0f} write beats", read_beats, write_beats);
  if (atom_beats > 0) l2_detail += fmt::format(" + {:.0f} atomic beats", atom_beats);
  l2_detail += fmt::format(" of {} B at {}", arch.l2.slice_width, units::format_bandwidth(arch.l2.bandwidth));
  if (arch.l2.write_beat_cost != 1) l2_detail += fmt::format(", a write's {}x a read's", arch.l2.write_beat_cost);
  if (atom_beats > 0 && arch.l2.atom_beat_cost != 1)
    l2_detail += fmt::format(", an atomic's {}x", arch.l2.atom_beat_cost);
  p.terms.push_back({"l2", safe_div(l2_bytes, arch.l2.bandwidth), l2_detail});
  // The L1 data stage moves up to a line's worth of bank words per pass at its bandwidth: a coalesced request takes
  // one pass, one whose lanes pile into a bank as many as that bank's words (softmax_naive's one-row-per-thread
  // loads: 32), a gather of L1 hits about 4 for 28 lines (SmFront::global_access counts them).
  const auto l1_passes = static_cast<double>(c.l1_wavefronts);
  p.terms.push_back(
      {"l1",
       tail * safe_div(l1_passes * static_cast<double>(arch.l1.line), arch.l1.bandwidth_bytes_per_clock * clock * sms),
       fmt::format("{:.0f} data-stage passes at {} B/clk on {} SMs", l1_passes, arch.l1.bandwidth_bytes_per_clock,
                   p.active_sms)});
  const auto wavefronts = static_cast<double>(c.shared_ld_wavefronts + c.shared_st_wavefronts +
                                              c.shared_atom_wavefronts + c.shared_async_wavefronts);
  const double per_clock =
      arch.shared_memory.bandwidth_bytes_per_clock /
      static_cast<double>(arch.shared_memory.banks * static_cast<int>(arch.shared_memory.bank_width));
  // Barriers go through the same pipe: each warp arriving at one holds it for shared_memory.barrier_cycles (H100:
  // 2.08; a reduction step's wavefronts and barrier add up to within 1% on the GPU).
  const auto barriers = static_cast<double>(c.barriers);
  const double shared_cycles = safe_div(wavefronts, per_clock) + barriers * arch.shared_memory.barrier_cycles;
  p.terms.push_back(
      {"shared", tail * safe_div(shared_cycles, clock * sms),
       fmt::format("{:.0f} wavefronts ({} bank conflicts) at {:.2f}/clk, {:.0f} warp barriers on {} SMs", wavefronts,
                   c.shared_ld_bank_conflicts + c.shared_st_bank_conflicts, per_clock, barriers, p.active_sms)});
  // A warp's constant load reading one address (a broadcast) costs its issue slot; one reading d distinct addresses
  // is serialized into d accesses of constant_cache.replay_cycles each (H100, constant_distinct with d = 2, 8, 32 lines
  // within the 2 KB cache: 2.0 cycles an access, linear in d). An access whose line the simulated constant cache
  // lacked adds constant_cache.miss_replays lookups of the same cost: on the H100 one for a lone warp, 0.24 at 64 warps
  // an SM, which share fills (validate/results/h100-2026-11-24c: ncu's IDC lookups per request).
  const auto serialized =
      static_cast<double>(c.constant_serialized - std::min(c.constant_serialized, c.constant_broadcasts));
  const double replays = arch.constant_cache.miss_replays * static_cast<double>(c.constant_misses);
  const double constant_cycles = (serialized + replays) * arch.constant_cache.replay_cycles;
  p.terms.push_back({"constant", tail * safe_div(constant_cycles, clock * sms),
                     fmt::format("{:.0f} serialized constant accesses + {:.0f} replays of {} misses x {} cycles",
                                 serialized, replays, c.constant_misses, arch.constant_cache.replay_cycles)});
  const auto issued = static_cast<double>(c.warp_instructions + c.work);
  p.terms.push_back({"issue", tail * safe_div(issued, static_cast<double>(arch.sm.sub_partitions) * clock * sms),
                     fmt::format("{:.0f} warp instructions on {} schedulers per SM", issued, arch.sm.sub_partitions)});

  // Block scheduling: each SM takes a new block every launch.block_cycles, or launch.warp_cycles per warp for large
  // blocks (H100 empty kernels: 157 cycles a block for 1 to 16 warps, 6.75 a warp for 32), a rate that does not
  // depend on what the blocks do: 65536 blocks of a one-float-per-thread copy need 39 us for it alone.
  const double warps_per_block = std::ceil(static_cast<double>(sim.launch.block.count()) / arch.sm.warp_size);
  const double block_cycles =
      std::max(arch.block_launch_cycles, std::max(warps_per_block, 1.0) * arch.warp_launch_cycles);
  p.terms.push_back({"blocks", std::ceil(blocks / sms) * block_cycles / clock,
                     fmt::format("{:.0f} blocks x {:.0f} cycles on {} SMs", blocks, block_cycles, p.active_sms)});

  // Latency: a warp waits for its loads; stores do not stall it. Each wait (a run of independent loads, see
  // load_waits) costs the latency of the level that served the sectors (weighted by where sectors were served);
  // resident warps overlap their waits, and each wave of blocks takes as long as one warp's waits.
  const auto loads = static_cast<double>(c.load_waits);
  const auto lookups = static_cast<double>(c.l1_sector_lookups + c.l1_bypass_sectors);
  const double l1_hit = safe_div(static_cast<double>(c.l1_sector_hits), lookups);
  // The L2 serves a wait's sectors at the hit rate of what warps wait for: reads and atomics (which return the old
  // value), not reductions (no warp waits for one; ncu counts their lookups in the requester's partition hits).
  const auto l2_reads = static_cast<double>(c.l2_read_sectors + c.l2_atom_sectors);
  const double l2_hit = safe_div(static_cast<double>(c.l2_read_hits + c.l2_atom_hits), l2_reads);
  const double l2_latency = (arch.l2.near_latency_cycles + arch.l2.far_latency_cycles) / 2;
  const double miss_latency = l2_hit * l2_latency + (1 - l2_hit) * arch.dram.latency_cycles;
  const double load_latency = l1_hit * arch.l1.latency_cycles + (1 - l1_hit) * miss_latency;
  const auto shared_waits = static_cast<double>(c.shared_waits);
  const double shared_wait_cycles = shared_waits * arch.shared_memory.latency_cycles +
                                    static_cast<double>(c.shared_ld_bank_conflicts) +
                                    barriers * arch.shared_memory.barrier_latency_cycles;
  const double const_cycles = static_cast<double>(c.constant_requests) * arch.constant_cache.latency_cycles +
                              serialized * arch.constant_cache.replay_cycles;
  // A barrier waiting for async copies (cp.async, TMA bulk copies: global -> shared, past L1) waits for L2 or DRAM; a
  // double-buffered loop overlaps the wait with one tile's work, which in the suite's pipelines is short beside it.
  const double async_cycles = static_cast<double>(c.async_waits) * miss_latency;
  const double wait_cycles = loads * load_latency + shared_wait_cycles + const_cycles + async_cycles;
  const double warps = blocks * std::max(warps_per_block, 1.0);
  const double waves = std::max<double>(static_cast<double>(c.waves), 1.0);
  p.terms.push_back(
      {"latency", safe_div(wait_cycles, warps) * waves / clock,
       fmt::format("{:.0f} load waits x {:.0f} cycles{}, {:.1f} warps/SM, {:.0f} wave{}", loads, load_latency,
                   c.async_waits == 0 ? std::string()
                                      : fmt::format(", {} async-copy waits x {:.0f}", c.async_waits, miss_latency),
                   p.warps_per_sm, waves, waves == 1 ? "" : "s")});

  auto binding = std::max_element(p.terms.begin(), p.terms.end(),
                                  [](const TimeTerm& a, const TimeTerm& b) { return a.seconds < b.seconds; });
  p.bound = binding->name;
  p.seconds = p.launch_seconds + overlap(p.terms, arch.overlap_exponent);
  p.gpu_seconds = p.seconds - p.launch_seconds +
                  (arch.launch_gpu_overhead_seconds > 0 ? arch.launch_gpu_overhead_seconds : p.launch_seconds);
  p.dram_bandwidth = safe_div(dram_bytes, p.seconds);
  double throughput = 0;
  for (const TimeTerm& t : p.terms)
    if (t.name != "latency") throughput = std::max(throughput, t.seconds);
  const TimeTerm& lat = p.terms.back();
  p.warps_needed = safe_div(lat.seconds, throughput) * p.warps_per_sm;
  const double share = safe_div(binding->seconds, p.seconds);
  if (p.bound == "dram" && dram_rows > dram_data / 2) {
    p.explanation = fmt::format(
        "DRAM-bound: {} moved, {:.0f}% of the time; {:.0f}% of the DRAM accesses open a row (scattered accesses or "
        "write-backs), whose activations take {} beside the bytes' {}",
        moved, 100 * share, rows_opened, units::format_duration(dram_rows), units::format_duration(dram_data));
  } else if (p.bound == "dram") {
    p.explanation =
        fmt::format("DRAM-bound: {} moved, {:.0f}% of the time at the effective bandwidth", moved, 100 * share);
  } else if (p.bound == "shared") {
    p.explanation =
        fmt::format("shared-memory-bound: {:.1f} wavefronts per request ({} bank conflicts)",
                    safe_div(wavefronts, static_cast<double>(c.shared_ld_requests + c.shared_st_requests +
                                                             c.shared_atom_requests + c.shared_async_requests)),
                    c.shared_ld_bank_conflicts + c.shared_st_bank_conflicts);
  } else if (p.bound == "blocks") {
    p.explanation = fmt::format(
        "block-scheduling-bound: {:.0f} blocks at {:.0f} cycles each per SM; fewer blocks doing "
        "more work each would cut it",
        blocks, block_cycles);
  } else if (p.bound == "latency") {
    p.explanation = fmt::format(
        "latency-bound: {:.1f} warps per SM, need {:.0f} to reach the next limit ({})", p.warps_per_sm,
        std::ceil(p.warps_needed),
        throughput > 0 ? std::max_element(p.terms.begin(), p.terms.end() - 1,
                                          [](const TimeTerm& a, const TimeTerm& b) { return a.seconds < b.seconds; })
                             ->name
                       : "none");
  } else {
    p.explanation = fmt::format("{}-bound: {}", p.bound, binding->detail);
  }
  return p;
}

}  // namespace memhier
