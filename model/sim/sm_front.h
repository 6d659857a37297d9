#pragma once
// One SM's memory front end: coalescer for global/local, bank model for shared, constant-cache serialization and
// misses, and its L1 (sectored; loads allocate unless bypassed; stores write through). Misses leave as L2 sector
// requests.
#include <vector>

#include "../cache/lru_sets.h"
#include "../cache/sectored_cache.h"
#include "../smem/bank_model.h"
#include "../util/divisor.h"
#include "coalescer.h"
#include "memhier/sim.h"
#include "sim_types.h"
#include "warp_scheduler.h"

namespace memhier {

struct SmFrontSpec {
  CacheGeometry l1;
  bool l1_enabled = true;
  unsigned banks = 32;
  unsigned bank_bytes = 4;
  std::uint64_t local_base = 0;     // generic address of the local-memory window
  std::uint64_t local_threads = 0;  // local memory is interleaved word by word across all thread slots
  int slices = 1;
  std::uint64_t l2_sets = 1;  // sets of all slices together (place_in_sets)
  int partitions = 1;         // slices s, s + 1, ... s + partitions - 1 (s a multiple of partitions) form one group
  // Of each slice: its group (slice / partitions) and its partition (slice % partitions, the home of its lines).
  // Tables the caller keeps for as long as the SmFront lives, so a request needs no division.
  const std::uint16_t* slice_group = nullptr;
  const std::uint8_t* slice_home = nullptr;
  // Load-to-use latencies (SM cycles) that order the warps' issue: a load served by L1 (all sectors hit), by L2
  // (some missed L1; the L2's outcome is not known until the replay, so the mean of near and far), shared, constant.
  std::uint32_t l1_latency = 1, l2_latency = 1, shared_latency = 1, constant_latency = 1;
  std::uint32_t async_copy_predicated_loads = 0;  // never-executed LDS nvcc puts before each cp.async
  // The constant cache whose misses are counted (constant_ways 0: none); constant addresses / 2^shift are its lines.
  std::uint32_t constant_sets = 1, constant_ways = 0;
  unsigned constant_line_shift = 6;
  unsigned dram_row_line_shift = 3;                  // log2(lines of a DRAM row chunk: dram.row_bytes / 128)
  std::uint64_t bulk_bytes_max = ~std::uint64_t{0};  // a bulk copy's largest (a block's shared memory)
  // The launch's first blocks, in launch order (x fastest), whose reads may merge with the TPC sibling's
  // (L2Request::paired): the first wave's. `grid_x` x `grid_y` blocks a z plane.
  std::uint64_t paired_blocks = ~std::uint64_t{0};
  bool tpc_merge = false;  // the architecture's TPC siblings merge their L1 misses (l1.miss_merge_sms: 2)
  std::uint64_t grid_x = 1, grid_y = 1;
};

// Aligned to two cache lines: simulate() runs the SMs on all host threads, and an SM's counters and state, written
// at every instruction, must not share a line with its neighbour's (with the schedulers' state shared too, at 16
// threads the SM phase took about 1.5 times as long: bench/results/compare-gpu-machine-2026-11-26-session40).
class alignas(128) SmFront {
 public:
  // Requests go to `lists` (begin_round() before each round's). `l1`: an empty cache of the spec's L1 geometry, which
  // the caller keeps from launch to launch (building one costs its capacity; moving it in and out of each launch's
  // SmFront cost a trace of 500 short launches 4%, its PLRU tables in place).
  SmFront(const SmFrontSpec& spec, const PolicyMap& policy, RequestLists& lists, int sm, SectoredCache& l1);
  // `thread_base`: the thread slot of lane 0 of the record's warp, numbered over all SMs (for local addresses).
  IssueCost issue(const BlockTrace& b, const WarpRecord& r, std::uint64_t cycle, std::uint64_t thread_base);
  SimCounters counters;
  // Starts counting the requests of a round of issues (simulate.cpp); they go on the SM's list after those of earlier
  // rounds not yet replayed, their cycles going on from those.
  void begin_round();
  // Before the SM issues blocks of `lanes` active lanes of memory records (BlockTrace::lanes, shared memory's included:
  // a bound on its L1 lookups): brings its L1's tables into the host's caches when that is worth it, at least
  // kWarmLanes lanes a line the L1 holds (a short launch's few lookups would not repay the H100 L1's 41 KiB).
  void warm_l1(std::uint64_t lanes) const {
    const CacheGeometry& g = m_l1.geometry();
    if (lanes >= kWarmLanes * std::uint64_t{g.sets} * g.ways) m_l1.warm();
  }
  // Chosen, not fitted: 500 launches of 16 blocks (memhier_bench_sim BM_SimManyLaunches: no SM reaches it) took
  // 73.7-74.6 ms with it against 72.7-74.1 without, on this project's VM.
  static constexpr std::uint64_t kWarmLanes = 4;
  // Requests made since the round began, and the latest cycle they issued in.
  [[nodiscard]] std::uint64_t requests() const { return m_requests; }
  // Active lanes of the memory instructions issued since the round began.
  [[nodiscard]] std::uint64_t lanes_issued() const { return m_lanes_issued; }
  [[nodiscard]] std::uint64_t last_cycle() const { return m_last_cycle; }

