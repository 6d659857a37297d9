// Record encoding inside a chunk: one tag byte, packed access facts, the pc, and the addresses in the cheapest of three
// forms (base+stride, base+deltas, raw list), with the base predicted from the previous record at the same pc.
#include "mht_codec.h"

#include <fmt/format.h>

#include <cstring>

namespace memhier::mht {
namespace {

constexpr std::uint8_t kTypeMask = 0x3;
constexpr std::uint8_t kModeShift = 2;
constexpr std::uint8_t kFullMask = 0x10;
constexpr std::uint8_t kHasWork = 0x20;
constexpr std::uint8_t kReservedBits = 0xC0;
enum Mode : std::uint8_t { kRaw = 0, kStride = 1, kDelta = 2 };
constexpr std::uint32_t kAllLanes = 0xFFFFFFFFU;

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1U) ^ static_cast<std::uint64_t>(v >> 63);
}
int varint_size(std::uint64_t v) {
  int n = 1;
  while (v >= 0x80) {
    v >>= 7U;
    ++n;
  }
  return n;
}

}  // namespace

void ChunkEncoder::reset() {
  m_out.clear();
  m_blocks = 0;
  m_predictor.reset();
}

void ChunkEncoder::put_varint(std::uint64_t v) {
  while (v >= 0x80) {
    m_out.push_back(static_cast<char>(v | 0x80U));
    v >>= 7U;
  }
  m_out.push_back(static_cast<char>(v));
}

void ChunkEncoder::put_u32(std::uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);  // the format is little-endian; CMake refuses big-endian hosts
  m_out.append(b, 4);
}

void ChunkEncoder::put_u64(std::uint64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  m_out.append(b, 8);
}

void ChunkEncoder::add_block(const BlockTrace& block) {
  put_varint(block.index.x);
  put_varint(block.index.y);
  put_varint(block.index.z);
  put_varint(block.warp_count());
  for (std::size_t w = 0; w < block.warp_count(); ++w) {
    auto records = block.warp(w);
    put_varint(records.size());
    for (const WarpRecord& r : records) add_record(block, r);
  }
  ++m_blocks;
}

void ChunkEncoder::add_record(const BlockTrace& block, const WarpRecord& r) {
  const bool full = r.active_mask == kAllLanes;
  auto tag =
      static_cast<std::uint8_t>((r.is_memory() ? 0U : 1U) | (full ? kFullMask : 0U) | (r.work != 0 ? kHasWork : 0U));
  if (!r.is_memory()) {
    m_out.push_back(static_cast<char>(tag));
    put_varint(r.pc);
    if (!full) put_u32(r.active_mask);
    if (r.work != 0) put_varint(r.work);
    return;
  }
  auto lanes = block.lane_addresses(r);
  const std::size_t n = lanes.size();
  if (n == 0) {  // issued with every lane predicated off: no addresses
    m_out.push_back(static_cast<char>(tag | (kRaw << kModeShift)));
    m_out.push_back(static_cast<char>(static_cast<unsigned>(r.space) | static_cast<unsigned>(r.kind) << 3U |
                                      static_cast<unsigned>(r.hint) << 6U));
    m_out.push_back(static_cast<char>(std::countr_zero(static_cast<unsigned>(r.size))));
    put_varint(r.pc);
    put_u32(r.active_mask);
    if (r.work != 0) put_varint(r.work);
    if (r.kind == AccessKind::bulk_copy) put_varint(r.bulk_bytes);
    return;
  }
  // Pick the address form: stride when the lanes form one arithmetic run, else deltas unless raw is smaller.
  Mode mode = kStride;
  std::int64_t stride = n > 1 ? static_cast<std::int64_t>(lanes[1] - lanes[0]) : 0;
  std::size_t delta_bytes = 0;
  for (std::size_t i = 1; i < n; ++i) {
    auto d = static_cast<std::int64_t>(lanes[i] - lanes[i - 1]);
    if (d != stride) mode = kDelta;
    delta_bytes += static_cast<std::size_t>(varint_size(zigzag(d)));
  }
  if (mode == kDelta && delta_bytes >= 8 * (n - 1)) mode = kRaw;
  tag = static_cast<std::uint8_t>(tag | (mode << kModeShift));
  m_out.push_back(static_cast<char>(tag));
  m_out.push_back(static_cast<char>(static_cast<unsigned>(r.space) | static_cast<unsigned>(r.kind) << 3U |
                                    static_cast<unsigned>(r.hint) << 6U));
  m_out.push_back(static_cast<char>(std::countr_zero(static_cast<unsigned>(r.size))));
  put_varint(r.pc);
  if (!full) put_u32(r.active_mask);
  if (r.work != 0) put_varint(r.work);
  if (r.kind == AccessKind::bulk_copy) put_varint(r.bulk_bytes);
  std::uint64_t& predicted = m_predictor.slot(r.pc);
  if (mode == kRaw) {
    for (std::uint64_t a : lanes) put_u64(a);
  } else {
    put_signed(static_cast<std::int64_t>(lanes[0] - predicted));
    if (mode == kStride) {
      if (n > 1) put_signed(stride);
    } else {
      for (std::size_t i = 1; i < n; ++i) put_signed(static_cast<std::int64_t>(lanes[i] - lanes[i - 1]));
    }
  }
  predicted = lanes[0];
}

