#pragma once
// The one trace data model every source produces (kernel descriptions, .mht files, Accel-Sim traces) and every
// consumer reads. A trace is a sequence of kernel launches; a launch is a sequence of thread blocks in launch order;
// a block holds, per warp, its memory instructions and barriers in program order.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace memhier {

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  [[nodiscard]] std::uint64_t count() const { return std::uint64_t{x} * y * z; }
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

enum class AddressSpace : std::uint8_t { global, shared, local, constant, texture };
// load/store/atomic/reduction as in PTX; async_copy is cp.async (one record for the global read, one for the
// shared write, same pc); bulk_copy is cp.async.bulk / TMA (one lane, `bulk_bytes` bytes from its address).
enum class AccessKind : std::uint8_t { load, store, atomic, reduction, async_copy, bulk_copy };
// default; cg: cache globally (bypass L1); cs: streaming (evict first); nc: read-only (non-coherent) path.
enum class CacheHint : std::uint8_t { none, cg, cs, nc };
enum class RecordKind : std::uint8_t { memory, barrier };
enum class L2Property : std::uint8_t { normal, streaming, persisting };

inline constexpr int kWarpSize = 32;
inline constexpr int kAddressSpaceCount = 5;
inline constexpr int kAccessKindCount = 6;
inline constexpr int kCacheHintCount = 4;

std::string_view to_string(AddressSpace s);
std::string_view to_string(AccessKind k);
std::string_view to_string(CacheHint h);
std::string_view to_string(L2Property p);
// Parse the names above; return false for an unknown name.
bool parse_address_space(std::string_view text, AddressSpace& out);
bool parse_access_kind(std::string_view text, AccessKind& out);
bool parse_cache_hint(std::string_view text, CacheHint& out);
bool parse_l2_property(std::string_view text, L2Property& out);

// What is known of a record's lane addresses, for consumers that would otherwise scan them (the coalescer): a source
// that knows it for free states it through add_lanes (the .mht decoder, from a record's base + stride form); otherwise
// it is unknown and the consumer looks (lane_layout).
enum LaneLayout : std::uint8_t {
  kLayoutUnknown = 0,
  kLayoutKnown = 1,    // the other bits say what holds
  kLayoutDense = 2,    // every lane's address is 0 to 32 bytes above the previous lane's
  kLayoutGapless = 4,  // every lane's address is `size` bytes above the previous lane's
  // The pool holds the record's first lane address and the stride between lanes (two entries), not every lane's
  // address: set by BlockTrace::add_strided in a block whose consumer asked for it (BlockTrace::compact_strided).
  kLayoutCompact = 8,
  // With kLayoutCompact: the record's 32 lanes are runs of 2^k lanes (k: the bits from kLayoutRunShift up, 1 to 4),
  // lane l at first + (l mod 2^k) x stride + (l / 2^k) x step, the pool holding first, stride and step (LaneRuns).
  kLayoutRuns = 16,
};
constexpr unsigned kLayoutRunShift = 5;
// The bits that say how the pool holds a record's lanes, not what the lanes are.
constexpr std::uint8_t kLayoutFormBits = kLayoutCompact | kLayoutRuns | (7U << kLayoutRunShift);