 private:
  void predicated_loads_of_async_copy();
  // `layout`: what is known of the addresses (LaneLayout bits). `addresses`: every lane's, or of a compact dense record
  // only its first and last lane's (m_compact set; lanes() gives them all).
  IssueCost global_access(const WarpRecord& r, std::span<const std::uint64_t> addresses, std::uint8_t layout);
  // Every lane's address of the record issued: `a` itself, or a compact record's lanes written out.
  std::span<const std::uint64_t> lanes(const WarpRecord& r, std::span<const std::uint64_t> a);
  // The L1 data stage's passes for a request of `lines` lines (addresses `a`) that takes at least `floor` of them (a
  // load's lines missing L1 come back two a pass): as many as its most-loaded bank has distinct words (softmax_naive's
  // column of rows: 32, one word of every line in one bank; a random gather of L1 hits: about 4 for 28 lines), never
  // more than one a line, so a request within one line takes one. The bank count is needed only where it could exceed
  // `floor`, which the lanes a bank count rules out for a scattered gather of bank words.
  std::uint32_t data_passes(const WarpRecord& r, std::span<const std::uint64_t> a, std::uint32_t lines,
                            std::uint32_t floor);
  // The most lanes' words of `a` (accesses of `size` bytes, at most a bank word) in one bank: no fewer than the
  // distinct words the data stage's most-loaded bank holds.
  [[nodiscard]] std::uint32_t most_lanes_a_bank(std::span<const std::uint64_t> a, unsigned size) const;
  // A compact record's wavefronts through the banks in closed form where its lanes are bank words at a stride or at
  // most an access apart (strided_wavefronts: a tile's column, a broadcast, a strided load, a row of float4), without
  // writing its lanes out; else nullopt.
  [[nodiscard]] std::optional<BankResult> compact_banks(const WarpRecord& r) const;
  // Counts a shared-memory access of wavefronts `w` and says what it costs the pipeline.
  IssueCost shared_access(const WarpRecord& r, const BankResult& w);
  // Wavefronts of the access through the banks (shared memory, and the L1 data stage, which has the same banks).
  BankResult banks(const WarpRecord& r, std::span<const std::uint64_t> addresses);
  // The L1 slot of `line`, allocated (with `property`) if absent, else made most recently used.
  std::uint32_t l1_line(std::uint64_t line, L2Property property);
  // For each line i of m_sectors, the 4-byte words the store's lanes write completely, into m_words[i]: bit 8s + w is
  // word w of sector s (a sector's 8 bits all set: the whole sector).
  void written_words(std::span<const std::uint64_t> addresses, unsigned size);
  // As written_words() for lanes that write one run of bytes, [first, end): line by line, the words wholly inside it.
  void gapless_words(std::uint64_t first, std::uint64_t end);
  // As written_words() for a compact record (a stride, global) of whole words, without looking at each lane: lanes at
  // one place of lines a multiple of 128 bytes apart (a column's stores, a thread's row of output) write the same
  // words of every line; lanes a power of two below 128 bytes apart, each within its stride (a field of structures),
  // the same words of every line but where the lanes begin and end. False, with nothing written, for other records.
  bool strided_words(const WarpRecord& r);
  // `words`: a write's written_words() (L2Request::words); 0 for other operations.
  void send(std::uint64_t line, std::uint32_t sectors, L2Op op, std::uint32_t words = 0);
  template <typename F>
  void for_lines(F&& f);  // f(line, sector mask) for each line the coalesced sectors touch
  // Of the sectors `sectors` of `line` that an L1-bypassing load (.cg) reads at the current cycle, those this SM's
  // earlier such loads have in flight (sent to L2 less than the L2 latency before): the L1's miss tracking hands them
  // the same data, and they reach L2 once. Notes the rest as in flight from now.
  std::uint32_t in_flight(std::uint64_t line, std::uint32_t sectors);

