#pragma once
// Encoding of the records of one .mht chunk (before zstd), shared by the writer and the reader. See docs/mht-format.md.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "memhier/trace.h"

namespace memhier::mht {

inline constexpr std::uint32_t kMaxWarpsPerBlock = 32;  // 1024 threads
inline constexpr std::uint64_t kMaxChunkRawBytes = 256ULL
                                                   << 20U;  // a chunk holds whole blocks; no real block comes near

// Predicts each record's first address from the previous record with the same pc (direct-mapped by pc), so the
// regular strides between warps and loop iterations become small repeated deltas that zstd removes.
class AddressPredictor {
 public:
  static constexpr std::size_t kBytes = 256 * sizeof(std::uint64_t);  // its state, as bytes()
  [[nodiscard]] const void* bytes() const { return m_last.data(); }
  void set_bytes(const void* p) { std::memcpy(m_last.data(), p, kBytes); }
  void reset() { m_last.fill(0); }
  static constexpr std::uint32_t kSlots = 256;
  static std::size_t index(std::uint32_t pc) { return (pc >> 2U ^ pc >> 10U) & (kSlots - 1); }
  std::uint64_t& slot(std::uint32_t pc) { return m_last[index(pc)]; }

 private:
  std::array<std::uint64_t, kSlots> m_last{};
};

// Appends blocks to a raw chunk buffer.
class ChunkEncoder {
 public:
  void reset();
  void add_block(const BlockTrace& block);
  [[nodiscard]] const std::string& bytes() const { return m_out; }
  [[nodiscard]] std::uint64_t block_count() const { return m_blocks; }

 private:
  void put_varint(std::uint64_t v);
  void put_signed(std::int64_t v) {
    put_varint((static_cast<std::uint64_t>(v) << 1U) ^ static_cast<std::uint64_t>(v >> 63));
  }
  void put_u32(std::uint32_t v);
  void put_u64(std::uint64_t v);
  void add_record(const BlockTrace& block, const WarpRecord& r);

  std::string m_out;
  std::uint64_t m_blocks = 0;
  AddressPredictor m_predictor;
};

// A later part of a warp's records, of a block read in parts (BlockTrace::part_records): its bytes in the raw chunk,
// its records, and the address predictor at its start (what decoding it alone needs: ChunkDecoder::part()).
struct PartSpan {
  std::size_t warp = 0;
  std::size_t begin = 0, end = 0;
  std::uint64_t records = 0;
  AddressPredictor predictor;
};

// Thrown by the decoder with the offset inside the raw chunk; the reader adds the file name and chunk offset.
struct DecodeError {
  std::uint64_t offset;
  std::string message;
};

// Reads blocks back from a raw chunk buffer.
class ChunkDecoder {
 public:
  ChunkDecoder(const std::uint8_t* data, std::size_t size, std::uint32_t warps_per_block);
  [[nodiscard]] bool done() const { return m_pos == m_size; }
  // The next block (throws DecodeError). Where block.part_records is set and `rest` given, a warp of more records gets
  // that many; the others are decoded (checked, and the predictor taken past them) but not kept, and `rest` (emptied
  // first) gets their parts of part_records records, warp by warp, in order.
  void next_block(BlockTrace& block, std::vector<PartSpan>* rest = nullptr);
  // Decodes this decoder's data as one part of a warp's records: `n` records from its start with `predictor`, into
  // block's open warp.
  void part(BlockTrace& block, const AddressPredictor& predictor, std::uint64_t n);
  [[nodiscard]] std::uint64_t offset() const { return m_pos; }
  [[nodiscard]] std::size_t size() const { return m_size; }