// A warp's 32 lane addresses as runs of `length` lanes (2, 4, 8 or 16) `stride` apart, each run `step` after the one
// before: a two-dimensional thread block's warp reading a row of each of its thread rows (a 16 x 16 block's warp holds
// two rows of 16 threads: matmul's A[row][k], stride 0, and B[k][col], stride 4), which one stride does not describe.
struct LaneRuns {
  std::uint64_t first = 0, stride = 0, step = 0;
  unsigned length = 0;
};
// The runs `lanes` (32 addresses) form, the longest run length that fits; none if no length does or they are one
// stride (add_strided's form).
inline std::optional<LaneRuns> find_lane_runs(std::span<const std::uint64_t> lanes) {
  if (lanes.size() != kWarpSize) return std::nullopt;
  const std::uint64_t first = lanes[0], stride = lanes[1] - lanes[0];
  // Runs of 4 lanes and more need lanes 0-2 one stride apart (a gather's lanes fail here, at once).
  for (unsigned length = lanes[2] - lanes[1] == stride ? 16 : 2; length >= 2; length /= 2) {
    const std::uint64_t step = lanes[length] - first;
    if (step == length * stride) continue;  // one stride up to lane `length`: longer runs or none
    // Run by run (no division a lane: a description's matmul_naive spent a sixth of its host instructions here and
    // in lane_layout, which runs_layout() replaces), every lane compared without a branch (stopping at the first lane
    // off cost that matmul 285 host instructions a record), once the last lane is where the runs put it.
    if (lanes[kWarpSize - 1] != first + (kWarpSize / length - 1) * step + (length - 1) * stride) continue;
    std::uint64_t off = 0;
    std::uint64_t start = first;
    for (unsigned l = 0; l < kWarpSize; l += length, start += step) {
      std::uint64_t a = start;
      for (unsigned i = 0; i < length; ++i, a += stride) off |= lanes[l + i] ^ a;
    }
    if (off == 0) return LaneRuns{first, stride, step, length};
  }
  return std::nullopt;
}
// lane_layout() of the 32 lanes of `runs` (accesses of `size` bytes), from the two distances between neighbouring
// lanes: `stride` within a run, and from a run's last lane to the next run's first.
inline std::uint8_t runs_layout(const LaneRuns& runs, unsigned size) {
  const std::uint64_t across = runs.step - (runs.length - 1) * runs.stride;
  return static_cast<std::uint8_t>(kLayoutKnown | (runs.stride <= 32 && across <= 32 ? kLayoutDense : 0) |
                                   (runs.stride == size && across == size ? kLayoutGapless : 0));
}
// Writes the 32 lanes of `runs` into out.
inline void fill_runs(std::span<std::uint64_t> out, const LaneRuns& runs) {
  // Run by run (a length is a power of two: no division a lane, which cost matmul_naive's simulation 7% of its host
  // instructions).
  std::uint64_t start = runs.first;
  for (std::size_t l = 0; l < out.size(); start += runs.step)
    for (std::uint64_t a = start, end = std::min<std::size_t>(l + runs.length, out.size()); l < end;
         ++l, a += runs.stride)
      out[l] = a;
}

// Works out the layout of `addresses` (the lanes of a record of `size`-byte accesses).
inline std::uint8_t lane_layout(std::span<const std::uint64_t> addresses, unsigned size) {
  std::uint64_t far_apart = 0, gap = 0;
  for (std::size_t i = 1; i < addresses.size(); ++i) {
    const std::uint64_t d = addresses[i] - addresses[i - 1];
    far_apart |= static_cast<std::uint64_t>(d > 32);
    gap |= d ^ size;
  }
  return static_cast<std::uint8_t>(kLayoutKnown | (far_apart == 0 ? kLayoutDense : 0) |
                                   (gap == 0 ? kLayoutGapless : 0));
}

// One warp-level record. Addresses: one per active lane, in lane order, stored in the owning block's pool.
// Address meaning by space: global/texture: virtual address; shared: byte offset in the block's shared window;
// local: byte offset in the thread's local window; constant: byte offset in constant bank 0.
struct WarpRecord {
  std::uint32_t pc = 0;             // byte offset of the instruction in its function
  std::uint32_t active_mask = 0;    // bit i set: lane i takes part; 0: issued with every lane predicated off
  std::uint32_t address_index = 0;  // first of popcount(active_mask) addresses in BlockTrace::addresses
  std::uint32_t work = 0;           // non-memory warp instructions issued since the warp's previous record
  std::uint32_t bulk_bytes = 0;     // bulk_copy only: bytes moved
  RecordKind record = RecordKind::memory;
  AddressSpace space = AddressSpace::global;
  AccessKind kind = AccessKind::load;
  CacheHint hint = CacheHint::none;
  std::uint8_t size = 4;                 // bytes per lane: 1, 2, 4, 8 or 16
  std::uint8_t layout = kLayoutUnknown;  // LaneLayout bits: set by BlockTrace::add_lanes / add_strided only

