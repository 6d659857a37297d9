// .mht reader: checks the header, finds the index through the footer, and decodes one chunk at a time. Sizes read
// from the file are checked against the file size before anything is allocated.
#include <fmt/format.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>

#include "memhier/error.h"
#include "memhier/mht.h"
#include "memhier/trace_json.h"
#include "mht_codec.h"
#include "mht_layout.h"

namespace memhier {

using namespace mht;

// A chunk read from the file: its header and stored bytes, then (decode()) its raw records.
struct MhtReader::Chunk {
  std::uint64_t offset = 0;  // of its section header
  SectionHeader header;
  std::string stored;
  std::vector<std::uint8_t> raw;
  std::optional<ChunkDecoder> decoder;  // over `raw`
  std::vector<PartSpan> rest;           // of the block decoded last, where read in parts

  void release() {  // gives its buffers back (it has been read)
    decoder.reset();
    std::vector<std::uint8_t>().swap(raw);
    std::string().swap(stored);
  }
  std::uint64_t blocks_read = 0;
  std::exception_ptr error;  // of decoding it in parallel (next_blocks)
};

struct MhtReader::DecoderState {
  struct FreeDCtx {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
  };
  using DCtx = std::unique_ptr<ZSTD_DCtx, FreeDCtx>;
  DCtx dctx{ZSTD_createDCtx()};
  Chunk current;                           // the chunk next_block() reads from
  std::vector<std::uint64_t> first_chunk;  // per kernel: offset just past its kernel section
  std::vector<Chunk> ahead;                // next_blocks(): the chunks it decodes at once (kept for their buffers)
  // next_blocks(): a context a host thread (one a chunk took a context's window, about a chunk, for each of a thousand
  // chunks of long blocks decoded at once: 680 MB for matmul_naive at n=1024).
  static ZSTD_DCtx* thread_dctx() {
    thread_local DCtx dctx{ZSTD_createDCtx()};
    if (!dctx) throw std::bad_alloc();
    return dctx.get();
  }
};

namespace {

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::string tag_name(std::uint32_t tag) {
  std::string s;
  for (int i = 0; i < 4; ++i) {
    const auto c = static_cast<char>(tag >> (8U * static_cast<unsigned>(i)));
    s += (c >= ' ' && c <= '~') ? c : '?';
  }
  return s;
}

}  // namespace

MhtReader::MhtReader(std::filesystem::path path)
    : m_path(std::move(path)), m_decoder(std::make_unique<DecoderState>()) {
  std::error_code ec;
  if (std::filesystem::is_directory(m_path, ec)) fail(-1, "is a directory, not a .mht trace");
  m_in.open(m_path, std::ios::binary);
  if (!m_in) throw InputError({m_path.string(), 0, 0, -1}, "", fmt::format("cannot open: {}", std::strerror(errno)));
  m_file_size = std::filesystem::file_size(m_path, ec);
  if (ec) fail(-1, fmt::format("cannot read its size: {}", ec.message()));
  read_header();
  read_index();
}

MhtReader::~MhtReader() = default;

void MhtReader::fail(std::uint64_t offset, const std::string& message) const {
  throw InputError({m_path.string(), 0, 0, static_cast<std::int64_t>(offset)}, "", message);
}

namespace {

// Reads exactly n bytes at offset or reports where the file ends.
void read_at(std::ifstream& in, std::uint64_t offset, char* dst, std::size_t n) {
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(dst, static_cast<std::streamsize>(n));
}

}  // namespace

void MhtReader::read_header() {
  if (m_file_size < kHeaderBytes)
    fail(m_file_size, fmt::format("file of {} bytes is too short for a .mht header", m_file_size));
  std::array<char, kHeaderBytes> h{};
  read_at(m_in, 0, h.data(), h.size());
  if (!m_in) fail(0, "cannot read the header");
  if (std::memcmp(h.data(), kMagic.data(), kMagic.size()) != 0) fail(0, "not a .mht trace (wrong magic number)");
  const auto major = load<std::uint16_t>(h.data() + 8);
  m_version_minor = load<std::uint16_t>(h.data() + 10);
  const auto bom = load<std::uint32_t>(h.data() + 12);
  if (bom != kByteOrderMark) fail(12, fmt::format("byte-order mark 0x{:08x}: written on a big-endian machine?", bom));
  if (major != kMhtVersionMajor)
    fail(8, fmt::format("format version {}.{}; this memhier reads {}.x{}", major, m_version_minor, kMhtVersionMajor,
                        major > kMhtVersionMajor ? " (the file was written by a newer memhier)" : ""));
}

namespace {

struct Section {
  SectionHeader header;
  std::uint64_t payload = 0;  // offset of the stored bytes
};

}  // namespace

void MhtReader::read_index() {
  if (m_file_size < kHeaderBytes + kFooterBytes)
    fail(m_file_size, "no index footer: the file is truncated or was not closed");
  std::array<char, kFooterBytes> f{};
  read_at(m_in, m_file_size - kFooterBytes, f.data(), f.size());
  if (!m_in || std::memcmp(f.data() + 8, kFooterMagic.data(), kFooterMagic.size()) != 0)
    fail(m_file_size - kFooterBytes, "no index footer: the file is truncated or was not closed");
  const auto index_offset = load<std::uint64_t>(f.data());
  if (index_offset < kHeaderBytes || index_offset > m_file_size - kFooterBytes - kSectionBytes)
    fail(m_file_size - kFooterBytes, fmt::format("index offset {} outside the file", index_offset));

  auto section_json = [this](std::uint64_t offset, std::uint32_t want, std::uint64_t limit) {
    std::array<char, kSectionBytes> sh{};
    read_at(m_in, offset, sh.data(), sh.size());
    if (!m_in) fail(offset, "section header cut off");
    SectionHeader h{load<std::uint32_t>(sh.data()), load<std::uint32_t>(sh.data() + 4),
                    load<std::uint64_t>(sh.data() + 8), load<std::uint64_t>(sh.data() + 16)};
    if (h.tag != want) fail(offset, fmt::format("expected a {} section, found '{}'", tag_name(want), tag_name(h.tag)));
    if (h.stored > limit - offset - kSectionBytes)
      fail(offset, fmt::format("section of {} bytes runs past its end", h.stored));
    if (h.raw > kMaxMetadataRawBytes) fail(offset, fmt::format("metadata section claims {} bytes", h.raw));
    m_compressed.resize(h.stored);
    read_at(m_in, offset + kSectionBytes, m_compressed.data(), h.stored);
    if (!m_in) fail(offset, "section cut off");
    m_raw.resize(h.raw);
    const std::size_t n =
        ZSTD_decompressDCtx(m_decoder->dctx.get(), m_raw.data(), m_raw.size(), m_compressed.data(), h.stored);
    if (ZSTD_isError(n) != 0U) fail(offset, fmt::format("corrupt section: {}", ZSTD_getErrorName(n)));
    if (n != h.raw) fail(offset, fmt::format("section decompresses to {} bytes, header says {}", n, h.raw));
    auto j = nlohmann::json::parse(m_raw, nullptr, false);
    if (j.is_discarded()) fail(offset, "section holds malformed metadata");
    return std::make_pair(j, offset + kSectionBytes + h.stored);
  };

  auto [index, index_end] = section_json(index_offset, kIndexTag, m_file_size - kFooterBytes);
  if (index_end != m_file_size - kFooterBytes) fail(index_end, "bytes between the index and the footer");
  if (!index.is_object() || !index.contains("kernels") || !index["kernels"].is_array())
    fail(index_offset, "index has no kernel list");
  std::uint64_t previous_end = kHeaderBytes;
  for (const auto& e : index["kernels"]) {
    MhtKernelInfo k;
    try {
      k.offset = e.at("offset").get<std::uint64_t>();
      k.end = e.at("end").get<std::uint64_t>();
      k.chunks = e.at("chunks").get<std::uint64_t>();
      k.raw_bytes = e.at("raw_bytes").get<std::uint64_t>();
      k.stored_bytes = e.at("stored_bytes").get<std::uint64_t>();
      k.counts = counts_from_json(e.at("counts"));
    } catch (const std::exception& ex) {
      fail(index_offset, fmt::format("index entry {}: {}", m_kernels.size(), ex.what()));
    }
    if (k.offset != previous_end || k.end < k.offset || k.end > index_offset)
      fail(index_offset, fmt::format("index entry {}: kernel at bytes {}..{} does not follow the previous one",
                                     m_kernels.size(), k.offset, k.end));
    auto [launch, first_chunk] = section_json(k.offset, kKernelTag, k.end);
    try {
      k.launch = launch_from_json(launch);
    } catch (const std::exception& ex) {
      fail(k.offset, fmt::format("kernel launch: {}", ex.what()));
    }
    m_decoder->first_chunk.push_back(first_chunk);
    previous_end = k.end;
    m_kernels.push_back(std::move(k));
  }
  if (previous_end != index_offset) fail(previous_end, "data between the last kernel and the index");
}

void MhtReader::seek_kernel(std::size_t index) {
  if (index >= m_kernels.size())
    throw InputError({m_path.string(), 0, 0, -1}, "kernel",
                     fmt::format("kernel {} requested, the file has {}", index, m_kernels.size()));
  m_next_kernel = index;
  m_current = SIZE_MAX;
}

bool MhtReader::next_kernel(KernelLaunch& launch) {
  m_decoder->current.decoder.reset();
  m_blocks_left_in_chunk = 0;
  if (m_next_kernel >= m_kernels.size()) {
    m_current = SIZE_MAX;
    return false;
  }
  m_current = m_next_kernel++;
  m_pos = m_decoder->first_chunk[m_current];
  launch = m_kernels[m_current].launch;
  // Messages about this launch (the simulator's, e.g. "cannot run on v100") name the file being read, not the one the
  // trace was made from (a description elsewhere, or the tracer), which the index entry keeps (kernels()).
  launch.source = m_path.string();
  return true;
}

bool MhtReader::read_chunk(Chunk& c) {
  const MhtKernelInfo& k = m_kernels[m_current];
  if (m_pos >= k.end) return false;
  c.offset = m_pos;
  if (k.end - m_pos < kSectionBytes) fail(m_pos, "chunk header cut off");
  std::array<char, kSectionBytes> sh{};
  read_at(m_in, m_pos, sh.data(), sh.size());
  if (!m_in) fail(m_pos, "chunk header cut off");
  const SectionHeader h{load<std::uint32_t>(sh.data()), load<std::uint32_t>(sh.data() + 4),
                        load<std::uint64_t>(sh.data() + 8), load<std::uint64_t>(sh.data() + 16)};
  if (h.tag != kChunkTag) fail(m_pos, fmt::format("expected a CHNK section, found '{}'", tag_name(h.tag)));
  if (h.stored > k.end - m_pos - kSectionBytes)
    fail(m_pos, fmt::format("chunk of {} bytes runs past its kernel", h.stored));
  if (h.raw > kMaxChunkRawBytes || h.raw > h.stored * ZSTD_BLOCKSIZE_MAX + 1024)
    fail(m_pos, fmt::format("chunk claims {} raw bytes from {} stored", h.raw, h.stored));
  if (h.count == 0 || h.count > h.raw / 4)
    fail(m_pos, fmt::format("chunk claims {} blocks in {} bytes", h.count, h.raw));
  c.header = h;
  c.stored.resize(h.stored);
  read_at(m_in, m_pos + kSectionBytes, c.stored.data(), h.stored);
  if (!m_in) fail(m_pos, "chunk cut off");
  c.decoder.reset();
  c.blocks_read = 0;
  c.error = nullptr;
  m_pos += kSectionBytes + h.stored;
  return true;
}

void MhtReader::decompress(Chunk& c, ::ZSTD_DCtx_s* dctx) const {
  c.raw.resize(c.header.raw);
  const std::size_t n = ZSTD_decompressDCtx(dctx, c.raw.data(), c.raw.size(), c.stored.data(), c.stored.size());
  if (ZSTD_isError(n) != 0U) {
    const bool checksum = ZSTD_getErrorCode(n) == ZSTD_error_checksum_wrong;
    fail(c.offset,
         checksum ? "checksum mismatch: the chunk is corrupt" : fmt::format("corrupt chunk: {}", ZSTD_getErrorName(n)));
  }
  if (n != c.header.raw) fail(c.offset, fmt::format("chunk decompresses to {} bytes, header says {}", n, c.header.raw));
  c.decoder.emplace(c.raw.data(), c.raw.size(), m_kernels[m_current].launch.warps_per_block());
}

namespace {

struct FreeCCtx {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct FreeDCtx {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// The later parts of a block read in parts, each compressed on its own (zstd's fast level -3) with the address
// predictor at its start, and decoded as its warp asks for it: what a block keeps is about its share of the compressed
// trace, not its raw records (matmul_naive's are 40 bytes each), and its chunk is not kept. Level 1 cost matmul_naive
// n=256's simulation 5% more host instructions (compressing was 9% of them) for about the same memory.
class MhtRest final : public BlockRest {
 public:
  static constexpr int kPartLevel = -3;
  MhtRest(const std::vector<std::uint8_t>& raw, const std::vector<PartSpan>& spans, std::size_t warps,
          std::uint32_t warps_per_block, std::string path, std::uint64_t chunk_offset, std::uint64_t block)
      : m_warps_per_block(warps_per_block),
        m_warps(warps),
        m_path(std::move(path)),
        m_chunk_offset(chunk_offset),
        m_block(block) {
    thread_local std::unique_ptr<ZSTD_CCtx, FreeCCtx> cctx(ZSTD_createCCtx());
    thread_local std::vector<std::uint8_t> plain;
    if (!cctx) throw std::bad_alloc();
    for (const PartSpan& s : spans) {
      plain.resize(AddressPredictor::kBytes + (s.end - s.begin));
      std::memcpy(plain.data(), s.predictor.bytes(), AddressPredictor::kBytes);
      std::memcpy(plain.data() + AddressPredictor::kBytes, raw.data() + s.begin, s.end - s.begin);
      Part& p = m_warps[s.warp].parts.emplace_back();
      p.records = s.records;
      p.bytes = plain.size();
      p.chunk_pos = s.begin;
      p.stored.resize(ZSTD_compressBound(plain.size()));
      const std::size_t n =
          ZSTD_compressCCtx(cctx.get(), p.stored.data(), p.stored.size(), plain.data(), plain.size(), kPartLevel);
      if (ZSTD_isError(n) != 0U) throw std::runtime_error(fmt::format("zstd: {}", ZSTD_getErrorName(n)));
      p.stored.resize(n);
      p.stored.shrink_to_fit();
    }
  }
  bool next(std::size_t w, BlockTrace& out) override {
    out.clear();
    out.begin_warp();
    if (w >= m_warps.size() || m_warps[w].next == m_warps[w].parts.size()) return false;
    Part& p = m_warps[w].parts[m_warps[w].next++];
    thread_local std::unique_ptr<ZSTD_DCtx, FreeDCtx> dctx(ZSTD_createDCtx());
    thread_local std::vector<std::uint8_t> plain;
    if (!dctx) throw std::bad_alloc();
    plain.resize(p.bytes);
    const std::size_t n = ZSTD_decompressDCtx(dctx.get(), plain.data(), plain.size(), p.stored.data(), p.stored.size());
    if (ZSTD_isError(n) != 0U || n != p.bytes)
      throw std::runtime_error(fmt::format("a block's part does not decompress ({})",
                                           ZSTD_isError(n) != 0U ? ZSTD_getErrorName(n) : "wrong size"));
    AddressPredictor predictor;
    predictor.set_bytes(plain.data());
    ChunkDecoder d(plain.data() + AddressPredictor::kBytes, plain.size() - AddressPredictor::kBytes, m_warps_per_block);
    try {
      d.part(out, predictor, p.records);
    } catch (const DecodeError& e) {  // checked when the block was read: not expected
      throw InputError({m_path, 0, 0, static_cast<std::int64_t>(m_chunk_offset)}, "",
                       fmt::format("chunk block {}, record byte {}: {}", m_block, p.chunk_pos + e.offset, e.message));
    }
    std::string().swap(p.stored);  // done with
    out.trim_pool();
    return true;
  }

