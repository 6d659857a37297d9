#pragma once
// Memory-hierarchy simulation: a trace and an architecture in, exact counts per level out. No time here; the timing
// model turns these counts into seconds. Counter names follow Nsight Compute where it has a counterpart (README table).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memhier/arch.h"
#include "memhier/occupancy.h"
#include "memhier/trace.h"

namespace memhier {

// Where a simulation's wall time went (seconds, summed over launches), for studying its speed: reading blocks from the
// trace source, the SM phase (coalescer, L1, warp scheduling), the L2 phase (replay through the slices and DRAM), the
// set-up (the L2 slices, and each launch's L1s and warp schedulers) and everything else (batches' bookkeeping, the
// end).
struct SimPhaseTimes {
  double read = 0, sm = 0, l2 = 0, setup = 0, total = 0;
};

// How far a simulation has come, as SimOptions::progress is told: after each batch of blocks (a few waves), each round
// of a batch that takes several (long blocks: simulate.cpp), and at the end of each launch.
struct SimProgress {
  std::size_t launch = 0;         // 0-based, among the launches the source gave
  std::string_view kernel;        // its name
  std::uint64_t blocks = 0;       // of the launch's grid taken so far (each batch's, some of them still running)
  std::uint64_t grid_blocks = 0;  // the launch's grid
  // Warp instructions issued so far (memory instructions and barriers), this launch's and the earlier launches'.
  std::uint64_t warp_instructions = 0;
  bool launch_done = false;  // the launch's last call: every block done
};

struct SimOptions {
  int threads = 1;                     // OpenMP threads for the per-SM and per-slice phases; results are identical
  bool flush_between_launches = true;  // ncu's default cache control: every launch starts cold, its DRAM rows closed
  std::optional<AccessPolicyWindow> window;           // replaces the trace's windows (--window)
  std::optional<std::uint64_t> persisting_set_aside;  // replaces the trace's set-aside
  std::optional<double> window_hit_ratio;             // replaces the hit ratio of every window (trace's or `window`)
  SimPhaseTimes* times = nullptr;                     // filled in (added to) when set
  // The most L2 requests an SM's list holds before the slice groups replay them (simulate.cpp: a batch then goes in
  // rounds, with the counts of one pass). It bounds the memory the lists take, 64 bytes a request (the request and its
  // copy sorted by slice group); at least 1.
  std::uint64_t round_requests = std::uint64_t{1} << 15U;
  // Called on simulate()'s thread as the simulation goes (SimProgress), when set. An exception it throws ends the
  // simulation and leaves simulate() (a caller's way to stop a long run).
  std::function<void(const SimProgress&)> progress;
};

// Counts of one kernel launch. Field names are the snake_case of the ncu metric they match (see sim_counter_table()).
struct SimCounters {
  // L1TEX front end, global and local memory
  std::uint64_t global_ld_requests = 0, global_ld_sectors = 0;
  std::uint64_t global_st_requests = 0, global_st_sectors = 0;
  std::uint64_t global_atom_requests = 0, global_atom_sectors = 0;
  std::uint64_t global_red_requests = 0, global_red_sectors = 0;
  std::uint64_t local_ld_requests = 0, local_ld_sectors = 0;
  std::uint64_t local_st_requests = 0, local_st_sectors = 0;
  std::uint64_t l1_sector_lookups = 0, l1_sector_hits = 0;  // loads through L1 (global, local, texture)
  std::uint64_t l1_bypass_sectors = 0;                      // .cg loads, atomics, bulk copies
  std::uint64_t l1_wavefronts = 0;     // data-stage passes of global/local requests (see SmFront::global_access)
  std::uint64_t l1_ld_wavefronts = 0;  // of which loads
  // shared memory
  std::uint64_t shared_ld_requests = 0, shared_ld_wavefronts = 0, shared_ld_bank_conflicts = 0;
  std::uint64_t shared_st_requests = 0, shared_st_wavefronts = 0, shared_st_bank_conflicts = 0;
  std::uint64_t shared_atom_requests = 0, shared_atom_wavefronts = 0;    // atomics on shared memory (ATOMS)
  std::uint64_t shared_async_requests = 0, shared_async_wavefronts = 0;  // cp.async's writes into shared memory
  // constant cache
  std::uint64_t constant_requests = 0, constant_serialized = 0, constant_broadcasts = 0, constant_misses = 0;
  // L2
  std::uint64_t l2_read_sectors = 0, l2_read_hits = 0;
  std::uint64_t l2_write_sectors = 0, l2_write_hits = 0;
  std::uint64_t l2_atom_sectors = 0, l2_atom_hits = 0;
  std::uint64_t l2_red_sectors = 0, l2_red_hits = 0;
  std::uint64_t l2_far_sectors = 0;      // requests served by the other partition's slices
  std::uint64_t l2_merged_sectors = 0;   // read sectors the TPC's other SM, or the SM (.cg), had in flight (no lookup)
  std::uint64_t l2_beats = 0;            // slice data-path beats (l2.slice_width each) of every lookup
  std::uint64_t l2_write_beats = 0;      // of which write lookups' (l2.write_beat_cost read beats each)
  std::uint64_t l2_atom_beats = 0;       // of which atomic lookups' (one a sector, l2.atom_beat_cost read beats each)
  std::uint64_t l2_persisting_hits = 0;  // hits on lines held in the persisting set-aside
  std::uint64_t l2_partial_fills = 0;    // partly written sectors written to DRAM and fetched whole (l2_slice.h)
  // DRAM
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  std::uint64_t dram_row_hits = 0, dram_row_misses = 0;  // accesses to the row open in their bank, and the others
  std::uint64_t dram_write_row_misses = 0;               // of the latter, write-backs
  // launch
  std::uint64_t warp_instructions = 0, barriers = 0, work = 0;
  std::uint64_t load_waits = 0;    // runs of independent loads a warp issues before it must wait (see run_sm)
  std::uint64_t shared_waits = 0;  // such runs of shared-memory loads only
  std::uint64_t async_waits = 0;   // warps released from a barrier while their block's async copies were in flight
  std::uint64_t blocks = 0, waves = 0;

