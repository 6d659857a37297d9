// Physical-consistency rules for an architecture. Each rule names the key whose value breaks it.
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>

#include "memhier/arch_loader.h"
#include "memhier/arch_schema.h"
#include "memhier/units.h"

namespace memhier {
namespace {

class Checker {
 public:
  explicit Checker(const Arch& arch) : m_arch(arch) {}

  void require(bool ok, const std::string& key, const std::string& message) const {
    if (ok) return;
    throw InputError(origin(key), key, message);
  }
  // A rule over several keys. The file validated last (a what-if that extends a shipped arch) sets some of them and
  // inherits the others, whose values passed every rule in their own file: a broken rule involves a key set here. It
  // is blamed on the first of `keys` this file sets (the first of all when none is), and the message ends with each
  // key's value and, for a key another file set, where.
  void require(bool ok, std::initializer_list<std::string_view> keys, const std::string& message) const {
    if (ok) return;
    std::string blamed(*keys.begin());
    for (std::string_view k : keys) {
      auto it = m_arch.key_origin.find(std::string(k));
      if (it != m_arch.key_origin.end() && it->second.file == m_arch.source_file) {
        blamed = k;
        break;
      }
    }
    const std::string here = origin(blamed).file;
    std::string values;
    for (std::string_view k : keys) {
      const ArchField* field = find_arch_field(k);
      if (field == nullptr) throw std::logic_error(fmt::format("validate_arch: no key '{}'", k));
      values += fmt::format("{}{} = {}", values.empty() ? "" : "; ", k, format_arch_field(m_arch, *field));
      auto it = m_arch.key_origin.find(std::string(k));
      if (it == m_arch.key_origin.end())
        values += " (not set)";
      else if (it->second.file != here)
        values += fmt::format(" from {}:{}", it->second.file, it->second.line);
    }
    throw InputError(origin(blamed), blamed, fmt::format("{} ({})", message, values));
  }
  void positive(double v, const std::string& key) const { require(v > 0, key, "must be greater than zero"); }
  void power_of_two(std::uint64_t v, const std::string& key) const {
    require(v > 0 && std::has_single_bit(v), key, fmt::format("must be a power of two, got {}", v));
  }

 private:
  [[nodiscard]] SourceLocation origin(const std::string& key) const {
    auto it = m_arch.key_origin.find(key);
    return it != m_arch.key_origin.end() ? it->second : SourceLocation{m_arch.source_file};
  }