 private:
  struct Part {
    std::string stored;
    std::uint64_t records = 0;
    std::size_t bytes = 0;      // decompressed: the predictor, then the records
    std::size_t chunk_pos = 0;  // of its records in the raw chunk, for messages
  };
  struct Warp {
    std::vector<Part> parts;
    std::size_t next = 0;
  };
  std::uint32_t m_warps_per_block;
  std::vector<Warp> m_warps;
  std::string m_path;
  std::uint64_t m_chunk_offset, m_block;
};

}  // namespace

void MhtReader::decode_block(Chunk& c, BlockTrace& block) const {
  ChunkDecoder& d = *c.decoder;
  try {
    d.next_block(block, &c.rest);
  } catch (const DecodeError& e) {
    fail(c.offset, fmt::format("chunk block {}, record byte {}: {}", c.blocks_read, e.offset, e.message));
  }
  if (!c.rest.empty()) {
    block.rest =
        std::make_shared<MhtRest>(c.raw, c.rest, block.warp_count(), m_kernels[m_current].launch.warps_per_block(),
                                  m_path.string(), c.offset, c.blocks_read);
    std::vector<PartSpan>().swap(c.rest);  // 2 KiB a part (its predictor): not kept a chunk
  }
  const Dim3& grid = m_kernels[m_current].launch.grid;
  if (block.index.x >= grid.x || block.index.y >= grid.y || block.index.z >= grid.z)
    fail(c.offset, fmt::format("block ({},{},{}) outside the grid ({},{},{})", block.index.x, block.index.y,
                               block.index.z, grid.x, grid.y, grid.z));
  if (++c.blocks_read == c.header.count && !d.done())
    fail(c.offset, fmt::format("{} bytes left after the chunk's last block", d.size() - d.offset()));
}

bool MhtReader::next_block(BlockTrace& block) {
  if (m_current == SIZE_MAX) return false;
  Chunk& c = m_decoder->current;
  if (m_blocks_left_in_chunk == 0) {
    if (!read_chunk(c)) return false;
    decompress(c, m_decoder->dctx.get());
    m_blocks_left_in_chunk = c.header.count;
  }
  decode_block(c, block);
  --m_blocks_left_in_chunk;
  return true;
}

// The rest of the current chunk, then whole chunks read from the file here, decoded in parallel (job 0 the current
// chunk, job i the ith chunk after it), each into its own part of `out`. A chunk only partly needed becomes the
// current one. An error is the first one in file order, as reading block by block would report it.
std::size_t MhtReader::next_blocks(std::span<BlockTrace> out, int threads) {
  if (m_current == SIZE_MAX) return 0;
  if (threads <= 1) return TraceSource::next_blocks(out, threads);
  const auto from_current = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), m_blocks_left_in_chunk));
  std::vector<Chunk>& ahead = m_decoder->ahead;
  std::vector<std::size_t> first;  // of each chunk's blocks in `out`
  std::size_t chunks = 0, planned = from_current;
  std::exception_ptr unreadable;  // a chunk past the ones read: reported after theirs
  try {
    while (planned < out.size()) {
      if (ahead.size() <= chunks) ahead.emplace_back();
      if (!read_chunk(ahead[chunks])) break;
      first.push_back(planned);
      planned += std::min<std::size_t>(ahead[chunks].header.count, out.size() - planned);
      ++chunks;
    }
  } catch (const InputError&) {
    unreadable = std::current_exception();
  }
  // Chunks past the first kKeepRawBytes of raw records give their buffers back as soon as they are decoded: a call
  // for a wave of long blocks, a chunk each, decodes a thousand chunks (matmul_naive at n=768: 520 MB of buffers at
  // once, n=1024 680 MB). The others' buffers are kept for the next call.
  constexpr std::size_t kKeepRawBytes = std::size_t{64} << 20U;
  std::vector<std::uint8_t> give_back(chunks, 0);
  for (std::size_t i = 0, raw = 0; i < chunks; ++i) {
    raw += ahead[i].header.raw;
    give_back[i] = raw > kKeepRawBytes ? 1 : 0;
  }
  Chunk& current = m_decoder->current;
  current.error = nullptr;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int job = 0; job <= static_cast<int>(chunks); ++job) {
    if (job == 0) {
      try {
        for (std::size_t b = 0; b < from_current; ++b) decode_block(current, out[b]);
      } catch (...) {
        current.error = std::current_exception();
      }
      continue;
    }
    const auto i = static_cast<std::size_t>(job - 1);
    Chunk& c = ahead[i];
    try {
      decompress(c, DecoderState::thread_dctx());
      const std::size_t end = i + 1 < chunks ? first[i + 1] : planned;
      for (std::size_t b = first[i]; b < end; ++b) decode_block(c, out[b]);
      if (give_back[i] != 0 && c.blocks_read == c.header.count) c.release();
    } catch (...) {
      c.error = std::current_exception();
    }
  }
  if (current.error) std::rethrow_exception(current.error);
  for (std::size_t i = 0; i < chunks; ++i)
    if (ahead[i].error) std::rethrow_exception(ahead[i].error);
  if (unreadable) std::rethrow_exception(unreadable);
  m_blocks_left_in_chunk -= from_current;
  if (chunks != 0 && ahead[chunks - 1].blocks_read < ahead[chunks - 1].header.count) {
    std::swap(current, ahead[chunks - 1]);  // its decoder reads the raw buffer it moved with
    m_blocks_left_in_chunk = current.header.count - current.blocks_read;
  }
  return planned;
}

}  // namespace memhier