ChunkDecoder::ChunkDecoder(const std::uint8_t* data, std::size_t size, std::uint32_t warps_per_block)
    : m_data(data), m_size(size), m_warps_per_block(warps_per_block) {}

void ChunkDecoder::fail(const std::string& message) const { throw DecodeError{m_pos, message}; }

void ChunkDecoder::need(std::size_t n) const {
  if (m_size - m_pos < n) fail(fmt::format("record data ends early (need {} more bytes, {} left)", n, m_size - m_pos));
}

std::uint64_t ChunkDecoder::get_long_varint() {
  std::uint64_t v = 0;
  const bool room = m_size - m_pos >= 10;  // the longest number fits: no end-of-data test per byte
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (!room && m_pos == m_size) fail("record data ends inside a number");
    const std::uint8_t b = m_data[m_pos++];
    v |= static_cast<std::uint64_t>(b & 0x7FU) << shift;
    if ((b & 0x80U) == 0) return v;
  }
  fail("number longer than 10 bytes");
}

template <typename T>
T ChunkDecoder::get_le() {
  need(sizeof(T));
  T v;
  std::memcpy(&v, m_data + m_pos, sizeof(T));  // the format is little-endian; CMake refuses big-endian hosts
  m_pos += sizeof(T);
  return v;
}

void ChunkDecoder::part(BlockTrace& block, const AddressPredictor& predictor, std::uint64_t n) {
  m_pos = 0;
  m_predictor = predictor;
  m_deltas_set = 0;
  for (std::uint64_t i = 0; i < n; ++i) get_record(block);
  if (!done()) fail(fmt::format("{} bytes left after the part's last record", m_size - m_pos));
}

// The rest of a warp in parts (`left` records): checked, the predictor taken past them, a part at a time.
void ChunkDecoder::skip_parts(std::size_t w, std::uint64_t left, std::uint64_t part, std::vector<PartSpan>& rest) {
  for (std::uint64_t at = 0; at < left; at += part) {
    PartSpan& s = rest.emplace_back();
    s.warp = w;
    s.begin = m_pos;
    s.records = std::min(part, left - at);
    s.predictor = m_predictor;
    for (std::uint64_t i = 0; i < s.records; ++i) skip_record();
    s.end = m_pos;
  }
}

