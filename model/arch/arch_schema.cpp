#include "memhier/arch_schema.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <climits>
#include <stdexcept>

#include "memhier/units.h"

namespace memhier {
namespace {

using K = FieldKind;

// The table: key, kind, required, description, accessor. Keep descriptions short; they are printed by `archs show`.
// clang-format off
constexpr std::array kFields{
  ArchField{"name", K::text, true, "short name used with --arch", [](Arch& a) -> FieldRef { return &a.name; }},
  ArchField{"full_name", K::text, true, "product name", [](Arch& a) -> FieldRef { return &a.full_name; }},
  ArchField{"compute_capability", K::version, true, "CUDA compute capability major.minor",
            [](Arch& a) -> FieldRef { return &a.compute_capability; }},
  ArchField{"clocks.sm", K::frequency, true, "SM clock under load", [](Arch& a) -> FieldRef { return &a.sm_clock_hz; }},
  ArchField{"sm.count", K::count, true, "streaming multiprocessors", [](Arch& a) -> FieldRef { return &a.sm.count; }},
  ArchField{"sm.warp_size", K::count, true, "threads per warp", [](Arch& a) -> FieldRef { return &a.sm.warp_size; }},
  ArchField{"sm.max_threads_per_sm", K::count, true, "resident threads per SM",
            [](Arch& a) -> FieldRef { return &a.sm.max_threads_per_sm; }},
  ArchField{"sm.max_warps_per_sm", K::count, true, "resident warps per SM",
            [](Arch& a) -> FieldRef { return &a.sm.max_warps_per_sm; }},
  ArchField{"sm.max_blocks_per_sm", K::count, true, "resident blocks per SM",
            [](Arch& a) -> FieldRef { return &a.sm.max_blocks_per_sm; }},
  ArchField{"sm.max_threads_per_block", K::count, true, "threads per block",
            [](Arch& a) -> FieldRef { return &a.sm.max_threads_per_block; }},
  ArchField{"sm.sub_partitions", K::count, true, "SM sub-partitions (register file is split across them)",
            [](Arch& a) -> FieldRef { return &a.sm.sub_partitions; }},
  ArchField{"sm.max_block_barriers_per_sm", K::count, false, "block barriers per SM; absent: not an occupancy limit",
            [](Arch& a) -> FieldRef { return &a.sm.max_block_barriers_per_sm; }},
  ArchField{"registers.per_sm", K::count, true, "32-bit registers per SM",
            [](Arch& a) -> FieldRef { return &a.registers.per_sm; }},
  ArchField{"registers.per_block", K::count, true, "32-bit registers per block",
            [](Arch& a) -> FieldRef { return &a.registers.per_block; }},
  ArchField{"registers.max_per_thread", K::count, true, "registers per thread",
            [](Arch& a) -> FieldRef { return &a.registers.max_per_thread; }},
  ArchField{"registers.allocation_unit", K::count, true, "registers per warp are allocated in multiples of this",
            [](Arch& a) -> FieldRef { return &a.registers.allocation_unit; }},
  ArchField{"shared_memory.max_per_sm", K::bytes, true, "largest shared-memory carveout per SM",
            [](Arch& a) -> FieldRef { return &a.shared_memory.max_per_sm; }},
  ArchField{"shared_memory.per_block_default", K::bytes, true, "per-block limit without opt-in",
            [](Arch& a) -> FieldRef { return &a.shared_memory.per_block_default; }},
  ArchField{"shared_memory.max_per_block_optin", K::bytes, true, "per-block limit with opt-in",
            [](Arch& a) -> FieldRef { return &a.shared_memory.max_per_block_optin; }},
  ArchField{"shared_memory.reserved_per_block", K::bytes, true, "driver-reserved shared memory per block",
            [](Arch& a) -> FieldRef { return &a.shared_memory.reserved_per_block; }},
  ArchField{"shared_memory.allocation_unit", K::bytes, true,
            "per-block shared memory is allocated in multiples of this",
            [](Arch& a) -> FieldRef { return &a.shared_memory.allocation_unit; }},
  ArchField{"shared_memory.banks", K::count, true, "banks", [](Arch& a) -> FieldRef { return &a.shared_memory.banks; }},
  ArchField{"shared_memory.bank_width", K::bytes, true, "bytes per bank per cycle",
            [](Arch& a) -> FieldRef { return &a.shared_memory.bank_width; }},
  ArchField{"shared_memory.latency_cycles", K::cycles, true, "load-to-use latency",
            [](Arch& a) -> FieldRef { return &a.shared_memory.latency_cycles; }},
  ArchField{"shared_memory.bandwidth_per_sm", K::bytes_per_clock, true, "per-SM bandwidth",
            [](Arch& a) -> FieldRef { return &a.shared_memory.bandwidth_bytes_per_clock; }},
  ArchField{"shared_memory.barrier_cycles", K::cycles, true,
            "cycles of the SM's shared-memory pipe per warp arriving at a barrier (__syncthreads)",
            [](Arch& a) -> FieldRef { return &a.shared_memory.barrier_cycles; }},
  ArchField{"shared_memory.barrier_latency_cycles", K::cycles, true, "a barrier's delay on a warp's critical path",
            [](Arch& a) -> FieldRef { return &a.shared_memory.barrier_latency_cycles; }},
  ArchField{"shared_memory.async_copy_predicated_loads", K::count, false,
            "never-executed shared loads (@!PT LDS) nvcc issues before each cp.async; ncu counts them as shared-load "
            "instructions; absent: none",
            [](Arch& a) -> FieldRef { return &a.shared_memory.async_copy_predicated_loads; }},
  ArchField{"unified_l1.size", K::bytes, true, "L1 data cache + shared memory per SM",
            [](Arch& a) -> FieldRef { return &a.unified_l1.size; }},
  ArchField{"unified_l1.carveouts", K::bytes_list, true, "allowed shared-memory carveouts, ascending",
            [](Arch& a) -> FieldRef { return &a.unified_l1.carveouts; }},
  ArchField{"l1.line", K::bytes, true, "line size", [](Arch& a) -> FieldRef { return &a.l1.line; }},
  ArchField{"l1.sector", K::bytes, true, "sector size", [](Arch& a) -> FieldRef { return &a.l1.sector; }},
  ArchField{"l1.sets", K::count, false, "sets; ways follow the capacity the carveout leaves (this or l1.ways)",
            [](Arch& a) -> FieldRef { return &a.l1.sets; }},
  ArchField{"l1.ways", K::count, false, "ways a set; sets follow the capacity the carveout leaves (this or l1.sets)",
            [](Arch& a) -> FieldRef { return &a.l1.ways; }},
  ArchField{"l1.replacement", K::replacement, true, "lru | plru (tree pseudo-LRU; needs l1.ways)",
            [](Arch& a) -> FieldRef { return &a.l1.replacement; }},
  ArchField{"l1.latency_cycles", K::cycles, true, "hit latency",
            [](Arch& a) -> FieldRef { return &a.l1.latency_cycles; }},
  ArchField{"l1.bandwidth_per_sm", K::bytes_per_clock, true, "per-SM hit bandwidth",
            [](Arch& a) -> FieldRef { return &a.l1.bandwidth_bytes_per_clock; }},
  ArchField{"l1.miss_merge_sms", K::count, false,
            "2: the two SMs of a TPC send a sector's read misses to L2 once while one is in flight; absent: no merging",
            [](Arch& a) -> FieldRef { return &a.l1.miss_merge_sms; }},
  ArchField{"constant_cache.size", K::bytes, true, "per-SM constant cache (L1 level)",
            [](Arch& a) -> FieldRef { return &a.constant_cache.size; }},
  ArchField{"constant_cache.line", K::bytes, true, "line size",
            [](Arch& a) -> FieldRef { return &a.constant_cache.line; }},
  ArchField{"constant_cache.latency_cycles", K::cycles, true, "hit latency",
            [](Arch& a) -> FieldRef { return &a.constant_cache.latency_cycles; }},
  ArchField{"constant_cache.l15_size", K::bytes, true, "constant L1.5 cache",
            [](Arch& a) -> FieldRef { return &a.constant_cache.l15_size; }},
  ArchField{"constant_cache.l15_latency_cycles", K::cycles, true, "L1.5 hit latency",
            [](Arch& a) -> FieldRef { return &a.constant_cache.l15_latency_cycles; }},
  ArchField{"constant_cache.replay_cycles", K::cycles, true,
            "SM cycles per distinct address of a warp's constant load that reads several (a broadcast costs none)",
            [](Arch& a) -> FieldRef { return &a.constant_cache.replay_cycles; }},
  ArchField{"constant_cache.associativity", K::count, false,
            "ways of a set (line mod sets picks it); absent: constant-cache misses are not simulated",
            [](Arch& a) -> FieldRef { return &a.constant_cache.associativity; }},
  ArchField{"constant_cache.miss_replays", K::number, false,
            "extra lookups (replay_cycles each) per request whose line the simulated LRU cache lacks",
            [](Arch& a) -> FieldRef { return &a.constant_cache.miss_replays; }},
  ArchField{"l2.size", K::bytes, true, "device-wide L2", [](Arch& a) -> FieldRef { return &a.l2.size; }},
  ArchField{"l2.line", K::bytes, true, "line size", [](Arch& a) -> FieldRef { return &a.l2.line; }},
  ArchField{"l2.sector", K::bytes, true, "sector size", [](Arch& a) -> FieldRef { return &a.l2.sector; }},
  ArchField{"l2.associativity", K::count, true, "ways", [](Arch& a) -> FieldRef { return &a.l2.associativity; }},
  ArchField{"l2.replacement", K::replacement, true, "lru (the only policy the L2 model has)",
            [](Arch& a) -> FieldRef { return &a.l2.replacement; }},
  ArchField{"l2.slices", K::count, true, "address-hashed slices", [](Arch& a) -> FieldRef { return &a.l2.slices; }},
  ArchField{"l2.partitions", K::count, true, "partitions (near/far)",
            [](Arch& a) -> FieldRef { return &a.l2.partitions; }},
  ArchField{"l2.near_latency_cycles", K::cycles, true, "hit latency, near partition",
            [](Arch& a) -> FieldRef { return &a.l2.near_latency_cycles; }},
  ArchField{"l2.far_latency_cycles", K::cycles, true, "hit latency, far partition",
            [](Arch& a) -> FieldRef { return &a.l2.far_latency_cycles; }},
  ArchField{"l2.bandwidth", K::bandwidth, true, "device-wide hit bandwidth",
            [](Arch& a) -> FieldRef { return &a.l2.bandwidth; }},
  ArchField{"l2.slice_width", K::bytes, true, "bytes a slice moves per clock; a lookup of fewer sectors takes one beat",
            [](Arch& a) -> FieldRef { return &a.l2.slice_width; }},
  ArchField{"l2.write_beat_cost", K::number, false, "a write lookup's beat, in read beats (l2.bandwidth); absent: 1",
            [](Arch& a) -> FieldRef { return &a.l2.write_beat_cost; }},
  ArchField{"l2.atom_beat_cost", K::number, false,
            "an atomic lookup's beat (atomics and reductions take one a sector), in read beats; absent: 1",
            [](Arch& a) -> FieldRef { return &a.l2.atom_beat_cost; }},
  ArchField{"l2.dram_fetch_granularity", K::bytes, true, "bytes fetched from DRAM per L2 miss",
            [](Arch& a) -> FieldRef { return &a.l2.dram_fetch_granularity; }},
  ArchField{"l2.persisting_max", K::bytes, true, "largest persisting set-aside; 0B: unsupported",
            [](Arch& a) -> FieldRef { return &a.l2.persisting_max; }},
  ArchField{"l2.max_window_size", K::bytes, true, "largest access-policy window; 0B: unsupported",
            [](Arch& a) -> FieldRef { return &a.l2.max_window_size; }},
  ArchField{"l2.dirty_fraction_max", K::number, false,
            "share of a set's ways that may hold dirty lines (more: the oldest is written back); absent or 0: all",
            [](Arch& a) -> FieldRef { return &a.l2.dirty_fraction_max; }},
  ArchField{"l2.clean_ways_min", K::count, false,
            "of the ways a persisting set-aside leaves a set, how many dirty lines may not take; absent or 0: none",
            [](Arch& a) -> FieldRef { return &a.l2.clean_ways_min; }},
  ArchField{"l2.setaside_write_cost", K::number_list, false,
            "by ways set aside: extra DRAM time of a byte written back, in picoseconds; absent: none",
            [](Arch& a) -> FieldRef { return &a.l2.setaside_write_cost; }},
  ArchField{"l2.partial_sectors_max", K::count, false,
            "partly written sectors the L2 holds (more: the oldest is written and fetched whole); absent or 0: any",
            [](Arch& a) -> FieldRef { return &a.l2.partial_sectors_max; }},
  ArchField{"dram.type", K::text, true, "memory technology", [](Arch& a) -> FieldRef { return &a.dram.type; }},
  ArchField{"dram.size", K::bytes, true, "capacity", [](Arch& a) -> FieldRef { return &a.dram.size; }},
  ArchField{"dram.bus_width_bits", K::count, true, "interface width",
            [](Arch& a) -> FieldRef { return &a.dram.bus_width_bits; }},
  ArchField{"dram.channels", K::count, true, "independent channels",
            [](Arch& a) -> FieldRef { return &a.dram.channels; }},
  ArchField{"dram.peak_bandwidth", K::bandwidth, true, "datasheet bandwidth",
            [](Arch& a) -> FieldRef { return &a.dram.peak_bandwidth; }},
  ArchField{"dram.effective_bandwidth", K::bandwidth, true, "measured streaming bandwidth",
            [](Arch& a) -> FieldRef { return &a.dram.effective_bandwidth; }},
  ArchField{"dram.latency_cycles", K::cycles, true, "load latency on an L2 miss",
            [](Arch& a) -> FieldRef { return &a.dram.latency_cycles; }},
  ArchField{"dram.row_bytes", K::bytes, false, "a bank's row (page); absent: 1 KiB",
            [](Arch& a) -> FieldRef { return &a.dram.row_bytes; }},
  ArchField{"dram.banks", K::count, false, "banks of the whole device, each with a row open; absent: 16 a channel",
            [](Arch& a) -> FieldRef { return &a.dram.banks; }},
  ArchField{"dram.read_activation_rate", K::number, false,
            "rows reads open a second, device-wide (random 64 B reads); absent: no limit",
            [](Arch& a) -> FieldRef { return &a.dram.read_activation_rate; }},
  ArchField{"dram.write_activation_rate", K::number, false,
            "rows write-backs open a second, device-wide (random 64 B writes); absent: no limit",
            [](Arch& a) -> FieldRef { return &a.dram.write_activation_rate; }},
  ArchField{"launch.overhead", K::duration, true, "event-timed cost of an empty launch queued behind running work",
            [](Arch& a) -> FieldRef { return &a.launch_overhead_seconds; }},
  ArchField{"timing.overlap_exponent", K::number, true,
            "k of the k-norm that adds up memory, issue, block scheduling and latency times (1: sum; large: max)",
            [](Arch& a) -> FieldRef { return &a.overlap_exponent; }},
  ArchField{"launch.idle_overhead", K::duration, true, "event-timed cost of an empty launch that finds the GPU idle",
            [](Arch& a) -> FieldRef { return &a.launch_idle_overhead_seconds; }},
  ArchField{"launch.gpu_overhead", K::duration, false,
            "GPU time of an empty one-block launch less its block, as ncu's gpu__time_duration measures it; absent: "
            "validate --ncu compares with launch.overhead",
            [](Arch& a) -> FieldRef { return &a.launch_gpu_overhead_seconds; }},
  ArchField{"launch.block_cycles", K::cycles, true, "SM cycles the block scheduler takes per block, per SM",
            [](Arch& a) -> FieldRef { return &a.block_launch_cycles; }},
  ArchField{"launch.warp_cycles", K::cycles, true, "SM cycles the block scheduler takes per warp of a block, per SM",
            [](Arch& a) -> FieldRef { return &a.warp_launch_cycles; }},
  ArchField{"accuracy.run", K::text, false,
            "the committed suite run (validate/results/...) the error on record comes from; absent: none on record",
            [](Arch& a) -> FieldRef { return &a.accuracy.run; }},
  ArchField{"accuracy.time_mape", K::number, false,
            "mean absolute error of the predicted kernel times on that run, percent",
            [](Arch& a) -> FieldRef { return &a.accuracy.time_mape_pct; }},
  ArchField{"accuracy.cases", K::count, false, "cases of that run predicted",
            [](Arch& a) -> FieldRef { return &a.accuracy.cases; }},
  ArchField{"accuracy.within_25pct", K::count, false, "of them, those predicted within 25%",
            [](Arch& a) -> FieldRef { return &a.accuracy.within_25pct; }},
  ArchField{"accuracy.worst", K::text, false, "the worst case and its signed error (\"name: -22.6%\")",
            [](Arch& a) -> FieldRef { return &a.accuracy.worst; }},
  ArchField{"accuracy.by_bound.dram", K::text, false,
            "of the run's cases bound by DRAM: how many, their MAPE and the range of their errors",
            [](Arch& a) -> FieldRef { return &a.accuracy.by_bound[0]; }},
  ArchField{"accuracy.by_bound.l2", K::text, false,
            "of the run's cases bound by the L2: how many, their MAPE and the range of their errors",
            [](Arch& a) -> FieldRef { return &a.accuracy.by_bound[1]; }},
  ArchField{"accuracy.by_bound.l1", K::text, false,
            "of the run's cases bound by the L1 data stage: how many, their MAPE and the range of their errors",
            [](Arch& a) -> FieldRef { return &a.accuracy.by_bound[2]; }},
  ArchField{"accuracy.by_bound.shared", K::text, false,
            "of the run's cases bound by shared memory: how many, their MAPE and the range of their errors",
            [](Arch& a) -> FieldRef { return &a.accuracy.by_bound[3]; }},
  ArchField{"accuracy.by_bound.constant", K::text, false,
            "of the run's cases bound by the constant cache: how many, their MAPE and the range of their errors",
            [](Arch& a) -> FieldRef { return &a.accuracy.by_bound[4]; }},
  ArchField{"accuracy.by_bound.issue", K::text, false,
            "of the run's cases bound by instruction issue: how many, their MAPE and the range of their errors",
            [](Arch& a) -> FieldRef { return &a.accuracy.by_bound[5]; }},
  ArchField{"accuracy.by_bound.blocks", K::text, false,
            "of the run's cases bound by block scheduling: how many, their MAPE and the range of their errors",
            [](Arch& a) -> FieldRef { return &a.accuracy.by_bound[6]; }},
  ArchField{"accuracy.by_bound.latency", K::text, false,
            "of the run's cases bound by latency: how many, their MAPE and the range of their errors",
            [](Arch& a) -> FieldRef { return &a.accuracy.by_bound[7]; }},
};
// clang-format on

std::int64_t parse_count(std::string_view text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0 || v > INT_MAX) {
    throw std::invalid_argument(fmt::format("expected a non-negative integer, got '{}'", text));
  }
  return v;
}

double parse_number(std::string_view text, std::string_view what) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !(v >= 0)) {
    throw std::invalid_argument(fmt::format("expected a non-negative {}, got '{}'", what, text));
  }
  return v;
}

