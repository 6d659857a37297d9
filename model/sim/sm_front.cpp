#include "sm_front.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <tuple>

#include "../util/sort_unique.h"
#include "memhier/error.h"

namespace memhier {

void access_past_top(std::uint64_t first, std::uint64_t last, std::uint64_t bytes) {
  const std::string what = first == last
                               ? fmt::format("an access of {} bytes at {:#x} reaches", bytes, first)
                               : fmt::format("accesses of {} bytes from {:#x} to {:#x} reach", bytes, first, last);
  throw InputError({}, "",
                   what +
                       " the last 128 bytes of the 64-bit address space or past them, which the simulator leaves out "
                       "(a damaged trace: no GPU address comes near them)");
}

namespace {

// Local offsets are refused from 4 GiB, the window Accel-Sim's tracer gives a thread's local memory (its header's
// "local mem base_addr"): far past it, the interleaved layout (SmFront::issue) wraps past 2^64 and aliases other
// memory. A trace whose local accesses are not offsets in that window (a global address, say) gets an error.
constexpr std::uint64_t kLocalOffsetLimit = std::uint64_t{1} << 32U;

[[noreturn]] void local_offset_too_large(std::uint64_t offset) {
  throw InputError({}, "",
                   fmt::format("a local-memory offset of {:#x}: past the 4 GiB a thread's local window spans (local "
                               "accesses are offsets in that window)",
                               offset));
}

}  // namespace

SmFront::SmFront(const SmFrontSpec& spec, const PolicyMap& policy, RequestLists& lists, int sm, SectoredCache& l1)
    : m_lists(lists),
      m_spec(spec),
      m_policy(policy),
      m_l1(l1),
      m_constant(spec.constant_sets, spec.constant_ways),
      m_sm(sm),
      m_l2_sets(spec.l2_sets),
      m_slices(static_cast<std::uint64_t>(spec.slices)),
      m_partition(static_cast<std::uint8_t>(sm % spec.partitions)),
      m_period(std::max<std::uint64_t>(kLineBytes, std::uint64_t{spec.banks} * spec.bank_bytes)) {}

void SmFront::begin_round() {
  m_out = &m_lists.issued(static_cast<std::size_t>(m_sm));
  m_requests = m_lanes_issued = m_last_cycle = 0;
}

std::uint32_t SmFront::in_flight(std::uint64_t line, std::uint32_t sectors) {
  if (m_in_flight.empty()) m_in_flight.resize(kInFlight);
  InFlight& e = m_in_flight[static_cast<std::size_t>((line * 0x9E3779B97F4A7C15ULL) >> 56U)];  // 256 entries
  const bool live = e.sectors != 0 && e.line == line && m_cycle < e.cycle + m_spec.l2_latency;
  const std::uint32_t flying = live ? e.sectors : 0U;
  const std::uint32_t fresh = sectors & ~flying;
  if (fresh != 0) e = {line, m_cycle, flying | fresh};
  return sectors & flying;
}

// Inlined into its callers, a call a line sent to L2 (cachegrind, the benchmark gather: 1.7% of the host instructions
// went to the call).
[[gnu::always_inline]] inline void SmFront::send(std::uint64_t line, std::uint32_t sectors, L2Op op,
                                                 std::uint32_t words) {
  const L2Property p = m_policy.empty() ? L2Property::normal : m_policy.property(line * kLineBytes);
  // The hardware's hash over slices is undocumented; place_in_sets spreads consecutive lines over all slices and sets.
  const std::uint64_t place = place_in_sets(line, m_l2_sets);  // sets of all slices: < 2^32
  std::uint64_t slice_index = 0;
  const std::uint64_t set = m_slices.divide(place, slice_index);
  const auto slice = static_cast<std::size_t>(slice_index);
  ++m_requests;
  L2Request& r = m_out->emplace_back();
  r.cycle = m_cycle & kRequestCycleMask;  // a later cycle fails the launch (simulate() checks last_cycle())
  r.group = m_spec.slice_group[slice];
  r.line = line;
  r.set = static_cast<std::uint32_t>(set);
  r.sectors = static_cast<std::uint8_t>(sectors);
  r.home = m_spec.slice_home[slice];
  r.from = m_partition;
  r.op = op;
  r.property = p;
  r.words = words;
  // A read follows the line its instruction sent before; a write the line this SM wrote before, in whichever
  // instruction (a stream's stores, one line a warp, come warp after warp). No line is in chunk ~0.
  std::uint64_t& before = op == L2Op::write ? m_written_chunk : m_sent_chunk;
  const std::uint64_t chunk = line >> m_spec.dram_row_line_shift;
  r.row_follows = before == chunk;
  r.paired = op == L2Op::read && m_paired ? 1 : 0;
  before = chunk;
}

template <typename F>
void SmFront::for_lines(F&& f) {
  for (int i = 0; i < m_sectors.line_count; ++i) {
    const SectorSet::Line& l = m_sectors.lines[static_cast<std::size_t>(i)];
    f(l.line, l.mask);
  }
}

IssueCost SmFront::issue(const BlockTrace& b, const WarpRecord& r, std::uint64_t cycle, std::uint64_t thread_base) {
  SimCounters& c = counters;
  m_cycle = cycle;
  m_sent_chunk = ~std::uint64_t{0};
  m_last_cycle = std::max(m_last_cycle, cycle);
  ++c.warp_instructions;
  c.work += r.work;
  if (!r.is_memory()) {
    ++c.barriers;
    return {};
  }
  m_lanes_issued += static_cast<std::uint64_t>(std::popcount(r.active_mask));
  // A compact record of dense lanes (a stream's) to global memory: coalescing and a gapless store's words need only its
  // first and last lanes, so the lanes are written out only if the request turns out to span several lines
  // (lanes()), not for every record (writing 32 addresses cost a copy 3% of its host instructions).
  constexpr std::uint8_t kCompactDense = kLayoutCompact | kLayoutKnown | kLayoutDense;
  m_compact = nullptr;
  m_block = &b;
  m_paired = m_spec.tpc_merge &&
             (std::uint64_t{b.index.z} * m_spec.grid_y + b.index.y) * m_spec.grid_x + b.index.x < m_spec.paired_blocks;
  // A compact shared record of bank words (a tile's column, a broadcast): its lanes never written out.
  if (r.space == AddressSpace::shared)
    if (const std::optional<BankResult> w = compact_banks(r)) return shared_access(r, *w);
  // A whole warp's local access of one offset (a spill slot, a local array at a uniform index): thread t's word k
  // lies at (k x threads + t) x 4 of the local window, so its lanes are 4 bytes apart from the first, which is all
  // the mapping needs (lane by lane, with the offsets written out first, it cost register_spill a fifth of its host
  // instructions). The layout is lane_layout()'s of such lanes.
  if (r.space == AddressSpace::local && r.active_mask == 0xFFFFFFFFU &&
      (r.layout & (kLayoutCompact | kLayoutRuns)) == kLayoutCompact && b.addresses[r.address_index + 1] == 0) {
    const std::uint64_t offset = b.addresses[r.address_index];
    if (offset >= kLocalOffsetLimit) local_offset_too_large(offset);
    const std::uint64_t first =
        m_spec.local_base + ((offset / 4) * m_spec.local_threads + thread_base) * 4 + offset % 4;
    for (std::size_t i = 0; i < kWarpSize; ++i) m_mapped[i] = first + 4 * i;
    const auto layout = static_cast<std::uint8_t>(kLayoutKnown | kLayoutDense | (r.size == 4 ? kLayoutGapless : 0));
    return global_access(r, {m_mapped.data(), kWarpSize}, layout);
  }
  std::span<const std::uint64_t> a;
  m_shape = nullptr;
  const bool global =
      (r.space == AddressSpace::global || r.space == AddressSpace::texture) && r.kind != AccessKind::bulk_copy;
  constexpr std::uint8_t kRunsForm = kLayoutCompact | kLayoutRuns;
  if ((r.layout & kRunsForm) == kRunsForm && (global || r.space == AddressSpace::shared))
    if (RunsShape* shape = runs_shape(b, r)) {
      if (r.space == AddressSpace::shared) return shared_access(r, shape_banks(*shape, b, r));
      m_shape = shape;
    }
  if (global && ((r.layout & kCompactDense) == kCompactDense || m_shape != nullptr)) {
    const auto [first, last] = b.first_last(r);
    m_ends = {first, last};
    a = {m_ends.data(), m_ends.size()};
    m_compact = &b;
  } else {
    a = b.lane_addresses(r, m_buffer);
  }
  if (a.empty()) {
    // Issued with every lane predicated off (nvcc if-converts short branches): ncu's shared-memory instruction counts
    // (smsp__inst_executed_op_shared_ld/st) include it (H100: reduction_shared's unrolled halving steps, every warp
    // 16 LDS and 9 STS a block); it makes no request in l1tex, no wavefront and no sector.
    if (r.space == AddressSpace::shared && r.kind == AccessKind::load) ++c.shared_ld_requests;
    if (r.space == AddressSpace::shared && r.kind == AccessKind::store) ++c.shared_st_requests;
    if (r.space == AddressSpace::shared && r.kind == AccessKind::async_copy) predicated_loads_of_async_copy();
    return {};
  }
  switch (r.space) {
    case AddressSpace::shared:
      return shared_access(r, banks(r, a));
    case AddressSpace::constant: {
      std::copy(a.begin(), a.end(), m_mapped.begin());
      const auto distinct = static_cast<std::uint64_t>(sort_unique(m_mapped.data(), a.size()));
      ++c.constant_requests;
      c.constant_serialized += distinct;
      c.constant_broadcasts += distinct == 1 ? 1 : 0;
      if (m_spec.constant_ways != 0)
        for (std::size_t i = 0; i < distinct; ++i)
          c.constant_misses += m_constant.access(m_mapped[i] >> m_spec.constant_line_shift) ? 0 : 1;
      return {static_cast<std::uint32_t>(distinct), m_spec.constant_latency};
    }
    case AddressSpace::local: {
      // Word k of thread t lives at base + (k * threads + t) * 4: the same offset across a warp is contiguous.
      std::size_t i = 0;
      for (std::uint32_t m = r.active_mask; m != 0; m &= m - 1, ++i) {
        const std::uint64_t t = thread_base + static_cast<std::uint64_t>(std::countr_zero(m));
        if (a[i] >= kLocalOffsetLimit) local_offset_too_large(a[i]);
        m_mapped[i] = m_spec.local_base + ((a[i] / 4) * m_spec.local_threads + t) * 4 + a[i] % 4;
      }
      return global_access(r, {m_mapped.data(), a.size()}, kLayoutUnknown);  // the record's layout is of offsets
    }
    case AddressSpace::global:
    case AddressSpace::texture:
      return global_access(r, a, r.layout);
  }
  return {};
}

SmFront::RunsShape* SmFront::runs_shape(const BlockTrace& b, const WarpRecord& r) {
  const LaneRuns x = b.runs(r);
  constexpr std::uint64_t kFar = std::uint64_t{1} << 32U;
  if (x.first >= (std::uint64_t{1} << 62U) || x.stride >= kFar || x.step >= kFar) return nullptr;
  if (m_shapes.empty()) m_shapes.resize(128);
  const auto offset = static_cast<std::uint32_t>(x.first & (m_period - 1));
  const std::uint64_t h = (x.stride * 0x9E3779B97F4A7C15ULL) ^ (x.step * 0xC2B2AE3D27D4EB4FULL) ^
                          ((offset | x.length << 10U | std::uint64_t{r.size} << 16U) * 0x165667B19E3779F9ULL);
  RunsShape& s = m_shapes[static_cast<std::size_t>(h >> 57U)];  // 128 entries
  if (s.length != x.length || s.stride != x.stride || s.step != x.step || s.offset != offset || s.size != r.size) {
    s = RunsShape{};
    s.stride = x.stride;
    s.step = x.step;
    s.offset = offset;
    s.length = static_cast<std::uint8_t>(x.length);
    s.size = r.size;
  }
  return &s;
}

const BankResult& SmFront::shape_banks(RunsShape& s, const BlockTrace& b, const WarpRecord& r) {
  if (!s.banks_known) {
    s.banks = banks(r, b.lane_addresses(r, m_buffer));
    s.banks_known = true;
  }
  return s.banks;
}

void SmFront::coalesce_runs(const WarpRecord& r, std::span<const std::uint64_t> a, std::uint8_t layout) {
  RunsShape& s = *m_shape;
  const std::uint64_t base = (a.front() - s.offset) / kLineBytes;  // the period's first line
  if (s.line_count >= 0) {
    m_sectors.line_count = static_cast<int>(static_cast<std::uint8_t>(s.line_count));  // 0 to 64 here
    m_sectors.count = s.sectors;
    for (std::size_t i = 0; i < static_cast<std::size_t>(s.line_count); ++i)
      m_sectors.lines[i] = {base + s.line[i], s.mask[i]};
    return;
  }
  coalesce(lanes(r, a), r.size, layout, m_sectors);
  if (s.line_count == -2) return;
  if (static_cast<std::size_t>(m_sectors.line_count) > s.line.size()) {
    s.line_count = -2;
    return;
  }
  s.line_count = static_cast<std::int8_t>(m_sectors.line_count);
  s.sectors = static_cast<std::uint8_t>(m_sectors.count);
  for (std::size_t i = 0; i < static_cast<std::size_t>(s.line_count); ++i) {
    s.line[i] = static_cast<std::uint32_t>(m_sectors.lines[i].line - base);
    s.mask[i] = static_cast<std::uint8_t>(m_sectors.lines[i].mask);
  }
}

std::span<const std::uint64_t> SmFront::lanes(const WarpRecord& r, std::span<const std::uint64_t> a) {
  return m_compact == nullptr ? a : m_compact->lane_addresses(r, m_buffer);
}

// nvcc issues each cp.async (LDGSTS) after shared_memory.async_copy_predicated_loads never-executed shared loads
// (`@!PT LDS RZ, [RZ]`, three on sm_90 with CUDA 13.0); ncu counts them as executed shared-load instructions.
void SmFront::predicated_loads_of_async_copy() {
  counters.shared_ld_requests += m_spec.async_copy_predicated_loads;
  counters.warp_instructions += m_spec.async_copy_predicated_loads;
}

std::uint32_t SmFront::data_passes(const WarpRecord& r, std::span<const std::uint64_t> a, std::uint32_t lines,
                                   std::uint32_t floor) {
  if (lines <= 1 || floor >= lines) return std::max(lines, floor);
  // (The lanes a bank count only saves work: they are never fewer than the wavefronts.)
  if (m_shape != nullptr) return std::max(floor, std::min(lines, shape_banks(*m_shape, *m_block, r).wavefronts));
  // A compact record's closed form first: it costs less than the lanes a bank count (a column's 32 lines: softmax_naive
  // spent 4% of its host instructions on the count).
  if ((r.layout & kLayoutCompact) != 0)
    if (const std::optional<BankResult> compact = compact_banks(r))
      return std::max(floor, std::min(lines, compact->wavefronts));
  if (m_compact == nullptr && r.size <= m_spec.bank_bytes && most_lanes_a_bank(a, r.size) <= floor) return floor;
  return std::max(floor, std::min(lines, banks(r, lanes(r, a)).wavefronts));
}

std::optional<BankResult> SmFront::compact_banks(const WarpRecord& r) const {
  if ((r.layout & kLayoutCompact) == 0 || (r.layout & kLayoutRuns) != 0) return std::nullopt;  // runs: lane by lane
  // A local record's pool holds offsets, whose stride is not its lanes' (thread t's word k lies at (k x threads + t)
  // x 4 of the local window): lane by lane.
  if (r.space == AddressSpace::local) return std::nullopt;
  const std::uint64_t first = m_block->addresses[r.address_index], stride = m_block->addresses[r.address_index + 1];
  return strided_wavefronts(first, stride, r.active_mask, r.size, m_spec.banks, m_spec.bank_bytes);
}

std::uint32_t SmFront::most_lanes_a_bank(std::span<const std::uint64_t> a, unsigned size) const {
  const auto shift = static_cast<unsigned>(std::countr_zero(m_spec.bank_bytes));
  const std::uint64_t mask = m_spec.banks - 1U;
  std::array<std::uint8_t, 64> per_bank{};  // banks: at most 64 (arch validation)
  std::uint32_t most = 0;
  for (const std::uint64_t x : a) {  // at most a bank word: a lane's bytes lie in one word or straddle into the next
    const std::uint64_t w = x >> shift, last = (x + size - 1) >> shift;
    most = std::max<std::uint32_t>(most, ++per_bank[static_cast<std::size_t>(w & mask)]);
    if (last != w) most = std::max<std::uint32_t>(most, ++per_bank[static_cast<std::size_t>(last & mask)]);
  }
  return most;
}

IssueCost SmFront::shared_access(const WarpRecord& r, const BankResult& w) {
  SimCounters& c = counters;
  // ncu's shared load and store counts (smsp__inst_executed_op_shared_ld/st, their wavefronts and conflicts) leave
  // out atomics and cp.async writes: on the H100, histogram_shared's 524288 ATOMS and async_copy_pipeline's LDGSTS
  // count in neither, so they have counters of their own.
  switch (r.kind) {
    case AccessKind::atomic:
    case AccessKind::reduction:
      ++c.shared_atom_requests;
      c.shared_atom_wavefronts += w.wavefronts;
      return {static_cast<std::uint32_t>(w.wavefronts), r.kind == AccessKind::atomic ? m_spec.shared_latency : 0};
    case AccessKind::async_copy:
      predicated_loads_of_async_copy();
      ++c.shared_async_requests;
      c.shared_async_wavefronts += w.wavefronts;
      return {static_cast<std::uint32_t>(w.wavefronts), 0};
    case AccessKind::store:
      ++c.shared_st_requests;
      c.shared_st_wavefronts += w.wavefronts;
      c.shared_st_bank_conflicts += w.conflicts();
      return {static_cast<std::uint32_t>(w.wavefronts), 0};
    case AccessKind::load:
    case AccessKind::bulk_copy:
      break;
  }
  ++c.shared_ld_requests;
  c.shared_ld_wavefronts += w.wavefronts;
  c.shared_ld_bank_conflicts += w.conflicts();
  return {static_cast<std::uint32_t>(w.wavefronts), m_spec.shared_latency};
}

BankResult SmFront::banks(const WarpRecord& r, std::span<const std::uint64_t> a) {
  int n = 0;
  for (std::uint32_t m = r.active_mask; m != 0; m &= m - 1)
    m_lanes[static_cast<std::size_t>(n++)] = static_cast<std::uint8_t>(std::countr_zero(m));
  return shared_wavefronts({m_lanes.data(), a.size()}, a, r.size, m_spec.banks, m_spec.bank_bytes);
}

std::uint32_t SmFront::l1_line(std::uint64_t line, L2Property property) {
  return m_l1.access(line, property);  // write-through L1: its victims have nothing to write back
}

bool SmFront::strided_words(const WarpRecord& r) {
  // (A local record's pool holds offsets, not the addresses its lanes map to.)
  if ((r.layout & (kLayoutCompact | kLayoutRuns)) != kLayoutCompact || r.space == AddressSpace::local ||
      r.size % 4 != 0)
    return false;
  const std::uint64_t first = m_block->addresses[r.address_index], stride = m_block->addresses[r.address_index + 1];
  const std::uint32_t lane = (std::uint32_t{1} << (r.size / 4)) - 1;  // size <= 16
  const auto n = static_cast<std::size_t>(m_sectors.line_count);
  if (stride % kLineBytes == 0) {  // a column: each lane a line's same words
    const std::uint64_t offset = first % kLineBytes;
    if (offset % 4 != 0 || offset + r.size > kLineBytes) return false;
    std::fill_n(m_words.begin(), n, lane << (offset / 4));
    return true;
  }
  // Structures of a power of two bytes dividing a line, a field of each (whole words, within the structure): every
  // line holds the same fields, cut to the bytes from the first lane to the last.
  if (stride > kLineBytes || !std::has_single_bit(stride) || first % 4 != 0 || first % stride + r.size > stride)
    return false;
  std::uint32_t fields = 0;
  for (std::uint64_t at = first % stride; at < kLineBytes; at += stride) fields |= lane << (at / 4);
  const std::uint64_t end = first + static_cast<std::uint64_t>(r.active_lanes() - 1) * stride + r.size;
  const SectorSet::Line* lines = m_sectors.lines.data();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t start = lines[i].line * kLineBytes;
    const std::uint64_t lo = (std::max(first, start) - start) / 4, hi = (std::min(end, start + kLineBytes) - start) / 4;
    m_words[i] = fields & static_cast<std::uint32_t>(((std::uint64_t{1} << (hi - lo)) - 1) << lo);
  }
  return true;
}