void ChunkDecoder::next_block(BlockTrace& block, std::vector<PartSpan>* rest) {
  // A block that holds no storage yet (each new one of simulate()'s batch comes here first) gets its warp table's
  // room at once: clear() would make it one entry, and the reserve below the rest. At most kMostWarps, a block of
  // 1,024 threads, the most any GPU runs (a launch of more, which simulate() refuses, grows the table as it must).
  constexpr std::size_t kMostWarps = 32;
  if (block.warp_begin.capacity() == 0)
    block.warp_begin.reserve(std::min<std::size_t>(m_warps_per_block, kMostWarps) + 1);
  block.clear();
  if (rest != nullptr) rest->clear();
  const std::uint64_t part = rest != nullptr && block.part_records != 0 ? block.part_records : ~std::uint64_t{0};
  auto dim = [this](const char* what) {
    std::uint64_t v = get_varint();
    if (v > 0xFFFFFFFFULL) fail(fmt::format("block index {} = {} does not fit 32 bits", what, v));
    return static_cast<std::uint32_t>(v);
  };
  block.index.x = dim("x");
  block.index.y = dim("y");
  block.index.z = dim("z");
  const std::uint64_t warps = get_varint();
  if (warps > m_warps_per_block) fail(fmt::format("block has {} warps, its launch only {}", warps, m_warps_per_block));
  block.warp_begin.reserve(warps + 1);
  for (std::uint64_t w = 0; w < warps; ++w) {
    const std::uint64_t all = get_varint();
    if (all > (m_size - m_pos) / 2) fail(fmt::format("warp claims {} records, more than the data can hold", all));
    const std::uint64_t count = std::min(all, part);  // those kept
    // A block's warps mostly hold as many records and addresses as the first: room for that many in one allocation
    // (a BlockTrace is reused, so this matters the first few times; growing record by record took 1% of a short
    // streaming simulation's host instructions). Never more than the data left could hold (a record takes at least 2
    // bytes), nor more addresses than kReserveAddresses, whatever a damaged file claims.
    const std::size_t size = block.records.size();
    if (block.records.capacity() < size + count)
      block.records.reserve(size + std::min<std::uint64_t>(count * (warps - w), (m_size - m_pos) / 2));
    const std::size_t pool = block.addresses.size();
    // And room for two addresses a record (a strided record's first address and stride) before its first warp, where
    // it has none: growing from one entry, then the reserve below, made a new block's pool four times over.
    constexpr std::size_t kFirstAddresses = 4096;
    if (w == 0 && block.addresses.capacity() == 0)
      block.addresses.reserve(std::min<std::uint64_t>(2 * count * warps, kFirstAddresses));
    block.begin_warp();
    for (std::uint64_t i = 0; i < count; ++i)
      if (!fast_record(block)) record<false>(&block);
    if (count < all) skip_parts(static_cast<std::size_t>(w), all - count, part, *rest);
    constexpr std::size_t kReserveAddresses = std::size_t{1} << 22U;
    const std::size_t used = block.addresses.size() - pool;
    if (w == 0 && used * warps <= kReserveAddresses && block.addresses.capacity() < used * warps)
      block.addresses.reserve(used * warps);
  }
}