  const Arch& m_arch;
};

void check_sm(const Arch& a, const Checker& c) {
  c.require(a.compute_capability.major >= 7, "compute_capability", "architectures before 7.0 (Volta) are not modeled");
  c.positive(a.sm_clock_hz, "clocks.sm");
  c.positive(a.sm.count, "sm.count");
  c.require(a.sm.warp_size == 32, "sm.warp_size", "the model assumes 32-thread warps (32-bit active masks)");
  c.positive(a.sm.max_warps_per_sm, "sm.max_warps_per_sm");
  c.require(a.sm.max_warps_per_sm <= 4096, "sm.max_warps_per_sm",
            "at most 4096 (the simulator numbers an SM's resident warps in 12 bits; GPUs hold 32 to 64)");
  c.require(a.sm.max_warps_per_sm * a.sm.warp_size == a.sm.max_threads_per_sm,
            {"sm.max_threads_per_sm", "sm.max_warps_per_sm", "sm.warp_size"},
            "sm.max_threads_per_sm must equal sm.max_warps_per_sm x sm.warp_size");
  c.positive(a.sm.max_threads_per_block, "sm.max_threads_per_block");
  c.require(a.sm.max_threads_per_block <= a.sm.max_threads_per_sm,
            {"sm.max_threads_per_block", "sm.max_threads_per_sm"},
            "sm.max_threads_per_block cannot exceed sm.max_threads_per_sm");
  c.positive(a.sm.max_blocks_per_sm, "sm.max_blocks_per_sm");
  c.positive(a.sm.sub_partitions, "sm.sub_partitions");
  c.require(a.sm.max_warps_per_sm % a.sm.sub_partitions == 0, {"sm.sub_partitions", "sm.max_warps_per_sm"},
            "sm.sub_partitions must divide sm.max_warps_per_sm");
}

void check_registers(const Arch& a, const Checker& c) {
  const RegisterSpec& r = a.registers;
  c.positive(r.per_sm, "registers.per_sm");
  c.positive(r.per_block, "registers.per_block");
  c.require(r.per_block <= r.per_sm, {"registers.per_block", "registers.per_sm"},
            "registers.per_block cannot exceed registers.per_sm");
  c.require(r.max_per_thread > 0 && r.max_per_thread <= 255, "registers.max_per_thread", "must be in 1..255");
  c.power_of_two(static_cast<std::uint64_t>(r.allocation_unit), "registers.allocation_unit");
  // In 64 bits: 2^30-register units on 4 sub-partitions made an int product of 2^32, 0, and a division by it (SIGFPE).
  c.require(r.per_sm % (std::int64_t{r.allocation_unit} * a.sm.sub_partitions) == 0,
            {"registers.per_sm", "registers.allocation_unit", "sm.sub_partitions"},
            "registers.per_sm must split evenly into allocation units across sm.sub_partitions");
}

void check_shared(const Arch& a, const Checker& c) {
  const SharedMemorySpec& s = a.shared_memory;
  c.require(s.max_per_sm <= a.unified_l1.size, {"shared_memory.max_per_sm", "unified_l1.size"},
            "shared_memory.max_per_sm cannot exceed unified_l1.size");
  c.require(s.per_block_default <= s.max_per_block_optin,
            {"shared_memory.per_block_default", "shared_memory.max_per_block_optin"},
            "shared_memory.per_block_default cannot exceed shared_memory.max_per_block_optin");
  c.require(s.max_per_block_optin + s.reserved_per_block <= s.max_per_sm,
            {"shared_memory.max_per_block_optin", "shared_memory.reserved_per_block", "shared_memory.max_per_sm"},
            "shared_memory.max_per_block_optin plus shared_memory.reserved_per_block cannot exceed "
            "shared_memory.max_per_sm");
  c.power_of_two(s.allocation_unit, "shared_memory.allocation_unit");
  c.power_of_two(static_cast<std::uint64_t>(s.banks), "shared_memory.banks");
  c.require(s.banks <= 64, "shared_memory.banks", "at most 64 (the bank model's tables; NVIDIA GPUs have 32)");
  c.power_of_two(s.bank_width, "shared_memory.bank_width");
  // 4 B: a phase's 16 lanes of 16-byte accesses touch at most 80 words (the bank model's table holds 128); narrower
  // banks overflowed it, and 4 GiB ones divided by zero (an unsigned bank width of 0).
  c.require(s.bank_width >= 4 && s.bank_width <= 64, "shared_memory.bank_width",
            "from 4B to 64B (the bank model's tables; NVIDIA GPUs have 4B)");
  c.positive(s.latency_cycles, "shared_memory.latency_cycles");
  c.positive(s.bandwidth_bytes_per_clock, "shared_memory.bandwidth_per_sm");
  c.positive(s.barrier_cycles, "shared_memory.barrier_cycles");
  c.positive(s.barrier_latency_cycles, "shared_memory.barrier_latency_cycles");
  c.require(s.async_copy_predicated_loads >= 0 && s.async_copy_predicated_loads <= 16,
            "shared_memory.async_copy_predicated_loads", "expected 0 to 16");

  const auto& carve = a.unified_l1.carveouts;
  c.require(!carve.empty(), "unified_l1.carveouts", "must list at least one carveout");
  for (std::size_t i = 0; i < carve.size(); ++i) {
    c.require(carve[i] <= a.unified_l1.size, {"unified_l1.carveouts", "unified_l1.size"},
              fmt::format("carveout {} is larger than unified_l1.size", units::format_bytes(carve[i])));
    c.require(i == 0 || carve[i] > carve[i - 1], "unified_l1.carveouts", "must be strictly ascending");
  }
  c.require(carve.back() == s.max_per_sm, {"unified_l1.carveouts", "shared_memory.max_per_sm"},
            "the largest carveout must equal shared_memory.max_per_sm");
}

void check_caches(const Arch& a, const Checker& c) {
  c.power_of_two(a.l1.line, "l1.line");
  c.require(a.l1.miss_merge_sms <= 2, "l1.miss_merge_sms", "the simulator merges the misses of SM pairs only (1 or 2)");
  c.power_of_two(a.l1.sector, "l1.sector");
  c.require(a.l1.sector <= a.l1.line, {"l1.sector", "l1.line"}, "l1.sector cannot exceed l1.line");
  c.require((a.l1.sets > 0) != (a.l1.ways > 0), a.l1.ways > 0 ? "l1.ways" : "l1.sets",
            "give either l1.sets (the ways follow the capacity) or l1.ways (the sets follow it), not both");
  if (a.l1.sets > 0) c.power_of_two(static_cast<std::uint64_t>(a.l1.sets), "l1.sets");
  if (a.l1.ways > 0) c.power_of_two(static_cast<std::uint64_t>(a.l1.ways), "l1.ways");
  c.require(a.l1.ways <= 32, "l1.ways", "the simulator models at most 32 ways a set when the sets follow the capacity");
  c.require(a.l1.replacement != Replacement::plru || a.l1.ways > 0, "l1.replacement",
            "plru needs l1.ways (a tree over a set's ways): give l1.ways instead of l1.sets");
  c.positive(a.l1.latency_cycles, "l1.latency_cycles");
  c.positive(a.l1.bandwidth_bytes_per_clock, "l1.bandwidth_per_sm");
  c.power_of_two(a.constant_cache.line, "constant_cache.line");
  c.require(a.constant_cache.size >= a.constant_cache.line, {"constant_cache.size", "constant_cache.line"},
            "constant_cache.size must hold at least one line");
  c.positive(a.constant_cache.latency_cycles, "constant_cache.latency_cycles");
  c.positive(a.constant_cache.replay_cycles, "constant_cache.replay_cycles");
  if (a.constant_cache.associativity > 0 && a.constant_cache.line > 0) {
    const std::uint64_t lines = a.constant_cache.size / a.constant_cache.line;
    const auto ways = static_cast<std::uint64_t>(a.constant_cache.associativity);
    c.require(lines % ways == 0 && std::has_single_bit(lines / ways),
              {"constant_cache.associativity", "constant_cache.size", "constant_cache.line"},
              "constant_cache.associativity must divide the cache's lines (size / line) into a power-of-two number of "
              "sets");
  }
  c.require(a.constant_cache.miss_replays >= 0, "constant_cache.miss_replays", "must not be negative");
  c.require(a.constant_cache.miss_replays == 0 || a.constant_cache.associativity > 0,
            {"constant_cache.miss_replays", "constant_cache.associativity"},
            "constant_cache.miss_replays needs constant_cache.associativity (the cache whose misses it prices)");

  const L2Spec& l2 = a.l2;
  c.power_of_two(l2.line, "l2.line");
  c.power_of_two(l2.sector, "l2.sector");
  c.require(l2.sector <= l2.line, {"l2.sector", "l2.line"}, "l2.sector cannot exceed l2.line");
  c.positive(l2.associativity, "l2.associativity");
  c.require(l2.replacement == Replacement::lru, "l2.replacement",
            "the L2 model is LRU (plru is modelled for the L1 only)");
  c.positive(l2.slices, "l2.slices");
  c.positive(l2.partitions, "l2.partitions");
  c.require(l2.slices % l2.partitions == 0, {"l2.partitions", "l2.slices"}, "l2.partitions must divide l2.slices");
  c.positive(static_cast<double>(l2.size), "l2.size");
  const auto ways = static_cast<std::uint64_t>(l2.associativity);
  const auto slices = static_cast<std::uint64_t>(l2.slices);
  // line x ways x slices <= size, in a form that cannot overflow (a product wrapped to 0 would divide any size).
  c.require(l2.line <= l2.size / ways / slices, {"l2.size", "l2.slices", "l2.associativity", "l2.line"},
            "l2.size must hold a set in every slice (l2.line x l2.associativity x l2.slices)");
  const std::uint64_t set_bytes = l2.line * ways * slices;
  const std::uint64_t below = l2.size / set_bytes * set_bytes;  // at least one set (above)
  const std::string above =
      below <= ~std::uint64_t{0} - set_bytes ? " and " + units::format_bytes(below + set_bytes) : std::string();
  c.require(l2.size % set_bytes == 0, {"l2.size", "l2.slices", "l2.associativity", "l2.line"},
            fmt::format("l2.size must be a whole number of sets in every slice, a multiple of l2.line x "
                        "l2.associativity x l2.slices = {}; the nearest sizes are {}{}",
                        units::format_bytes(set_bytes), units::format_bytes(below), above));
  c.positive(l2.near_latency_cycles, "l2.near_latency_cycles");
  c.require(l2.far_latency_cycles >= l2.near_latency_cycles, {"l2.far_latency_cycles", "l2.near_latency_cycles"},
            "l2.far_latency_cycles cannot be below l2.near_latency_cycles");
  c.positive(l2.bandwidth, "l2.bandwidth");
  c.positive(l2.write_beat_cost, "l2.write_beat_cost");
  c.positive(l2.atom_beat_cost, "l2.atom_beat_cost");
  c.power_of_two(l2.slice_width, "l2.slice_width");
  c.require(l2.slice_width >= l2.sector && l2.slice_width <= l2.line, {"l2.slice_width", "l2.sector", "l2.line"},
            "l2.slice_width must lie between l2.sector and l2.line");
  c.power_of_two(l2.dram_fetch_granularity, "l2.dram_fetch_granularity");
  c.require(l2.dram_fetch_granularity >= l2.sector && l2.dram_fetch_granularity <= l2.line,
            {"l2.dram_fetch_granularity", "l2.sector", "l2.line"},
            "l2.dram_fetch_granularity must be between l2.sector and l2.line");
  c.require(l2.persisting_max <= l2.size, {"l2.persisting_max", "l2.size"}, "l2.persisting_max cannot exceed l2.size");
  c.require(l2.dirty_fraction_max >= 0 && l2.dirty_fraction_max <= 1, "l2.dirty_fraction_max",
            "must be between 0 and 1 (absent: every way may hold a dirty line)");
  c.require(l2.clean_ways_min >= 0, "l2.clean_ways_min",
            "must not be negative (absent or 0: dirty lines may take every way)");
  c.require(l2.clean_ways_min < l2.associativity, {"l2.clean_ways_min", "l2.associativity"},
            "l2.clean_ways_min must be below l2.associativity (absent or 0: dirty lines may take every way)");
  for (double cost : l2.setaside_write_cost)
    c.require(std::isfinite(cost) && cost >= 0, "l2.setaside_write_cost", "every entry must be a number of 0 or more");
  c.require(l2.partial_sectors_max >= 0, "l2.partial_sectors_max", "must not be negative (absent or 0: no limit)");
  c.require(l2.persisting_max == 0 || a.compute_capability.major >= 8, {"l2.persisting_max", "compute_capability"},
            "L2 persistence needs compute capability 8.0 or later; use l2.persisting_max: 0B");
  c.require(l2.max_window_size == 0 || l2.persisting_max > 0, {"l2.max_window_size", "l2.persisting_max"},
            "access-policy windows need a persisting set-aside (l2.persisting_max > 0)");
}

void check_dram(const Arch& a, const Checker& c) {
  c.positive(static_cast<double>(a.dram.size), "dram.size");
  c.positive(a.dram.bus_width_bits, "dram.bus_width_bits");
  c.positive(a.dram.channels, "dram.channels");
  // The simulator keeps a row per bank and counts bytes per channel: bounds far past any GPU's keep both small.
  c.require(a.dram.channels <= (1 << 20), "dram.channels", "at most 1048576");
  c.positive(a.dram.peak_bandwidth, "dram.peak_bandwidth");
  c.positive(a.dram.effective_bandwidth, "dram.effective_bandwidth");
  c.require(a.dram.effective_bandwidth <= a.dram.peak_bandwidth, {"dram.effective_bandwidth", "dram.peak_bandwidth"},
            "dram.effective_bandwidth cannot exceed dram.peak_bandwidth");
  c.positive(a.dram.latency_cycles, "dram.latency_cycles");
  c.power_of_two(a.dram.row_bytes, "dram.row_bytes");
  c.require(a.dram.row_bytes <= (std::uint64_t{1} << 20), "dram.row_bytes", "must be at most 1 MiB");
  c.require(a.dram.row_bytes >= a.l2.line, {"dram.row_bytes", "l2.line"},
            "dram.row_bytes must hold at least one L2 line");
  c.require(a.dram.banks >= 0 && a.dram.banks <= (1 << 24), "dram.banks", "must be in 0..16777216");
  c.require(a.dram.read_activation_rate >= 0, "dram.read_activation_rate", "must not be negative");
  c.require(a.dram.write_activation_rate >= 0, "dram.write_activation_rate", "must not be negative");
  c.require(a.launch_overhead_seconds < 1e-3, "launch.overhead", "over 1ms is not a plausible launch overhead");
  c.require(a.launch_idle_overhead_seconds < 1e-3, "launch.idle_overhead",
            "over 1ms is not a plausible launch overhead");
  c.require(a.launch_idle_overhead_seconds >= a.launch_overhead_seconds, {"launch.idle_overhead", "launch.overhead"},
            "launch.idle_overhead cannot be less than launch.overhead (an idle GPU adds submission latency)");
  c.require(a.launch_gpu_overhead_seconds >= 0 && a.launch_gpu_overhead_seconds < 1e-3, "launch.gpu_overhead",
            "must be 0 to 1ms");
  c.positive(a.block_launch_cycles, "launch.block_cycles");
  c.positive(a.warp_launch_cycles, "launch.warp_cycles");
  c.require(a.overlap_exponent >= 1, "timing.overlap_exponent", "must be at least 1 (1 adds the times up)");
}

// The record's own consistency (its numbers against the run are `memhier validate --check-record`'s to check).
void check_accuracy(const Arch& a, const Checker& c) {
  const AccuracyRecord& r = a.accuracy;
  if (r.run.empty() && r.measured_on.empty()) return;
  c.require(!r.run.empty(), "accuracy.run", "must name the committed run (validate/results/...)");
  c.require(std::isfinite(r.time_mape_pct) && r.time_mape_pct <= 1e6, "accuracy.time_mape",
            "must be a finite percentage");
  c.require(r.cases >= 1, "accuracy.cases", "must be at least 1");
  c.require(r.within_25pct <= r.cases, {"accuracy.within_25pct", "accuracy.cases"},
            "accuracy.within_25pct cannot exceed accuracy.cases");
  c.require(!r.worst.empty(), "accuracy.worst", "must name the worst case and its error (\"name: -22.6%\")");
  for (std::size_t b = 0; b < r.by_bound.size(); ++b)
    c.require(!r.by_bound[b].empty(), fmt::format("accuracy.by_bound.{}", AccuracyRecord::kBoundNames[b]),
              "must give the run's cases bound there (\"19 cases, MAPE 8.4%, from -19.6% to +12.9%\"; \"0 cases\")");
}

}  // namespace

void validate_arch(const Arch& arch) {
  Checker c(arch);
  c.require(!arch.name.empty(), "name", "must not be empty");
  check_sm(arch, c);
  check_registers(arch, c);
  check_shared(arch, c);
  check_caches(arch, c);
  check_dram(arch, c);
  check_accuracy(arch, c);
}

}  // namespace memhier