  [[nodiscard]] int active_lanes() const { return std::popcount(active_mask); }
  [[nodiscard]] bool is_memory() const { return record == RecordKind::memory; }
};

// An allocator whose resize() leaves new elements uninitialized: the address pool grows by a record's lanes and the
// decoder writes them at once, so zeroing them first would write each address twice (a batch of blocks holds up to
// 32 MiB of addresses, more than the host's caches: the zeroing alone doubled the pool's memory traffic).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {  // NOLINT(readability-identifier-naming): the allocator protocol names it
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  explicit UninitializedAllocator(const UninitializedAllocator<U>& /*other*/) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialization: nothing written for an integer
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// Room for one record's lane addresses, where a compact record's are written out (BlockTrace::lane_addresses).
using LaneBuffer = std::array<std::uint64_t, kWarpSize>;

// Writes first, first + stride, ... into out (wrapping modulo 2^64, as a negative stride does). Two lanes a step, one
// vector of two 64-bit sums (SSE2, in every x86-64; the compiler did not vectorize the scalar loop).
inline void fill_strided(std::span<std::uint64_t> out, std::uint64_t first, std::uint64_t stride) {
  std::size_t i = 0;
#if defined(__SSE2__)
  __m128i pair = _mm_set_epi64x(std::bit_cast<long long>(first + stride), std::bit_cast<long long>(first));
  const __m128i step = _mm_set1_epi64x(std::bit_cast<long long>(2 * stride));
  for (; i + 1 < out.size(); i += 2, pair = _mm_add_epi64(pair, step))
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data() + i), pair);
#endif
  for (; i < out.size(); ++i) out[i] = first + i * stride;
}

struct BlockTrace;

// The records a block handed out in parts has left (BlockTrace::part_records), given warp by warp, a part at a time.
class BlockRest {
 public:
  virtual ~BlockRest() = default;
  BlockRest() = default;
  BlockRest(const BlockRest&) = delete;
  BlockRest& operator=(const BlockRest&) = delete;
  // Fills `out` (emptied, one warp opened; its compact_strided kept) with warp `w`'s next records, part_records or a
  // few more; false, with `out` empty, once the warp has none left. Warps are independent: any thread may take any
  // warp's next part while other threads take other warps' (of this block or another), one at a time a warp. Throws
  // what the source throws for a bad record (InputError for a description's).
  virtual bool next(std::size_t w, BlockTrace& out) = 0;
};

// One thread block: its warps' records, warp by warp. Reused between blocks so decoding allocates nothing in steady
// state.
struct BlockTrace {
  Dim3 index;                             // blockIdx
  std::vector<WarpRecord> records;        // all warps, warp 0's records first
  std::vector<std::uint32_t> warp_begin;  // records of warp w: [warp_begin[w], warp_begin[w+1])
  std::vector<std::uint64_t, UninitializedAllocator<std::uint64_t>> addresses;  // address pool
  std::size_t lanes = 0;  // active lanes of the memory records: addresses.size() unless some are compact
  // Set by a consumer that reads every record through lane_addresses(r, buffer) (the simulator): add_strided() then
  // keeps a strided record as its first address and stride (kLayoutCompact), two pool entries instead of 32. A
  // streaming trace's blocks then take an eighth of the memory, which the decoder would write and the simulator
  // read back from beyond the host's caches (a batch of blocks holds millions of lanes). clear() keeps it.
  bool compact_strided = false;
  // Set by a consumer that takes a block's records in parts (the simulator): a source may then give each warp its
  // first part_records records or a few more, and `rest` the others a part at a time (BlockRest), so that a wave of
  // long blocks is not held whole (a description's runner does; 0: whole blocks). clear() keeps it.
  std::size_t part_records = 0;
  std::shared_ptr<BlockRest> rest;  // none: every warp's records are here