// A record into `block` (kSkip false: get_record()), or (kSkip true: skip_record()) read past and checked, with the
// predictor taken past it and nothing kept: the same checks, failing at the same byte.
template <bool kSkip>
void ChunkDecoder::record(BlockTrace* block) {
  const std::uint8_t tag = get_byte();
  WarpRecord r;
  const unsigned type = tag & kTypeMask;
  const auto mode = static_cast<Mode>((tag >> kModeShift) & 0x3U);
  if (type > 1 || mode > kDelta || (tag & kReservedBits) != 0) fail(fmt::format("bad record tag 0x{:02x}", tag));
  if (type == 1) {
    r.record = RecordKind::barrier;
  } else {
    const std::uint8_t facts = get_byte();
    const std::uint8_t size_log = get_byte();
    const unsigned space = facts & 0x7U;
    const unsigned kind = (facts >> 3U) & 0x7U;
    if (space >= kAddressSpaceCount || kind >= kAccessKindCount || size_log > 4)
      fail(fmt::format("bad access description (space {}, kind {}, size 2^{})", space, kind, size_log));
    r.space = static_cast<AddressSpace>(space);
    r.kind = static_cast<AccessKind>(kind);
    r.hint = static_cast<CacheHint>(facts >> 6U);
    r.size = static_cast<std::uint8_t>(1U << size_log);
  }
  const std::uint64_t pc = get_varint();
  if (pc > 0xFFFFFFFFULL) fail(fmt::format("pc {} does not fit 32 bits", pc));
  r.pc = static_cast<std::uint32_t>(pc);
  r.active_mask = (tag & kFullMask) != 0 ? kAllLanes : get_le<std::uint32_t>();
  if ((tag & kHasWork) != 0) {
    const std::uint64_t work = get_varint();
    if (work > 0xFFFFFFFFULL) fail(fmt::format("work {} does not fit 32 bits", work));
    r.work = static_cast<std::uint32_t>(work);
  }
  if (!r.is_memory()) {
    if constexpr (!kSkip) block->add(r, {});
    return;
  }
  if (r.kind == AccessKind::bulk_copy) {
    const std::uint64_t bytes = get_varint();
    if (bytes > 0xFFFFFFFFULL) fail(fmt::format("bulk copy of {} bytes does not fit 32 bits", bytes));
    r.bulk_bytes = static_cast<std::uint32_t>(bytes);
  }
  if (r.active_mask == 0) {  // predicated off: issued, no addresses
    if (mode != kRaw) fail("memory record with no active lane must use the raw address form");
    if constexpr (!kSkip) block->add(r, {});
    return;
  }
  const auto n = static_cast<std::size_t>(r.active_lanes());
  std::uint64_t& predicted = m_predictor.slot(r.pc);
  if constexpr (kSkip) {
    if (mode == kRaw) {  // lane by lane, failing where get_record() would
      predicted = get_le<std::uint64_t>();
      for (std::size_t i = 1; i < n; ++i) {
        need(8);
        m_pos += 8;
      }
      return;
    }
    predicted += static_cast<std::uint64_t>(get_signed());
    const std::size_t start = m_pos;
    if (mode == kDelta) {
      if (const Deltas* d = same_deltas(r.pc, n)) {
        m_pos += d->bytes;  // the same deltas: they read as they did there
        return;
      }
    }
    for (std::size_t i = 1; i < (mode == kStride ? std::min<std::size_t>(n, 2) : n); ++i) {  // a stride, or deltas
      std::size_t length = 0;
      while (m_pos + length < m_size && length < 10 && m_data[m_pos + length] >= 0x80) ++length;
      if (m_pos + length == m_size) {
        m_pos = m_size;  // where get_delta() fails
        fail("record data ends inside a number");
      }
      if (length == 10) {
        m_pos += 10;  // where get_delta() fails
        fail("number longer than 10 bytes");
      }
      m_pos += length + 1;
    }
    if (mode == kDelta) set_deltas(r.pc, start, n);
  } else {
    // Addresses are decoded in place (no second copy); a strided record's layout (trace.h) follows from its stride.
    if (mode == kStride) {
      const std::uint64_t first = predicted + static_cast<std::uint64_t>(get_signed());
      const std::uint64_t stride = n > 1 ? static_cast<std::uint64_t>(get_signed()) : 0;
      const auto layout = static_cast<std::uint8_t>(kLayoutKnown | (stride <= 32 ? kLayoutDense : 0) |
                                                    (n == 1 || stride == r.size ? kLayoutGapless : 0));
      block->add_strided(r, n, first, stride, layout);
      predicted = first;
      return;
    }
    if (mode == kRaw) {
      const std::span<std::uint64_t> lanes = block->add_lanes(r, n);
      for (std::uint64_t& a : lanes) a = get_le<std::uint64_t>();
      predicted = lanes[0];
      block->compact_last_runs();
      return;
    }
    const std::uint64_t first = predicted + static_cast<std::uint64_t>(get_signed());
    predicted = first;
    block->records.push_back(r);
    delta_lanes(*block, n, first);
  }
}

void ChunkDecoder::delta_lanes(BlockTrace& block, std::size_t n, std::uint64_t first) {
  const std::uint32_t pc = block.records.back().pc;
  // (A runs' layout does not depend on the size: only one stride, never runs, has lanes a size apart.)
  if (const Deltas* d = same_deltas(pc, n); d != nullptr && d->runs && block.compact_strided) {
    m_pos += d->bytes;  // the same deltas: they decode as they did there
    block.runs_of_last({first, d->stride, d->step, d->length}, d->layout);
    return;
  }
  const std::size_t start = m_pos;
  const std::span<std::uint64_t> lanes = block.lanes_of_last(n);
  lanes[0] = first;
  for (std::size_t i = 1; i < n; ++i) lanes[i] = lanes[i - 1] + static_cast<std::uint64_t>(get_delta());
  block.compact_last_runs();  // a two-dimensional block's rows, where the simulator reads the block
  // Only runs are worth remembering here: a gather's deltas never repeat (noting them cost its decoding 4%).
  const WarpRecord& kept = block.records.back();
  Deltas* d = (kept.layout & kLayoutRuns) != 0 ? set_deltas(pc, start, n) : nullptr;
  if (d != nullptr) {
    const LaneRuns x = block.runs(kept);
    d->runs = true;
    d->layout = static_cast<std::uint8_t>(kept.layout & ~kLayoutFormBits);
    d->stride = x.stride;
    d->step = x.step;
    d->length = static_cast<std::uint8_t>(x.length);
  }
}

