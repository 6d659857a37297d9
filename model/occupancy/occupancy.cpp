#include "memhier/occupancy.h"

#include <fmt/format.h>

#include <algorithm>

#include "memhier/units.h"

namespace memhier {
namespace {

std::uint64_t round_up(std::uint64_t x, std::uint64_t unit) { return (x + unit - 1) / unit * unit; }
int div_up(int x, int y) { return (x + y - 1) / y; }

// A launch can break several limits at once; the user should see every one.
void add_reason(Occupancy& o, const std::string& reason) {
  o.not_launchable += (o.not_launchable.empty() ? "" : "; ") + reason;
}

// Smallest allowed carveout that holds `bytes`; 0 if none does.
std::uint64_t align_to_carveout(const Arch& arch, std::uint64_t bytes) {
  for (std::uint64_t c : arch.unified_l1.carveouts) {
    if (c >= bytes) return c;
  }
  return 0;
}

void check_inputs(const LaunchResources& l) {
  if (l.threads_per_block <= 0) throw InputError({}, "threads", "threads per block must be at least 1");
  if (l.registers_per_thread < 0) throw InputError({}, "regs", "registers per thread cannot be negative");
  if (l.carveout_percent < -1 || l.carveout_percent > 100) {
    throw InputError({}, "carveout", "carveout preference must be -1 (none) or a percentage 0..100");
  }
  if (l.block_barriers < 0) throw InputError({}, "barriers", "barrier count cannot be negative");
}

int registers_limit(const Arch& a, const LaunchResources& l, Occupancy& o) {
  const RegisterSpec& r = a.registers;
  if (l.registers_per_thread > r.max_per_thread) {  // before any arithmetic: the count may be absurdly large
    add_reason(
        o, fmt::format("{} registers per thread exceeds the limit of {}", l.registers_per_thread, r.max_per_thread));
    return 0;
  }
  auto regs_per_warp =
      static_cast<std::int64_t>(round_up(static_cast<std::uint64_t>(l.registers_per_thread) * a.sm.warp_size,
                                         static_cast<std::uint64_t>(r.allocation_unit)));
  std::int64_t allocated = regs_per_warp * o.warps_per_block;  // 64-bit: warps may be absurd before the thread check
  o.allocated_registers_per_block = static_cast<int>(std::min<std::int64_t>(allocated, INT_MAX));
  // The hardware checks the per-block limit as if warps were spread over every sub-partition.
  std::int64_t assumed = regs_per_warp * div_up(o.warps_per_block, a.sm.sub_partitions) * a.sm.sub_partitions;
  if (r.per_block < assumed || r.per_block < allocated) {
    add_reason(
        o, fmt::format("{} registers per block exceeds the limit of {}", std::max(assumed, allocated), r.per_block));
    return 0;
  }
  if (regs_per_warp == 0) return INT_MAX;
  int warps_per_sub_partition = static_cast<int>(r.per_sm / a.sm.sub_partitions / regs_per_warp);
  return warps_per_sub_partition * a.sm.sub_partitions / o.warps_per_block;
}

int shared_limit(const Arch& a, const LaunchResources& l, Occupancy& o) {
  const SharedMemorySpec& s = a.shared_memory;
  constexpr std::uint64_t kAbsurd = 1ULL << 40;  // keeps the sum below in range; far above any real limit
  if (l.static_shared_bytes > kAbsurd || l.dynamic_shared_bytes > kAbsurd) {
    add_reason(o, fmt::format("{} static + {} dynamic shared memory per block exceeds the limit of {}",
                              units::format_bytes(l.static_shared_bytes), units::format_bytes(l.dynamic_shared_bytes),
                              units::format_bytes(s.max_per_block_optin)));
    return 0;
  }
  std::uint64_t used = l.static_shared_bytes + s.reserved_per_block + l.dynamic_shared_bytes;
  o.allocated_shared_per_block = round_up(used, s.allocation_unit);
  std::uint64_t per_block_limit =
      (l.shared_optin && used > s.per_block_default ? s.max_per_block_optin : s.per_block_default) +
      s.reserved_per_block;
  if (o.allocated_shared_per_block > per_block_limit) {
    add_reason(o, fmt::format("{} of shared memory per block exceeds the limit of {}{}",
                              units::format_bytes(o.allocated_shared_per_block), units::format_bytes(per_block_limit),
                              l.shared_optin ? "" : " (without opt-in)"));
    return 0;
  }
  std::uint64_t preferred =
      l.carveout_percent < 0
          ? s.max_per_sm
          : align_to_carveout(a, static_cast<std::uint64_t>(l.carveout_percent) * s.max_per_sm / 100);
  std::uint64_t per_sm =
      preferred >= o.allocated_shared_per_block ? preferred : align_to_carveout(a, o.allocated_shared_per_block);
  if (o.allocated_shared_per_block == 0) return INT_MAX;
  o.shared_carveout = per_sm;
  return static_cast<int>(per_sm / o.allocated_shared_per_block);
}

}  // namespace

Occupancy compute_occupancy(const Arch& arch, const LaunchResources& launch) {
  check_inputs(launch);
  Occupancy o;
  o.warps_per_block = static_cast<int>((static_cast<std::int64_t>(launch.threads_per_block) + arch.sm.warp_size - 1) /
                                       arch.sm.warp_size);
  o.blocks_by_registers = registers_limit(arch, launch, o);
  if (launch.threads_per_block > arch.sm.max_threads_per_block) {
    o.blocks_by_warps = 0;
    add_reason(o, fmt::format("{} threads per block exceeds the limit of {}", launch.threads_per_block,
                              arch.sm.max_threads_per_block));
  } else {
    o.blocks_by_warps = arch.sm.max_warps_per_sm / o.warps_per_block;
  }
  o.blocks_by_blocks = arch.sm.max_blocks_per_sm;
  o.blocks_by_shared_memory = shared_limit(arch, launch, o);

  int limit = std::min({o.blocks_by_registers, o.blocks_by_shared_memory, o.blocks_by_warps, o.blocks_by_blocks});
  if (limit == o.blocks_by_warps) o.limiters |= limit_warps;
  if (limit == o.blocks_by_registers) o.limiters |= limit_registers;
  if (limit == o.blocks_by_shared_memory) o.limiters |= limit_shared_memory;
  if (limit == o.blocks_by_blocks) o.limiters |= limit_blocks;
  if (arch.sm.max_block_barriers_per_sm > 0 && launch.block_barriers > 0) {
    o.blocks_by_barriers = arch.sm.max_block_barriers_per_sm / launch.block_barriers;
    if (o.blocks_by_barriers < limit) o.limiters = 0;  // barriers alone set the limit now
    limit = std::min(limit, o.blocks_by_barriers);
    if (limit == o.blocks_by_barriers) o.limiters |= limit_barriers;
  }
  o.blocks_per_sm = limit;
  o.active_warps_per_sm = limit * o.warps_per_block;
  o.occupancy = static_cast<double>(o.active_warps_per_sm) / arch.sm.max_warps_per_sm;
  if (launch.carveout_percent < 0) {
    // No preference: the driver picks the smallest carveout that keeps this occupancy, leaving L1 the rest.
    o.shared_carveout = align_to_carveout(arch, o.allocated_shared_per_block * static_cast<std::uint64_t>(limit));
  } else if (o.allocated_shared_per_block == 0) {
    o.shared_carveout = align_to_carveout(
        arch, static_cast<std::uint64_t>(launch.carveout_percent) * arch.shared_memory.max_per_sm / 100);
  }
  o.l1_capacity = arch.unified_l1.size - o.shared_carveout;
  return o;
}

std::vector<std::string> limiter_names(unsigned limiters) {
  std::vector<std::string> names;
  if (limiters & limit_warps) names.emplace_back("warps");
  if (limiters & limit_registers) names.emplace_back("registers");
  if (limiters & limit_shared_memory) names.emplace_back("shared_memory");
  if (limiters & limit_blocks) names.emplace_back("blocks");
  if (limiters & limit_barriers) names.emplace_back("barriers");
  return names;
}

}  // namespace memhier
