#pragma once
// A GPU architecture as data: the typed specs every model level reads. Built from YAML by load_arch() or by hand in
// tests. Sizes are bytes, bandwidths bytes/second, latencies SM cycles, clocks Hz, times seconds.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "memhier/error.h"

namespace memhier {

enum class Replacement { lru, plru };  // plru: a binary tree of bits a set (the L1 only)

struct ComputeCapability {
  int major = 0;
  int minor = 0;
};

struct SmSpec {
  int count = 0;
  int warp_size = 32;
  int max_threads_per_sm = 0;
  int max_warps_per_sm = 0;
  int max_blocks_per_sm = 0;
  int max_threads_per_block = 0;
  int sub_partitions = 0;
  int max_block_barriers_per_sm = 0;  // 0: barriers do not limit occupancy on this architecture
};

struct RegisterSpec {
  int per_sm = 0;
  int per_block = 0;
  int max_per_thread = 0;
  int allocation_unit = 0;  // registers per warp are rounded up to this many
};

struct SharedMemorySpec {
  std::uint64_t max_per_sm = 0;         // largest carveout usable by blocks
  std::uint64_t per_block_default = 0;  // without opt-in
  std::uint64_t max_per_block_optin = 0;
  std::uint64_t reserved_per_block = 0;  // taken by the driver from every block's allocation (sm_80+)
  std::uint64_t allocation_unit = 0;
  int banks = 0;
  std::uint64_t bank_width = 0;
  double latency_cycles = 0;
  double bandwidth_bytes_per_clock = 0;  // per SM
  double barrier_cycles = 0;             // the shared-memory pipe's cycles per warp arriving at a barrier
  double barrier_latency_cycles = 0;     // a barrier's delay on a warp's critical path
  int async_copy_predicated_loads = 0;   // never-executed LDS nvcc issues before each cp.async (ncu counts them)
};

struct UnifiedL1Spec {
  std::uint64_t size = 0;                // L1 + shared memory per SM
  std::vector<std::uint64_t> carveouts;  // allowed shared-memory sizes, ascending
};

struct L1Spec {
  std::uint64_t line = 0;
  std::uint64_t sector = 0;
  // One of the two is set: `sets` (the ways follow the capacity the carveout leaves: capacity / (sets x line)) or
  // `ways` (the sets follow it: capacity / (ways x line)).
  int sets = 0;
  int ways = 0;
  Replacement replacement = Replacement::lru;
  double latency_cycles = 0;
  double bandwidth_bytes_per_clock = 0;  // per SM
  // SMs s and s + 1 (s even: the two of a TPC) whose read misses for a sector the other has in flight reach the
  // L2 once: 2; 0 or 1: every miss reaches it.
  int miss_merge_sms = 0;
};

struct ConstantCacheSpec {
  std::uint64_t size = 0;
  std::uint64_t line = 0;
  double latency_cycles = 0;
  std::uint64_t l15_size = 0;
  double l15_latency_cycles = 0;
  double replay_cycles = 0;  // SM cycles per extra distinct address of a warp's constant load (serialization)
  int associativity = 0;     // ways of a set; 0: the cache's misses are not simulated
  double miss_replays = 0;   // extra lookups (replay_cycles each) per request whose line the simulated cache lacks
};

struct L2Spec {
  std::uint64_t size = 0;
  std::uint64_t line = 0;
  std::uint64_t sector = 0;
  int associativity = 0;
  Replacement replacement = Replacement::lru;
  int slices = 0;
  int partitions = 0;
  double near_latency_cycles = 0;
  double far_latency_cycles = 0;
  double bandwidth = 0;                      // bytes/s, device-wide read bandwidth on L2 hits
  std::uint64_t slice_width = 0;             // bytes one slice moves per clock: a lookup takes at least one beat
  double write_beat_cost = 1;                // a write lookup's beat, in read beats (a slice holds a write longer)
  double atom_beat_cost = 1;                 // an atomic's beat (one a sector), in read beats
  std::uint64_t dram_fetch_granularity = 0;  // bytes fetched from DRAM per miss
  std::uint64_t persisting_max = 0;          // cudaDeviceProp::persistingL2CacheMaxSize; 0: unsupported
  std::uint64_t max_window_size = 0;         // cudaDeviceProp::accessPolicyMaxWindowSize; 0: unsupported
  double dirty_fraction_max = 0;             // share of a set's ways that may hold dirty lines; 0: all of them
  int clean_ways_min = 0;  // of the ways a persisting set-aside leaves a set, those dirty lines may not take; 0: none
  // By ways set aside (index; past the end: the last): the extra DRAM time of a byte written back, in picoseconds
  // (timing.cpp); empty: none.
  std::vector<double> setaside_write_cost;
  int partial_sectors_max = 0;  // partly written sectors the whole L2 holds (more: the oldest is filled); 0: any
};

struct DramSpec {
  std::string type;
  std::uint64_t size = 0;
  int bus_width_bits = 0;
  int channels = 0;
  double peak_bandwidth = 0;       // bytes/s, from bus width and data rate
  double effective_bandwidth = 0;  // bytes/s, measured streaming
  double latency_cycles = 0;
  // Row locality (model/l2/l2_slice.cpp): each bank keeps one row open; an access to another row activates it.
  std::uint64_t row_bytes = 1024;   // a bank's row (page): HBM 1 KiB per pseudo-channel, GDDR6 2 KiB
  int banks = 0;                    // banks of the whole device; 0: 16 a channel
  double read_activation_rate = 0;  // rows reads can open a second, device-wide; 0: not a limit the model knows
  double write_activation_rate = 0;
};

// The model's measured error on this GPU: a committed suite run (`validate/results/`) re-predicted with the current
// model, kernel time from the descriptions. `memhier validate --check-record` fails when the record no longer says
// what the run gives (a CI test runs it for every shipped record). A file sets all of its keys or none; a what-if that
// extends a file inherits the record (own_accuracy_record() is false), `measured_on` still naming that file's GPU, so
// its output can say the error was measured on the unchanged GPU, not on the what-if.
struct AccuracyRecord {
  std::string run;           // the run's folder, from the repository root; empty: nothing on record
  double time_mape_pct = 0;  // mean absolute percentage error of the predicted times
  int cases = 0;
  int within_25pct = 0;  // cases predicted within 25%
  std::string worst;     // the worst case and its signed error: "stencil_2d n=2048: -22.6%"
  // By the resource the model found binding (Prediction::bound), in kBoundNames' order: the run's cases bound by it,
  // their MAPE and the range of their errors ("19 cases, MAPE 8.4%, from -19.6% to +12.9%"; "0 cases").
  static constexpr std::array<const char*, 8> kBoundNames = {"dram",     "l2",    "l1",     "shared",
                                                             "constant", "issue", "blocks", "latency"};
  std::array<std::string, kBoundNames.size()> by_bound;
  std::string measured_on;  // name of the architecture whose file set the record
};

struct Arch {
  std::string name;
  std::string full_name;
  ComputeCapability compute_capability;
  double sm_clock_hz = 0;
  SmSpec sm;
  RegisterSpec registers;
  SharedMemorySpec shared_memory;
  UnifiedL1Spec unified_l1;
  L1Spec l1;
  ConstantCacheSpec constant_cache;
  L2Spec l2;
  DramSpec dram;
  double launch_overhead_seconds = 0;       // a launch queued behind running work (CUDA events, back to back)
  double launch_idle_overhead_seconds = 0;  // a launch that finds the GPU idle: submission latency included
  double launch_gpu_overhead_seconds = 0;   // its time on the GPU (ncu's gpu__time_duration); 0: not measured
  double block_launch_cycles = 0;           // SM cycles the block scheduler spends per block, per SM
  double warp_launch_cycles = 0;            // SM cycles per warp of a block; the larger of the two sets the rate
  double overlap_exponent = 0;              // how imperfectly concurrent activities overlap (timing.overlap_exponent)
  AccuracyRecord accuracy;

  std::string source_file;                           // empty when built in code
  std::map<std::string, SourceLocation> key_origin;  // where each key's value was set (for errors)
};

// Whether `arch`'s accuracy record is its own: set by the file it was loaded from (or in code), not inherited from a
// file it extends, whose GPU the record measured. By file, not by name: a what-if that keeps its base's name is still
// not the GPU that was measured.
inline bool own_accuracy_record(const Arch& arch) {
  if (arch.accuracy.run.empty()) return false;
  const auto it = arch.key_origin.find("accuracy.run");
  return it == arch.key_origin.end() || it->second.file == arch.source_file;
}

}  // namespace memhier