namespace {

// A varint of at most 10 bytes at `p` (the caller has them), as get_long_varint() reads one; false where it runs
// longer.
[[gnu::always_inline]] inline bool fast_varint(const std::uint8_t*& p, std::uint64_t& v) {
  if (p[0] < 0x80) {
    v = *p++;
    return true;
  }
  v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    const std::uint8_t b = *p++;
    v |= static_cast<std::uint64_t>(b & 0x7FU) << shift;
    if ((b & 0x80U) == 0) return true;
  }
  return false;
}

}  // namespace

// The records a trace is mostly made of, memory accesses in base+stride or base+deltas form (not bulk copies, some
// lane active), read through a pointer with no bound test a byte while kFastBytes remain (the longest such record's
// fixed part: three bytes, the pc, the mask, the work, and the first lane's and the stride's numbers). Nothing is
// changed until the record reads as one: a record of another form, a damaged one, or one near the chunk's end is
// left to record(), which reads (and fails on) the same bytes. On the benchmark copy 236 host instructions a record
// went to record() (cachegrind).
[[gnu::always_inline]] inline bool ChunkDecoder::fast_record(BlockTrace& block) {
  constexpr std::size_t kFastBytes = 3 + 10 + 4 + 10 + 10 + 10;
  if (m_size - m_pos < kFastBytes) return false;
  const std::uint8_t* p = m_data + m_pos;
  const std::uint8_t tag = p[0];
  const unsigned mode = (tag >> kModeShift) & 0x3U;
  if ((tag & (kTypeMask | kReservedBits)) != 0 || (mode != kStride && mode != kDelta)) return false;
  const std::uint8_t facts = p[1];
  const unsigned space = facts & 0x7U, kind = (facts >> 3U) & 0x7U, size_log = p[2];
  if (space >= kAddressSpaceCount || kind >= kAccessKindCount || size_log > 4 ||
      kind == static_cast<unsigned>(AccessKind::bulk_copy))
    return false;
  p += 3;
  std::uint64_t pc = 0, work = 0, delta = 0;
  if (!fast_varint(p, pc) || pc > 0xFFFFFFFFULL) return false;
  std::uint32_t mask = kAllLanes;
  if ((tag & kFullMask) == 0) {
    std::memcpy(&mask, p, 4);  // the format is little-endian; CMake refuses big-endian hosts
    p += 4;
  }
  if ((tag & kHasWork) != 0 && (!fast_varint(p, work) || work > 0xFFFFFFFFULL)) return false;
  if (mask == 0 || !fast_varint(p, delta)) return false;  // predicated off: only the raw form is valid
  const auto n = static_cast<std::size_t>(std::popcount(mask));
  std::uint64_t stride = 0;
  if (mode == kStride && n > 1) {
    if (!fast_varint(p, stride)) return false;
    stride = static_cast<std::uint64_t>(unzigzag(stride));
  }
  // Read whole: the record goes into the block in place (BlockTrace::strided_of_last).
  WarpRecord& r = block.records.emplace_back();
  r.space = static_cast<AddressSpace>(space);
  r.kind = static_cast<AccessKind>(kind);
  r.hint = static_cast<CacheHint>(facts >> 6U);
  r.size = static_cast<std::uint8_t>(1U << size_log);
  r.pc = static_cast<std::uint32_t>(pc);
  r.active_mask = mask;
  r.work = static_cast<std::uint32_t>(work);
  std::uint64_t& predicted = m_predictor.slot(r.pc);
  const std::uint64_t first = predicted + static_cast<std::uint64_t>(unzigzag(delta));
  predicted = first;
  m_pos = static_cast<std::size_t>(p - m_data);
  if (mode == kStride) {
    const auto layout = static_cast<std::uint8_t>(kLayoutKnown | (stride <= 32 ? kLayoutDense : 0) |
                                                  (n == 1 || stride == r.size ? kLayoutGapless : 0));
    block.strided_of_last(n, first, stride, layout);
    return true;
  }
  delta_lanes(block, n, first);  // reads (and fails on) the deltas as record() would
  return true;
}

void ChunkDecoder::get_record(BlockTrace& block) {
  if (!fast_record(block)) record<false>(&block);
}
void ChunkDecoder::skip_record() { record<true>(nullptr); }

}  // namespace memhier::mht