  RequestLists& m_lists;
  std::vector<L2Request>* m_out = nullptr;  // the current batch's list
  std::uint64_t m_requests = 0;
  std::uint64_t m_lanes_issued = 0;
  std::uint64_t m_last_cycle = 0;
  // DRAM row chunks (line >> dram_row_line_shift) of the line the instruction being issued sent last, and of the line
  // this SM's last write request was for (~0: none).
  std::uint64_t m_sent_chunk = ~std::uint64_t{0};
  std::uint64_t m_written_chunk = ~std::uint64_t{0};
  SmFrontSpec m_spec;
  const PolicyMap& m_policy;
  SectoredCache& m_l1;
  // The constant cache as the indexed constant loads (LDC) see it: line mod sets, least recently used out (the H100
  // probe, validate/results/h100-2026-11-24c: every lookup costs 2 cycles, a request whose line is absent a replay).
  LruSets m_constant;
  int m_sm;
  Divisor m_l2_sets, m_slices;  // place_in_sets()'s divisions of every request
  std::uint8_t m_partition;     // the L2 partition this SM belongs to
  bool m_paired = false;  // whether the block being issued merges its reads with the sibling's (L2Request::paired)
  std::uint64_t m_cycle = 0;
  SectorSet m_sectors;
  std::array<std::uint32_t, std::tuple_size_v<decltype(SectorSet::lines)>> m_words{};  // written_words()'s
  std::array<std::uint64_t, kWarpSize> m_mapped{};
  std::array<std::uint8_t, kWarpSize> m_lanes{};
  LaneBuffer m_buffer{};                  // a compact record's lane addresses, written out (BlockTrace::lane_addresses)
  const BlockTrace* m_block = nullptr;    // the block of the record being issued
  const BlockTrace* m_compact = nullptr;  // the same, where the record is compact and dense (see global_access)
  std::array<std::uint64_t, 2> m_ends{};  // its first and last lane's addresses
  // What a record in runs form (kLayoutRuns: a two-dimensional block's rows) makes of its 32 lanes depends on its
  // runs and on where its first lane lies in a period of m_period bytes (a line, and a row of every bank: both powers
  // of two), not on which period: its lines move with the period, its sectors and its banks' words do not.
  // matmul_naive's warps read two rows of A and of B instruction after instruction, a period on each time, whose
  // lanes coalescing and the banks walked one by one (a third of its host instructions). A direct-mapped table of
  // shapes keeps the lines (relative to the period's first line) and the bank result, each worked out the first time
  // it is needed.
  struct RunsShape {
    std::uint64_t stride = 0, step = 0;
    std::uint32_t offset = 0;  // the first lane's address mod m_period
    std::uint8_t length = 0;   // 0: an empty entry
    std::uint8_t size = 0;
    std::int8_t line_count = -1;  // lines below, -1 not known yet, -2 more than fit
    std::uint8_t sectors = 0;
    std::array<std::uint32_t, 8> line{};  // line - the period's first line
    std::array<std::uint8_t, 8> mask{};
    bool banks_known = false;
    BankResult banks;
  };
  std::uint64_t m_period;  // max(line, banks x bank width)
  // The shape of runs-form record `r` of `b`, none where its lanes could wrap past 2^64 (its first address from 2^62,
  // or a stride or step from 2^32, a negative one included: those take the lane-by-lane way).
  RunsShape* runs_shape(const BlockTrace& b, const WarpRecord& r);
  // The shape's bank result (banks()), worked out from `r`'s lanes the first time.
  const BankResult& shape_banks(RunsShape& s, const BlockTrace& b, const WarpRecord& r);
  // Coalesces `r` (issued with m_shape set) into m_sectors through its shape.
  void coalesce_runs(const WarpRecord& r, std::span<const std::uint64_t> a, std::uint8_t layout);
  std::vector<RunsShape> m_shapes;  // 128, made the first time a runs-form record comes
  RunsShape* m_shape = nullptr;     // of the global record being issued, where it is in runs form
  // in_flight()'s reads: direct-mapped by line (a line whose entry another took loses its merges), made at the first
  // .cg load; an SmFront lives for one launch, whose cycles only go up.
  struct InFlight {
    std::uint64_t line = 0;
    std::uint64_t cycle = 0;
    std::uint32_t sectors = 0;  // none: an empty entry
  };
  static constexpr std::size_t kInFlight = 256;
  std::vector<InFlight> m_in_flight;
};

}  // namespace memhier
