#pragma once
// What the simulator fuzzers share (sim_fuzz, accelsim_fuzz, desc_fuzz): the archs they simulate on and the checks on
// a simulation's counters.
#include <array>
#include <cstddef>
#include <cstdint>

#include "memhier/arch.h"
#include "memhier/arch_loader.h"
#include "memhier/sim.h"
#include "memhier/trace.h"

namespace memhier {

// The V100 and H100 made small (a few SMs, L2 slices and sets a slice: quick to build and to fill), their partitions,
// persisting set-aside and windows as shipped.
inline const std::array<Arch, 2>& small_archs() {
  static const std::array<Arch, 2> archs{
      load_arch_string("extends: v100\nname: v100-small\nsm:\n  count: 4\nl2:\n  size: 384KiB\n  slices: 8\n",
                       "v100-small.yaml"),
      load_arch_string("extends: h100\nname: h100-small\nsm:\n  count: 8\nl2:\n  size: 1600KiB\n  slices: 10\n"
                       "  persisting_max: 1000KiB\n",
                       "h100-small.yaml")};
  return archs;
}

// Every memory record and barrier of the trace issued (and, before each cp.async, the arch's predicated shared loads
// nvcc puts there), every block run, no level with more hits than lookups.
inline bool holds_together(const SimCounters& c, const TraceCounts& t, const Arch& arch) {
  const std::uint64_t records = t.memory_instructions + t.barriers;
  const std::uint64_t async = t.by_kind[static_cast<std::size_t>(AccessKind::async_copy)];
  return c.warp_instructions >= records &&
         c.warp_instructions <=
             records + async * static_cast<std::uint64_t>(arch.shared_memory.async_copy_predicated_loads) &&
         c.barriers == t.barriers && c.blocks == t.blocks && c.l1_sector_hits <= c.l1_sector_lookups &&
         c.l2_read_hits <= c.l2_read_sectors && c.l2_write_hits <= c.l2_write_sectors &&
         c.l2_atom_hits <= c.l2_atom_sectors && c.l2_red_hits <= c.l2_red_sectors &&
         c.l2_persisting_hits <= c.l2_read_hits + c.l2_write_hits + c.l2_atom_hits + c.l2_red_hits &&
         c.dram_write_row_misses <= c.dram_row_misses;
}

}  // namespace memhier
