// Streaming .mht writer: one raw chunk in memory, compressed with zstd (frame checksum on) when it fills.
#include <fmt/format.h>
#include <zstd.h>

#include <cstring>
#include <stdexcept>
#include <system_error>

#include "memhier/error.h"
#include "memhier/mht.h"
#include "memhier/trace_json.h"
#include "mht_codec.h"
#include "mht_layout.h"

namespace memhier {

using namespace mht;

struct MhtWriter::Impl {
  std::filesystem::path path;
  std::filesystem::path partial;
  MhtWriterOptions options;
  std::ofstream out;
  std::uint64_t pos = 0;
  ZSTD_CCtx* cctx = nullptr;
  std::string stored;
  ChunkEncoder encoder;
  bool in_kernel = false;
  bool closed = false;
  nlohmann::json index = nlohmann::json::array();
  // Current kernel.
  std::uint32_t warps_per_block = 0;
  std::uint64_t kernel_offset = 0;
  TraceCounts counts;
  std::uint64_t raw_bytes = 0, stored_bytes = 0, chunks = 0;

  [[noreturn]] void fail(const std::string& message) const {
    throw InputError({path.string(), 0, 0, static_cast<std::int64_t>(pos)}, "", message);
  }

  void write_bytes(const void* data, std::size_t n) {
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    if (!out) fail(fmt::format("cannot write {}: {}", partial.string(), std::strerror(errno)));
    pos += n;
  }

  // Compresses `raw` into one section; returns the bytes written.
  std::uint64_t write_section(std::uint32_t tag, std::uint32_t count, const std::string& raw) {
    stored.resize(ZSTD_compressBound(raw.size()));
    const std::size_t n = ZSTD_compress2(cctx, stored.data(), stored.size(), raw.data(), raw.size());
    if (ZSTD_isError(n) != 0U) fail(fmt::format("zstd compression failed: {}", ZSTD_getErrorName(n)));
    SectionHeader h{tag, count, n, raw.size()};
    write_bytes(&h.tag, 4);
    write_bytes(&h.count, 4);
    write_bytes(&h.stored, 8);
    write_bytes(&h.raw, 8);
    write_bytes(stored.data(), n);
    return kSectionBytes + n;
  }

  void flush_chunk() {
    if (encoder.block_count() == 0) return;
    raw_bytes += encoder.bytes().size();
    stored_bytes += write_section(kChunkTag, static_cast<std::uint32_t>(encoder.block_count()), encoder.bytes());
    ++chunks;
    encoder.reset();
  }
};

MhtWriter::MhtWriter(std::filesystem::path path, MhtWriterOptions options) : m_impl(std::make_unique<Impl>()) {
  Impl& m = *m_impl;
  m.path = std::move(path);
  m.partial = m.path;
  m.partial += ".partial";
  m.options = options;
  if (options.chunk_bytes == 0 || options.chunk_bytes > kMaxChunkRawBytes / 2)
    throw InputError({}, "chunk_bytes",
                     fmt::format("chunk size {} outside 1..{}", options.chunk_bytes, kMaxChunkRawBytes / 2));
  m.out.open(m.partial, std::ios::binary | std::ios::trunc);
  if (!m.out) m.fail(fmt::format("cannot create {}: {}", m.partial.string(), std::strerror(errno)));
  m.cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(m.cctx, ZSTD_c_compressionLevel, options.compression_level);
  ZSTD_CCtx_setParameter(m.cctx, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(m.cctx, ZSTD_c_contentSizeFlag, 1);
  const std::uint16_t major = kMhtVersionMajor;
  const std::uint16_t minor = kMhtVersionMinor;
  const std::uint32_t bom = kByteOrderMark;
  const std::uint64_t reserved = 0;
  m.write_bytes(kMagic.data(), kMagic.size());
  m.write_bytes(&major, 2);
  m.write_bytes(&minor, 2);
  m.write_bytes(&bom, 4);
  m.write_bytes(&reserved, 8);
}

MhtWriter::~MhtWriter() {
  if (!m_impl) return;
  ZSTD_freeCCtx(m_impl->cctx);
  if (!m_impl->closed) {
    m_impl->out.close();
    std::error_code ignored;
    std::filesystem::remove(m_impl->partial, ignored);
  }
}

void MhtWriter::begin_kernel(const KernelLaunch& launch) {
  Impl& m = *m_impl;
  if (m.in_kernel) end_kernel();
  // What a reader would refuse (a block of 0 or 1,100 threads, 256 registers a thread, a window's hit ratio past 1)
  // is not written: the file could not be read back.
  const nlohmann::json text = launch_to_json(launch);
  try {
    (void)launch_from_json(text);
  } catch (const std::invalid_argument& e) {
    throw InputError({launch.source}, launch.name,
                     fmt::format("this launch cannot be written to {}: {}", m.path.string(), e.what()));
  }
  m.in_kernel = true;
  m.warps_per_block = launch.warps_per_block();
  m.kernel_offset = m.pos;
  m.counts = {};
  m.raw_bytes = m.stored_bytes = m.chunks = 0;
  m.write_section(kKernelTag, 0, json_text(text));
}

void MhtWriter::add_block(const BlockTrace& block) {
  Impl& m = *m_impl;
  if (!m.in_kernel) throw std::logic_error("MhtWriter::add_block outside a kernel");
  if (block.warp_count() > m.warps_per_block)
    throw std::logic_error(fmt::format("block has {} warps, its launch {}", block.warp_count(), m.warps_per_block));
  m.encoder.add_block(block);
  m.counts.add(block);
  if (m.encoder.bytes().size() > kMaxChunkRawBytes)
    throw InputError({m.path.string(), 0, 0, -1}, "",
                     fmt::format("thread block ({},{},{}) alone holds more than {} MiB of records", block.index.x,
                                 block.index.y, block.index.z, kMaxChunkRawBytes >> 20U));
  if (m.encoder.bytes().size() >= m.options.chunk_bytes) m.flush_chunk();
}

void MhtWriter::end_kernel() {
  Impl& m = *m_impl;
  if (!m.in_kernel) return;
  m.flush_chunk();
  m.index.push_back({{"offset", m.kernel_offset},
                     {"end", m.pos},
                     {"chunks", m.chunks},
                     {"raw_bytes", m.raw_bytes},
                     {"stored_bytes", m.stored_bytes},
                     {"counts", counts_to_json(m.counts)}});
  m.in_kernel = false;
}

void MhtWriter::close() {
  Impl& m = *m_impl;
  if (m.closed) return;
  end_kernel();
  const std::uint64_t index_offset = m.pos;
  m.write_section(kIndexTag, 0, json_text(nlohmann::json{{"kernels", m.index}}));
  m.write_bytes(&index_offset, 8);
  m.write_bytes(kFooterMagic.data(), kFooterMagic.size());
  m.out.close();
  if (!m.out) m.fail(fmt::format("cannot finish {}", m.partial.string()));
  std::error_code ec;
  std::filesystem::rename(m.partial, m.path, ec);
  if (ec) m.fail(fmt::format("cannot rename {} to {}: {}", m.partial.string(), m.path.string(), ec.message()));
  m.closed = true;
}

std::size_t write_mht(TraceSource& source, const std::filesystem::path& path, MhtWriterOptions options) {
  MhtWriter writer(path, options);
  KernelLaunch launch;
  BlockTrace block;
  std::size_t launches = 0;
  while (source.next_kernel(launch)) {
    writer.begin_kernel(launch);
    while (source.next_block(block)) writer.add_block(block);
    writer.end_kernel();
    ++launches;
  }
  writer.close();
  return launches;
}

}  // namespace memhier