// In line in global_access(), instead of a call a store (cachegrind, the benchmark copy: 0.65% fewer host
// instructions).
[[gnu::always_inline]] inline void SmFront::gapless_words(std::uint64_t first, std::uint64_t end) {
  const auto n = static_cast<std::size_t>(m_sectors.line_count);
  const SectorSet::Line* lines = m_sectors.lines.data();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t start = lines[i].line * kLineBytes;
    const std::uint64_t from = std::max(first, start), to = std::min(end, start + kLineBytes);
    const std::uint64_t lo = (from - start + 3) / 4, hi = to > from ? (to - start) / 4 : 0;
    m_words[i] = hi <= lo ? 0 : static_cast<std::uint32_t>(((std::uint64_t{1} << (hi - lo)) - 1) << lo);
  }
}

void SmFront::written_words(std::span<const std::uint64_t> a, unsigned size) {
  const auto n = static_cast<std::size_t>(m_sectors.line_count);
  const SectorSet::Line* lines = m_sectors.lines.data();
  // Lanes of whole words (4-aligned, a multiple of 4 bytes, within one line: a column's stores, a scatter of floats)
  // write exactly their words, whose bits are set directly (the byte masks below and the words found whole in them
  // cost transpose_naive's simulation 7% of its host instructions); a lane that is not sends the store the long way.
  if (size % 4 == 0) {
    std::fill_n(m_words.begin(), n, 0U);
    const std::uint32_t lane_words = (std::uint32_t{1} << (size / 4)) - 1;  // size <= 16
    std::size_t at_line = 0;
    bool whole = true;
    for (const std::uint64_t x : a) {
      if (x % 4 != 0 || x % kLineBytes + size > kLineBytes) {
        whole = false;
        break;
      }
      const std::uint64_t line = x / kLineBytes;
      if (lines[at_line].line > line) at_line = 0;
      while (lines[at_line].line < line) ++at_line;  // the coalescer listed every line a lane touches: it is found
      m_words[at_line] |= lane_words << (x % kLineBytes / 4);
    }
    if (whole) return;
  }
  // Else the bytes each lane writes, in one pass over the lanes: bit b of bytes[i][b / 64] is byte b of line i. A lane
  // (at most 16 bytes) covers part of one line or of two; the coalescer listed every line a lane touches.
  std::array<std::array<std::uint64_t, 2>, std::tuple_size_v<decltype(m_sectors.lines)>> bytes;
  for (std::size_t i = 0; i < n; ++i) bytes[i] = {0, 0};
  std::size_t at_line = 0;  // the last lane's line: lanes mostly ascend, so the next is here or a little past
  for (const std::uint64_t x : a) {
    if (x % 64 + size <= 64) {  // within one 64-byte half of one line (aligned accesses always are)
      const std::uint64_t line = x / kLineBytes;
      if (lines[at_line].line > line) at_line = 0;
      while (lines[at_line].line < line) ++at_line;
      bytes[at_line][x % kLineBytes / 64] |= ((std::uint64_t{1} << size) - 1) << (x % 64);  // size <= 16
      continue;
    }
    for (std::uint64_t at = x; at < x + size;) {
      const std::uint64_t line = at / kLineBytes, stop = std::min(x + size, (line + 1) * kLineBytes);
      if (lines[at_line].line > line) at_line = 0;
      while (lines[at_line].line < line) ++at_line;  // the coalescer listed every line a lane touches: it is found
      const std::uint64_t lo = at - line * kLineBytes, hi = stop - line * kLineBytes;
      for (std::uint64_t w = lo >> 6U; w <= (hi - 1) >> 6U; ++w) {  // one 64-byte half of the line, or both
        const std::uint64_t from = std::max(lo, w * 64) - w * 64, to = std::min(hi, w * 64 + 64) - w * 64;
        bytes[at_line][w] |= (to - from == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (to - from)) - 1)) << from;
      }
      at = stop;
    }
  }
  // A word is written whole where its 4 bytes are: AND each nibble of a half's 64 byte bits into its low bit, then
  // gather those 16 bits (bit 4k to bit k) by shifts and masks.
  auto whole_words = [](std::uint64_t b) {
    std::uint64_t t = b & (b >> 1U);
    t &= t >> 2U;
    t &= 0x1111111111111111ULL;
    t = (t | (t >> 3U)) & 0x0303030303030303ULL;
    t = (t | (t >> 6U)) & 0x000F000F000F000FULL;
    t = (t | (t >> 12U)) & 0x000000FF000000FFULL;
    return static_cast<std::uint32_t>((t | (t >> 24U)) & 0xFFFFU);
  };
  for (std::size_t i = 0; i < n; ++i) m_words[i] = whole_words(bytes[i][0]) | whole_words(bytes[i][1]) << 16U;
}