ComputeCapability parse_version(std::string_view text) {
  auto dot = text.find('.');
  if (dot == std::string_view::npos) throw std::invalid_argument(fmt::format("expected major.minor, got '{}'", text));
  ComputeCapability cc;
  cc.major = static_cast<int>(parse_count(text.substr(0, dot)));
  cc.minor = static_cast<int>(parse_count(text.substr(dot + 1)));
  return cc;
}

Replacement parse_replacement(std::string_view text) {
  if (text == "lru") return Replacement::lru;
  if (text == "plru") return Replacement::plru;
  throw std::invalid_argument(fmt::format("expected lru or plru (the policies the simulator models), got '{}'", text));
}

std::string_view replacement_name(Replacement r) {
  switch (r) {
    case Replacement::lru:
      return "lru";
    case Replacement::plru:
      return "plru";
  }
  return "?";
}

}  // namespace

std::span<const ArchField> arch_fields() { return kFields; }

const ArchField* find_arch_field(std::string_view key) {
  for (const ArchField& f : kFields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

void set_arch_field(Arch& arch, const ArchField& field, std::string_view text) {
  FieldRef ref = field.ref(arch);
  switch (field.kind) {
    case K::text:
      *std::get<std::string*>(ref) = std::string(text);
      return;
    case K::version:
      *std::get<ComputeCapability*>(ref) = parse_version(text);
      return;
    case K::count:
      *std::get<int*>(ref) = static_cast<int>(parse_count(text));
      return;
    case K::bytes:
      *std::get<std::uint64_t*>(ref) = units::parse_bytes(text);
      return;
    case K::bandwidth:
      *std::get<double*>(ref) = units::parse_bandwidth(text);
      return;
    case K::bytes_per_clock:
      *std::get<double*>(ref) = units::parse_bytes_per_clock(text);
      return;
    case K::frequency:
      *std::get<double*>(ref) = units::parse_frequency(text);
      return;
    case K::cycles:
      *std::get<double*>(ref) = parse_number(text, "number of cycles");
      return;
    case K::number:
      *std::get<double*>(ref) = parse_number(text, "number");
      return;
    case K::duration:
      *std::get<double*>(ref) = units::parse_duration(text);
      return;
    case K::replacement:
      *std::get<Replacement*>(ref) = parse_replacement(text);
      return;
    case K::bytes_list:
    case K::number_list: {
      // Command-line form: comma-separated items, optionally in brackets.
      std::string_view s = text;
      if (!s.empty() && s.front() == '[') s.remove_prefix(1);
      if (!s.empty() && s.back() == ']') s.remove_suffix(1);
      std::vector<std::string> items;
      while (!s.empty()) {
        auto comma = s.find(',');
        items.emplace_back(s.substr(0, comma));
        s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
      }
      set_arch_field(arch, field, items);
      return;
    }
  }
}

void set_arch_field(Arch& arch, const ArchField& field, const std::vector<std::string>& items) {
  if (field.kind == K::number_list) {
    std::vector<double> numbers;
    numbers.reserve(items.size());
    for (const std::string& item : items) numbers.push_back(parse_number(item, "number"));
    *std::get<std::vector<double>*>(field.ref(arch)) = std::move(numbers);
    return;
  }
  if (field.kind != K::bytes_list) throw std::invalid_argument("expected a single value, got a list");
  std::vector<std::uint64_t> values;
  values.reserve(items.size());
  for (const std::string& item : items) values.push_back(units::parse_bytes(item));
  *std::get<std::vector<std::uint64_t>*>(field.ref(arch)) = std::move(values);
}

std::string format_arch_field(const Arch& arch, const ArchField& field) {
  FieldRef ref = field.ref(const_cast<Arch&>(arch));  // accessors only read here
  switch (field.kind) {
    case K::text:
      return *std::get<std::string*>(ref);
    case K::version: {
      auto cc = *std::get<ComputeCapability*>(ref);
      return fmt::format("{}.{}", cc.major, cc.minor);
    }
    case K::count:
      return std::to_string(*std::get<int*>(ref));
    case K::bytes:
      return units::format_bytes(*std::get<std::uint64_t*>(ref));
    case K::bandwidth:
      return units::format_bandwidth(*std::get<double*>(ref));
    case K::bytes_per_clock:
      return fmt::format("{:g}B/clk", *std::get<double*>(ref));
    case K::frequency:
      return units::format_frequency(*std::get<double*>(ref));
    case K::cycles:
    case K::number:
      return fmt::format("{:g}", *std::get<double*>(ref));
    case K::duration:
      return units::format_duration(*std::get<double*>(ref));
    case K::replacement:
      return std::string(replacement_name(*std::get<Replacement*>(ref)));
    case K::bytes_list: {
      std::string out = "[";
      for (std::uint64_t v : *std::get<std::vector<std::uint64_t>*>(ref)) {
        out += fmt::format("{}{}", out.size() > 1 ? ", " : "", units::format_bytes(v));
      }
      return out + "]";
    }
    case K::number_list: {
      std::string out = "[";
      for (double v : *std::get<std::vector<double>*>(ref)) out += fmt::format("{}{:g}", out.size() > 1 ? ", " : "", v);
      return out + "]";
    }
  }
  return {};
}

std::string_view to_string(FieldKind kind) {
  switch (kind) {
    case K::text:
      return "text";
    case K::version:
      return "version";
    case K::count:
      return "count";
    case K::bytes:
      return "bytes";
    case K::bytes_list:
      return "bytes list";
    case K::number_list:
      return "number list";
    case K::bandwidth:
      return "bandwidth";
    case K::bytes_per_clock:
      return "bytes per clock";
    case K::frequency:
      return "frequency";
    case K::number:
      return "number";
    case K::cycles:
      return "cycles";
    case K::duration:
      return "duration";
    case K::replacement:
      return "replacement policy";
  }
  return "?";
}

}  // namespace memhier
