// The counter table: each simulated count, the Nsight Compute metric it corresponds to, and what it means.
#include "memhier/sim.h"

namespace memhier {

const std::vector<SimCounterInfo>& sim_counter_table() {
  using C = SimCounters;
  static const std::vector<SimCounterInfo> table{
      {"global_ld_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", &C::global_ld_requests, "warp-level global loads"},
      {"global_ld_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", &C::global_ld_sectors, "32 B sectors they touch"},
      {"global_st_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", &C::global_st_requests, "warp-level global stores"},
      {"global_st_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", &C::global_st_sectors, "sectors they touch"},
      {"global_atom_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", &C::global_atom_requests, "global atomics"},
      {"global_atom_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum", &C::global_atom_sectors, "their sectors"},
      {"global_red_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", &C::global_red_requests, "global reductions"},
      {"global_red_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum", &C::global_red_sectors, "their sectors"},
      {"local_ld_requests", "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", &C::local_ld_requests, "local loads (spills)"},
      {"local_ld_sectors", "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", &C::local_ld_sectors, "their sectors"},
      {"local_st_requests", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum", &C::local_st_requests, "local stores"},
      {"local_st_sectors", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", &C::local_st_sectors, "their sectors"},
      {"l1_sector_lookups", "", &C::l1_sector_lookups, "load sectors looked up in L1 (hit rate = hits / lookups)"},
      {"l1_sector_hits", "", &C::l1_sector_hits, "of which hit (l1tex__t_sector_hit_rate.pct for loads)"},
      {"l1_bypass_sectors", "", &C::l1_bypass_sectors, "sectors sent past L1 (.cg, atomics, bulk copies)"},
      {"l1_wavefronts", "", &C::l1_wavefronts, "L1 data-stage passes of global/local requests: their most-loaded bank's words"},
      {"l1_ld_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum", &C::l1_ld_wavefronts, "of which loads"},
      {"shared_ld_requests", "smsp__inst_executed_op_shared_ld.sum", &C::shared_ld_requests, "warp-level shared loads"},
      {"shared_ld_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", &C::shared_ld_wavefronts, "their wavefronts"},
      {"shared_ld_bank_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", &C::shared_ld_bank_conflicts, "wavefronts beyond one per phase or the lanes' bytes / 128 B"},
      {"shared_st_requests", "smsp__inst_executed_op_shared_st.sum", &C::shared_st_requests, "shared stores"},
      {"shared_st_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", &C::shared_st_wavefronts, "their wavefronts"},
      {"shared_st_bank_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", &C::shared_st_bank_conflicts, "the same for stores"},
      // ncu counts neither among shared loads or stores (H100: histogram_shared's ATOMS, async_copy_pipeline's LDGSTS).
      {"shared_atom_requests", "", &C::shared_atom_requests, "warp-level shared atomics (not in ncu's shared ld/st counts)"},
      {"shared_atom_wavefronts", "", &C::shared_atom_wavefronts, "their wavefronts"},
      {"shared_async_requests", "", &C::shared_async_requests, "cp.async writes into shared memory (not in ncu's shared st counts)"},
      {"shared_async_wavefronts", "", &C::shared_async_wavefronts, "their wavefronts"},
      {"constant_requests", "", &C::constant_requests, "warp-level constant loads"},
      {"constant_serialized", "", &C::constant_serialized, "constant-cache accesses after serializing distinct addresses"},
      {"constant_broadcasts", "", &C::constant_broadcasts, "constant loads whose lanes all read one address"},
      {"constant_misses", "", &C::constant_misses,
       "constant-cache accesses whose line the SM's LRU constant cache lacked (arch constant_cache.associativity)"},
      {"l2_read_sectors", "lts__t_sectors_op_read.sum", &C::l2_read_sectors, "sector reads at L2"},
      {"l2_read_hits", "lts__t_sectors_op_read_lookup_hit.sum", &C::l2_read_hits, "of which hit"},
      {"l2_write_sectors", "lts__t_sectors_op_write.sum", &C::l2_write_sectors, "sector writes at L2"},
      {"l2_write_hits", "lts__t_sectors_op_write_lookup_hit.sum", &C::l2_write_hits, "of which hit (every write sector, as ncu counts)"},
      {"l2_atom_sectors", "lts__t_sectors_op_atom.sum", &C::l2_atom_sectors, "atomic sectors at L2"},
      {"l2_atom_hits", "", &C::l2_atom_hits, "of which hit"},
      // histogram_shared's 8192 RED instructions: lts__t_sectors_op_atom 0 on the H100, so reductions count apart.
      {"l2_red_sectors", "lts__t_sectors_op_red.sum", &C::l2_red_sectors, "reduction sectors at L2"},
      {"l2_red_hits", "", &C::l2_red_hits, "of which hit"},
      {"l2_far_sectors", "", &C::l2_far_sectors, "sectors a far partition's home slice served (its near copy lacked them)"},
      {"l2_merged_sectors", "", &C::l2_merged_sectors, "read sectors the other SM of the TPC had in flight: no L2 lookup"},
      {"l2_beats", "", &C::l2_beats, "slice data-path beats: each lookup takes ceil(sectors x 32 B / l2.slice_width)"},
      {"l2_persisting_hits", "", &C::l2_persisting_hits, "hits on lines in the persisting set-aside"},
      {"l2_partial_fills", "", &C::l2_partial_fills,
       "partly written sectors written to DRAM and fetched whole (past l2.partial_sectors_max pending)"},
      {"dram_read_bytes", "dram__bytes_read.sum", &C::dram_read_bytes, "bytes read from DRAM (fetch granularity)"},
      {"dram_write_bytes", "dram__bytes_write.sum", &C::dram_write_bytes, "bytes written back to DRAM"},
      {"dram_row_hits", "", &C::dram_row_hits, "DRAM accesses to the row the slice used last"},
      {"dram_row_misses", "", &C::dram_row_misses, "DRAM accesses opening another row"},
      {"warp_instructions", "", &C::warp_instructions, "warp-level memory instructions and barriers"},
      {"barriers", "", &C::barriers, "warp-level barriers"},
      {"load_waits", "", &C::load_waits, "times a warp waits on its loads: runs of loads of distinct instructions"},
      {"shared_waits", "", &C::shared_waits, "times a warp waits on shared-memory loads only"},
      {"async_waits", "", &C::async_waits, "times a warp waits at a barrier for its block's cp.async / bulk copies"},
      {"work", "", &C::work, "non-memory warp instructions from the trace"},
      {"blocks", "", &C::blocks, "thread blocks"},
      {"waves", "", &C::waves, "waves of resident blocks"},
  };
  return table;
}

}  // namespace memhier