  SimCounters& operator+=(const SimCounters& o);
  friend bool operator==(const SimCounters&, const SimCounters&) = default;
};

// The L2 residency control a launch ran with: the set-aside (cudaLimitPersistingL2CacheSize) and access-policy
// windows of SimOptions where given, else the trace's, as far as the architecture has them.
struct L2Residency {
  std::uint64_t set_aside_requested = 0;  // bytes asked for
  std::uint64_t set_aside_granted = 0;    // whole ways, rounded up: what cudaDeviceGetLimit then reads back
  std::uint32_t persisting_ways = 0;      // of l2.associativity
  // Dirty lines a set may hold (more: the oldest is written back), l2_dirty_ways(); 0: every way.
  std::uint32_t dirty_ways = 0;
  std::vector<AccessPolicyWindow> windows;  // in effect
  // Why the trace's set-aside or windows were left out, or empty: the CUDA runtime refuses them on this
  // architecture (set_aside_problem(), window_problem()), so the launch runs as it would after the refused call.
  std::string left_out;
};

// Why the CUDA runtime refuses a set-aside of `set_aside` bytes (cudaDeviceSetLimit) or the window `w`
// (cudaStreamSetAttribute, a launch attribute) on `arch`, or nullopt when it accepts it. Refused on the H100
// (validate/results/h100-2026-11-27/probe, cudaErrorInvalidValue): a set-aside past persistingL2CacheMaxSize
// (l2.persisting_max) by one byte, a window past accessPolicyMaxWindowSize (l2.max_window_size) by one page, a
// hitRatio outside [0, 1], a missProp of persisting. An architecture whose l2.persisting_max or l2.max_window_size is
// 0B has none.
std::optional<std::string> set_aside_problem(const Arch& arch, std::uint64_t set_aside);
// Dirty lines an L2 set may hold with `persisting_ways` of its ways set aside (more: the oldest is written back):
// l2.dirty_fraction_max of its ways, and at most the ways the set-aside leaves less l2.clean_ways_min, at least one;
// 0 when neither limits them (every way). H100 (validate/results/h100-2026-11-27b): 8 of 16 up to 5 ways set aside,
// then 13 less the ways set aside, though no line persists.
std::uint32_t l2_dirty_ways(const Arch& arch, std::uint32_t persisting_ways);
std::optional<std::string> window_problem(const Arch& arch, const AccessPolicyWindow& w);

// The host memory the simulator's cache state takes on `arch`, cache by cache: the L2's about 20 bytes a line (a
// 16-way set's tags, keys and states in a 256-byte block, and each line's written words: set_cache.h), each SM's L1
// up to 40 (at most unified_l1.size; LRU's index: sectored_cache.h) and its constant cache 8 (lru_sets.h). `key` is
// the arch key that sizes the cache, `what` says which caches, ending in a verb ("132 L1s of 256KiB take").
// simulate() refuses an arch whose state exceeds the host's memory.
struct CacheHostState {
  const char* key;
  std::string what;
  double bytes;
};
std::vector<CacheHostState> cache_host_state(const Arch& arch);
// This machine's physical memory in bytes (0 where the system does not say): simulate() refuses a cache whose state
// (cache_host_state()) exceeds it.
std::uint64_t host_memory_bytes();

struct KernelSim {
  KernelLaunch launch;
  Occupancy occupancy;
  SimCounters counters;
  L2Residency residency;
  double achieved_warps_per_sm = 0;  // mean resident warps per SM over the waves, by instruction share
  // DRAM bytes by channel (dram.channels of them): each L2 slice fronts a share of the banks, so of the channels
  // (l2_slice.h). The GPU's address-to-channel hash is undocumented; the model's spreads lines evenly, so these show
  // how evenly a kernel's DRAM traffic covers the channels, not a camping pattern of the GPU's own hash.
  std::vector<std::uint64_t> dram_channel_read_bytes, dram_channel_write_bytes;
};

// One row of the metric table: our name, the ncu metric (empty when ncu has none), the field.
struct SimCounterInfo {
  std::string_view name;
  std::string_view ncu_metric;
  std::uint64_t SimCounters::*field;
  std::string_view description;
};
const std::vector<SimCounterInfo>& sim_counter_table();

// Simulates every launch of `trace` on `arch`. Throws InputError for launches the architecture cannot run, and for
// a SimOptions set-aside or window the architecture refuses (a trace's are left out instead: L2Residency::left_out).
std::vector<KernelSim> simulate(const Arch& arch, TraceSource& trace, const SimOptions& options = {});

}  // namespace memhier