 private:
  std::uint64_t get_varint() {
    if (m_pos < m_size && m_data[m_pos] < 0x80) return m_data[m_pos++];  // most numbers are one byte
    if (m_size - m_pos >= 2 && m_data[m_pos + 1] < 0x80) {               // a stream's deltas: two
      const std::uint64_t v = (m_data[m_pos] & 0x7FU) | std::uint64_t{m_data[m_pos + 1]} << 7U;
      m_pos += 2;
      return v;
    }
    return get_long_varint();
  }
  std::uint64_t get_long_varint();
  // A lane's delta (a gather's take 3 to 5 bytes): while 10 bytes remain, read in line, with no call and no bound test
  // a byte.
  std::int64_t get_delta() {
    if (m_size - m_pos < 10) return get_signed();
    const std::uint8_t* p = m_data + m_pos;
    std::uint64_t v = 0;
    for (unsigned i = 0; i < 10; ++i) {
      v |= std::uint64_t{p[i] & 0x7FU} << (7 * i);
      if (p[i] < 0x80) {
        m_pos += i + 1;
        return unzigzag(v);
      }
    }
    m_pos += 10;
    fail("number longer than 10 bytes");
  }
  std::int64_t get_signed() { return unzigzag(get_varint()); }
  static std::int64_t unzigzag(std::uint64_t v) {
    return static_cast<std::int64_t>(v >> 1U) ^ -static_cast<std::int64_t>(v & 1U);
  }
  template <typename T>
  T get_le();  // a little-endian integer
  std::uint8_t get_byte() {
    if (m_pos == m_size) need(1);
    return m_data[m_pos++];
  }
  void need(std::size_t n) const;
  template <bool kSkip>
  void record(BlockTrace* block);
  void get_record(BlockTrace& block);
  // Reads a record of the common forms from the next bytes into `block`; false, with nothing read, for any other.
  bool fast_record(BlockTrace& block);
  // The lanes of block's last record, of base+deltas form (`n` lanes, the first at `first`), from the next bytes.
  void delta_lanes(BlockTrace& block, std::size_t n, std::uint64_t first);
  // Reads past a record's addresses, checking what it reads and taking the predictor past it, keeping nothing.
  void skip_record();
  void skip_parts(std::size_t w, std::uint64_t left, std::uint64_t part, std::vector<PartSpan>& rest);
  [[noreturn]] void fail(const std::string& message) const;

  const std::uint8_t* m_data;
  std::size_t m_size;
  std::size_t m_pos = 0;
  std::uint32_t m_warps_per_block;
  AddressPredictor m_predictor;
  // The deltas of the last base+deltas records, by predictor slot (mod kDeltaSlots), where they lie in this chunk,
  // and, if a block kept one in runs form (BlockTrace::compact_last_runs), its runs. A two-dimensional block's warp
  // repeats its deltas record after record (matmul_naive's rows), so a record whose delta bytes and lanes are the same
  // as its slot's reads the same deltas from another first lane: it is skipped without reading its varints, and
  // decoded without decoding 31 deltas and finding the runs again. Which record's deltas a slot holds does not
  // matter, only that the bytes repeat. Small: a reader holds a decoder a chunk in flight.
  struct Deltas {
    std::uint32_t pos;    // raw chunks are at most 256 MiB
    std::uint16_t bytes;  // at most 31 deltas of 10 bytes
    std::uint8_t lanes;
    bool runs;            // the fields below hold
    std::uint8_t layout;  // lane_layout() of the lanes
    std::uint8_t length;
    std::uint64_t stride, step;
  };
  static constexpr std::size_t kDeltaSlots = 32;
  // The deltas of `pc`'s slot if set and the next bytes repeat them for a record of `lanes` lanes, else null.
  const Deltas* same_deltas(std::uint32_t pc, std::size_t lanes) const {
    const std::size_t slot = AddressPredictor::index(pc) % kDeltaSlots;
    if ((m_deltas_set >> slot & 1U) == 0) return nullptr;
    const Deltas& d = m_deltas[slot];
    if (d.lanes != lanes || m_size - m_pos < d.bytes || std::memcmp(m_data + m_pos, m_data + d.pos, d.bytes) != 0)
      return nullptr;
    return &d;
  }
  // Notes the deltas read from `start` to here for a record of `lanes` lanes at `pc` (none of runs); null where they
  // do not fit a Deltas.
  Deltas* set_deltas(std::uint32_t pc, std::size_t start, std::size_t lanes) {
    const std::size_t slot = AddressPredictor::index(pc) % kDeltaSlots;
    m_deltas_set &= ~(std::uint32_t{1} << slot);
    if (m_pos - start > 0xFFFF || start > 0xFFFFFFFFU || lanes > kWarpSize) return nullptr;
    m_deltas_set |= std::uint32_t{1} << slot;
    Deltas& d = m_deltas[slot];
    d = {static_cast<std::uint32_t>(start),
         static_cast<std::uint16_t>(m_pos - start),
         static_cast<std::uint8_t>(lanes),
         false,
         0,
         0,
         0,
         0};
    return &d;
  }
  std::array<Deltas, kDeltaSlots> m_deltas;  // not initialized: read where set only
  std::uint32_t m_deltas_set = 0;            // a bit a slot
};

}  // namespace memhier::mht