  void clear() {
    records.clear();
    warp_begin.assign(1, 0);
    addresses.clear();
    lanes = 0;
    rest.reset();
  }
  // For a buffer refilled with parts of a warp's records (cleared, so keeping its capacity): the address pool given
  // back down to its size where growing by doubling left more than a quarter spare, so a buffer holds about what its
  // parts need. (A description's matmul_naive at n=512 peaked at 502 MB with the slack, 427 MB so: 16,896 part
  // buffers.)
  void trim_pool() {
    if (addresses.capacity() > addresses.size() + addresses.size() / 4) addresses.shrink_to_fit();
  }
  [[nodiscard]] std::size_t warp_count() const { return warp_begin.empty() ? 0 : warp_begin.size() - 1; }
  [[nodiscard]] std::span<const WarpRecord> warp(std::size_t w) const {
    return {records.data() + warp_begin[w], records.data() + warp_begin[w + 1]};
  }
  // The record's lane addresses, in a block with no compact record (compact_strided unset when it was filled);
  // std::logic_error for a compact one, whose lanes only lane_addresses(r, buffer) gives.
  [[nodiscard]] std::span<const std::uint64_t> lane_addresses(const WarpRecord& r) const {
    if (!r.is_memory()) return {};  // barriers carry a mask but no addresses
    if ((r.layout & kLayoutCompact) != 0)
      throw std::logic_error("BlockTrace::lane_addresses: a compact record needs a LaneBuffer");
    return {addresses.data() + r.address_index, static_cast<std::size_t>(r.active_lanes())};
  }
  // The record's lane addresses in any block: a compact record's are written into `buffer`.
  [[nodiscard]] std::span<const std::uint64_t> lane_addresses(const WarpRecord& r, LaneBuffer& buffer) const {
    if (!r.is_memory()) return {};
    if ((r.layout & kLayoutCompact) == 0)
      return {addresses.data() + r.address_index, static_cast<std::size_t>(r.active_lanes())};
    const std::span<std::uint64_t> out(buffer.data(), static_cast<std::size_t>(r.active_lanes()));
    if ((r.layout & kLayoutRuns) != 0) {
      fill_runs(out, runs(r));
    } else {
      fill_strided(out, addresses[r.address_index], addresses[r.address_index + 1]);
    }
    return out;
  }
  // The first and last lane's addresses of a memory record with an active lane, compact or not.
  [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> first_last(const WarpRecord& r) const {
    const std::uint64_t first = addresses[r.address_index];
    if ((r.layout & kLayoutCompact) == 0) return {first, addresses[r.address_index + r.active_lanes() - 1]};
    if ((r.layout & kLayoutRuns) != 0) {
      const LaneRuns x = runs(r);
      return {first, first + (x.length - 1) * x.stride + (kWarpSize / x.length - 1) * x.step};
    }
    return {first, first + static_cast<std::uint64_t>(r.active_lanes() - 1) * addresses[r.address_index + 1]};
  }
  // The address pool entries a record holds from its address_index on: none for a barrier or a record with no lane
  // on, three in runs form, two compact, else one a lane.
  [[nodiscard]] static std::size_t pool_entries(const WarpRecord& r) {
    if (!r.is_memory()) return 0;
    if ((r.layout & kLayoutCompact) != 0) return (r.layout & kLayoutRuns) != 0 ? 3 : 2;
    return static_cast<std::size_t>(r.active_lanes());
  }
  // A record in runs form (kLayoutRuns).
  [[nodiscard]] LaneRuns runs(const WarpRecord& r) const {
    return {addresses[r.address_index], addresses[r.address_index + 1], addresses[r.address_index + 2],
            1U << (r.layout >> kLayoutRunShift)};
  }
  // Appending: begin_warp() opens a warp; add() appends to the warp opened last.
  void begin_warp() { warp_begin.push_back(static_cast<std::uint32_t>(records.size())); }
  void add(WarpRecord r, std::span<const std::uint64_t> lane_addrs) {
    r.address_index = static_cast<std::uint32_t>(addresses.size());
    r.layout = kLayoutUnknown;  // a copied record's layout may be of other addresses
    addresses.insert(addresses.end(), lane_addrs.begin(), lane_addrs.end());
    lanes += lane_addrs.size();
    records.push_back(r);
    warp_begin.back() = static_cast<std::uint32_t>(records.size());
  }
  // As add(), for a caller that writes the `n` addresses into the returned pool slots itself; `layout` is what it knows
  // of them (kLayoutUnknown: nothing; never kLayoutCompact).
  std::span<std::uint64_t> add_lanes(WarpRecord r, std::size_t n, std::uint8_t layout = kLayoutUnknown) {
    records.push_back(r);
    return lanes_of_last(n, layout);
  }
  // The *_of_last() forms do what add_lanes(), add_strided() and add_runs() do, for the record appended last
  // (records.back()), which the caller wrote in place (every field but address_index and layout). A record built on
  // the stack and copied in at once is read back before its field-by-field stores have left the store buffer: the
  // .mht decoder's strided records took that stall (memhier_bench_sim's copy 7% slower, on fewer host instructions).
  std::span<std::uint64_t> lanes_of_last(std::size_t n, std::uint8_t layout = kLayoutUnknown) {
    WarpRecord& r = records.back();
    r.address_index = static_cast<std::uint32_t>(addresses.size());
    r.layout = static_cast<std::uint8_t>(layout & ~kLayoutCompact);
    addresses.resize(addresses.size() + n);
    lanes += n;
    warp_begin.back() = static_cast<std::uint32_t>(records.size());
    return {addresses.data() + r.address_index, n};
  }
  // As add() for `n` lanes at first, first + stride, ...: compact where compact_strided is set (with n > 1), else
  // written out. `layout` as for add_lanes().
  void add_strided(WarpRecord r, std::size_t n, std::uint64_t first, std::uint64_t stride,
                   std::uint8_t layout = kLayoutUnknown) {
    records.push_back(r);
    strided_of_last(n, first, stride, layout);
  }
  [[gnu::always_inline]] void strided_of_last(std::size_t n, std::uint64_t first, std::uint64_t stride,
                                              std::uint8_t layout = kLayoutUnknown) {
    if (!compact_strided || n < 2) {
      fill_strided(lanes_of_last(n, layout), first, stride);
      return;
    }
    WarpRecord& r = records.back();
    r.address_index = static_cast<std::uint32_t>(addresses.size());
    r.layout = static_cast<std::uint8_t>(layout | kLayoutCompact);
    addresses.push_back(first);
    addresses.push_back(stride);
    lanes += n;
    warp_begin.back() = static_cast<std::uint32_t>(records.size());
  }
  // As add() for the 32 lanes of `runs`, kept compact (three pool entries) as compact_last_runs() keeps them; `layout`
  // is the lanes' (lane_layout). Where compact_strided is set only.
  void add_runs(WarpRecord r, const LaneRuns& runs, std::uint8_t layout) {
    records.push_back(r);
    runs_of_last(runs, layout);
  }
  void runs_of_last(const LaneRuns& runs, std::uint8_t layout) {
    WarpRecord& r = records.back();
    r.address_index = static_cast<std::uint32_t>(addresses.size());
    r.layout = static_cast<std::uint8_t>(layout | kLayoutCompact | kLayoutRuns |
                                         static_cast<unsigned>(std::countr_zero(runs.length)) << kLayoutRunShift);
    addresses.push_back(runs.first);
    addresses.push_back(runs.stride);
    addresses.push_back(runs.step);
    lanes += kWarpSize;
    warp_begin.back() = static_cast<std::uint32_t>(records.size());
  }
  // Where compact_strided is set: the last record added, if its 32 lanes form runs (find_lane_runs), keeps them as
  // three pool entries instead of 32 (a 16 x 16 block's accesses, which one stride does not describe: matmul_naive at
  // n=1024 took 10.9 GB with them written out, 2.09 GB so). Its layout bits are worked out from the lanes. Out of line:
  // inlined twice into the .mht decoder, it cost a copy kernel's decoding, which never calls it, 0.3% more.
  [[gnu::noinline]] void compact_last_runs() {
    if (!compact_strided || records.empty()) return;
    WarpRecord& r = records.back();
    if (!r.is_memory() || (r.layout & kLayoutCompact) != 0 || r.active_mask != 0xFFFFFFFFU) return;
    const std::span<const std::uint64_t> all(addresses.data() + r.address_index, kWarpSize);
    const std::optional<LaneRuns> x = find_lane_runs(all);
    if (!x) return;
    const std::uint8_t layout = runs_layout(*x, r.size);
    r.layout = static_cast<std::uint8_t>(layout | kLayoutCompact | kLayoutRuns |
                                         static_cast<unsigned>(std::countr_zero(x->length)) << kLayoutRunShift);
    addresses.resize(r.address_index + 3);
    addresses[r.address_index + 1] = x->stride;
    addresses[r.address_index + 2] = x->step;
  }
};

// cudaAccessPolicyWindow, in effect for one launch.
struct AccessPolicyWindow {
  std::uint64_t base = 0;
  std::uint64_t bytes = 0;
  double hit_ratio = 1.0;
  L2Property hit_prop = L2Property::persisting;
  L2Property miss_prop = L2Property::streaming;
  friend bool operator==(const AccessPolicyWindow&, const AccessPolicyWindow&) = default;
};

// Everything known about one launch apart from its records.
struct KernelLaunch {
  std::string name;
  Dim3 grid, block, cluster;
  std::uint32_t registers_per_thread = 0;  // 0: unknown
  std::uint32_t static_shared_bytes = 0;
  std::uint32_t dynamic_shared_bytes = 0;
  std::uint32_t local_bytes_per_thread = 0;  // 0: unknown or none
  std::string captured_arch;                 // architecture name the trace came from; empty for descriptions
  std::vector<AccessPolicyWindow> windows;
  std::uint64_t persisting_set_aside_bytes = 0;  // cudaLimitPersistingL2CacheSize in effect
  bool reset_persisting = false;                 // cudaCtxResetPersistingL2Cache before this launch
  std::string source;  // where it came from, for messages: the file read (description, .mht, Accel-Sim) or generator
  friend bool operator==(const KernelLaunch&, const KernelLaunch&) = default;