IssueCost SmFront::global_access(const WarpRecord& r, std::span<const std::uint64_t> a, std::uint8_t layout) {
  SimCounters& c = counters;
  if (r.kind == AccessKind::bulk_copy) {  // the TMA engine reads through L2 into shared memory
    // The copy's other end is the block's shared memory: a larger one is a damaged trace (and would make millions of
    // requests a lane).
    if (r.bulk_bytes > m_spec.bulk_bytes_max)
      throw InputError({}, "",
                       fmt::format("a bulk copy of {} bytes: more than a block's shared memory ({} bytes)",
                                   r.bulk_bytes, m_spec.bulk_bytes_max));
    if (r.bulk_bytes == 0) return {};  // nothing moves
    std::uint32_t lines = 0;
    for (std::uint64_t base : a) {
      if (base > kAddressEnd - r.bulk_bytes) access_past_top(base, base, r.bulk_bytes);
      const std::uint64_t first = base >> 5U, last = (base + (r.bulk_bytes - 1)) >> 5U;  // sectors
      c.l1_bypass_sectors += last - first + 1;
      for (std::uint64_t line = first >> 2U; line <= last >> 2U; ++line) {
        const std::uint64_t from = std::max(first, line * 4), to = std::min(last, line * 4 + 3);
        const auto mask = static_cast<std::uint32_t>((0xFU << (from & 3U)) & (0xFU >> (3U - (to & 3U))));
        send(line, mask, L2Op::read);
        ++lines;
      }
    }
    return {lines, 0};
  }
  if ((layout & kLayoutKnown) == 0) layout = lane_layout(a, r.size);
  if (m_shape != nullptr) {
    coalesce_runs(r, a, layout);
  } else if ((layout & kLayoutDense) != 0 || (r.layout & (kLayoutCompact | kLayoutRuns)) != kLayoutCompact ||
             r.space == AddressSpace::local ||
             !coalesce_column(m_block->addresses[r.address_index], m_block->addresses[r.address_index + 1],
                              static_cast<std::size_t>(r.active_lanes()), r.size, m_sectors)) {
    coalesce(a, r.size, layout, m_sectors);
  }
  const auto sectors = static_cast<std::uint64_t>(m_sectors.count);
  const auto lines = static_cast<std::uint32_t>(m_sectors.line_count);
  // The data stage reads the L1's banks as shared memory's (data_passes()).
  const bool local = r.space == AddressSpace::local;
  switch (r.kind) {
    case AccessKind::store: {
      (local ? c.local_st_requests : c.global_st_requests) += 1;
      (local ? c.local_st_sectors : c.global_st_sectors) += sectors;
      const bool gapless = (layout & kLayoutGapless) != 0;
      if (gapless)  // the first and last lanes suffice
        gapless_words(a.front(), a.back() + r.size);
      else if (!strided_words(r))
        written_words(lanes(r, a), r.size);
      for (int i = 0; i < m_sectors.line_count; ++i) {
        const auto [line, mask] = m_sectors.lines[static_cast<std::size_t>(i)];
        const std::uint32_t words = m_words[static_cast<std::size_t>(i)];
        // Write-through with allocation (Volta and later; Accel-Sim's l1_write_policy microbenchmark): the line is
        // allocated (not for .cg, which caches in L2 only) or refreshed, and a sector becomes readable only where
        // every byte of it was written (a partly written sector is still fetched by a later load).
        if (m_spec.l1_enabled) {
          const L2Property property = r.hint == CacheHint::cs ? L2Property::streaming : L2Property::normal;
          const std::uint32_t slot = r.hint == CacheHint::cg ? m_l1.find(line) : l1_line(line, property);
          if (slot != SectoredCache::kNone) m_l1.valid(slot) |= full_sectors(words);
        }
        send(line, mask, L2Op::write, words);
      }
      const std::uint32_t p = lines <= 1 ? lines : data_passes(r, a, lines, 0);
      c.l1_wavefronts += p;
      return {p, 0};
    }
    case AccessKind::atomic:
    case AccessKind::reduction: {
      const bool atom = r.kind == AccessKind::atomic;
      (atom ? c.global_atom_requests : c.global_red_requests) += 1;
      (atom ? c.global_atom_sectors : c.global_red_sectors) += sectors;
      c.l1_bypass_sectors += sectors;
      for_lines([&](std::uint64_t line, std::uint32_t mask) { send(line, mask, atom ? L2Op::atom : L2Op::red); });
      c.l1_wavefronts += lines;
      return {lines, atom ? m_spec.l2_latency : 0};
    }
    case AccessKind::load:
    case AccessKind::async_copy:
    case AccessKind::bulk_copy:
      break;
  }
  (local ? c.local_ld_requests : c.global_ld_requests) += 1;
  (local ? c.local_ld_sectors : c.global_ld_sectors) += sectors;
  if (r.hint == CacheHint::cg || !m_spec.l1_enabled) {
    c.l1_bypass_sectors += sectors;
    // H100 (validate/results/h100-2026-11-26/probe, l2_fill): one warp reading a sector through ld.global.cg twice,
    // 0 or 250 cycles apart, reaches L2 once (100%, 94% of the second reads merged), 500 cycles apart mostly twice
    // (22% merged), 750 and more twice. Measured for .cg loads only: cp.async and loads of an L1 left without
    // capacity go to L2 as they come.
    const bool merge = r.kind == AccessKind::load && r.hint == CacheHint::cg;
    for_lines([&](std::uint64_t line, std::uint32_t mask) {
      if (merge) {
        const std::uint32_t merged = in_flight(line, mask);
        c.l2_merged_sectors += static_cast<std::uint64_t>(std::popcount(merged));
        mask &= ~merged;
        if (mask == 0) return;
      }
      send(line, mask, L2Op::read);
    });
    const std::uint32_t p = data_passes(r, a, lines, (lines + 1) / 2);  // every line comes from L2 (see below)
    c.l1_wavefronts += p;
    if (r.kind != AccessKind::async_copy) c.l1_ld_wavefronts += p;
    return {p, m_spec.l2_latency};
  }
  const L2Property l1_property = r.hint == CacheHint::cs ? L2Property::streaming : L2Property::normal;
  c.l1_sector_lookups += sectors;
  std::uint32_t missed = 0;  // lines
  for_lines([&](std::uint64_t line, std::uint32_t mask) {
    const std::uint32_t slot = l1_line(line, l1_property);
    const std::uint32_t missing = mask & ~m_l1.valid(slot);
    c.l1_sector_hits += static_cast<std::uint64_t>(std::popcount(mask & ~missing));
    if (missing == 0) return;
    ++missed;
    m_l1.valid(slot) |= missing;
    send(line, missing, L2Op::read);
  });
  // Lines that missed come back from L2 through the data stage two a pass (H100 random_gather, every line missing L1:
  // 12.9 read passes per 28-line gather; m = 2^18, 94% missing: 15.7).
  const std::uint32_t half = (missed + 1) / 2;
  const std::uint32_t p = lines <= 1 || half >= lines ? std::max(lines, half) : data_passes(r, a, lines, half);
  c.l1_wavefronts += p;
  if (r.kind != AccessKind::async_copy) c.l1_ld_wavefronts += p;  // ncu counts no LDGSTS among them
  return {p, missed != 0 ? m_spec.l2_latency : m_spec.l1_latency};
}

}  // namespace memhier