  [[nodiscard]] std::uint32_t warps_per_block() const {
    return static_cast<std::uint32_t>((block.count() + kWarpSize - 1) / kWarpSize);
  }
};

// The stream every trace source produces. Usage: while (next_kernel(k)) while (next_block(b)) ...
// Blocks arrive in launch order (blockIdx linearised, x fastest) for descriptions and captured traces; imported traces
// keep the order of their file. A source may omit blocks (sampling).
class TraceSource {
 public:
  virtual ~TraceSource() = default;
  // Advances to the next launch; false when there are no more. Skips the rest of the current launch.
  virtual bool next_kernel(KernelLaunch& launch) = 0;
  // Fills `block` with the next block of the current launch; false when the launch has no more blocks. Where
  // block.part_records is set, a source may give a long block in parts (BlockTrace::rest; descriptions and .mht
  // traces do); else whole.
  virtual bool next_block(BlockTrace& block) = 0;
  // Fills out[0, k) with the next k blocks of the current launch, those next_block() would give in its order, and
  // returns k: out.size(), fewer only where the launch ends. A source may use up to `threads` host threads to
  // decode them (this one calls next_block()).
  virtual std::size_t next_blocks(std::span<BlockTrace> out, int threads);
};

// Totals over a stream, as `trace info` prints them.
struct TraceCounts {
  std::uint64_t blocks = 0;
  std::uint64_t warps = 0;
  std::uint64_t memory_instructions = 0;  // warp-level memory records
  std::uint64_t barriers = 0;
  std::uint64_t lane_accesses = 0;  // active lanes over memory records
  std::uint64_t work = 0;
  std::array<std::uint64_t, kAddressSpaceCount> by_space{};
  std::array<std::uint64_t, kAccessKindCount> by_kind{};

  void add(const BlockTrace& b);
  TraceCounts& operator+=(const TraceCounts& o);
};

}  // namespace memhier
