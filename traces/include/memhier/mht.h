#pragma once
// The .mht binary trace file: versioned, chunked, zstd-compressed, checksummed, indexed by kernel, streamable.
// Layout: docs/mht-format.md. The writer holds one chunk in memory, the reader one, or those of one next_blocks() call,
// whatever the trace length.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "memhier/trace.h"

struct ZSTD_DCtx_s;  // zstd.h's ZSTD_DCtx

namespace memhier {

inline constexpr std::uint16_t kMhtVersionMajor = 1;
inline constexpr std::uint16_t kMhtVersionMinor = 0;

struct MhtWriterOptions {
  std::size_t chunk_bytes = 64U << 10U;  // raw record bytes per chunk before it is compressed and written
  int compression_level = 3;             // zstd level
};

// Writes launches and blocks as they come. The file appears under its name only after close() succeeds (it is
// written as NAME.partial first), so a failed run never leaves a truncated trace or clobbers anything half-way.
class MhtWriter {
 public:
  explicit MhtWriter(std::filesystem::path path, MhtWriterOptions options = {});
  ~MhtWriter();
  MhtWriter(const MhtWriter&) = delete;
  MhtWriter& operator=(const MhtWriter&) = delete;

  void begin_kernel(const KernelLaunch& launch);
  void add_block(const BlockTrace& block);
  void end_kernel();
  void close();  // writes the index and footer, then renames into place

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// Copies every launch of `source` into a new .mht file; returns the launches written.
std::size_t write_mht(TraceSource& source, const std::filesystem::path& path, MhtWriterOptions options = {});

// Per-kernel entry of the index: the launch, its totals and its size raw and on disk.
struct MhtKernelInfo {
  KernelLaunch launch;
  TraceCounts counts;
  std::uint64_t raw_bytes = 0;     // record bytes before compression
  std::uint64_t stored_bytes = 0;  // bytes in the file for this kernel's chunks
  std::uint64_t chunks = 0;
  std::uint64_t offset = 0;  // of its kernel section
  std::uint64_t end = 0;     // one past its last chunk
};

// Reads a .mht file. Every malformed input raises InputError naming the file and byte offset.
class MhtReader final : public TraceSource {
 public:
  explicit MhtReader(std::filesystem::path path);
  ~MhtReader() override;

  [[nodiscard]] const std::vector<MhtKernelInfo>& kernels() const { return m_kernels; }
  [[nodiscard]] std::uint64_t file_size() const { return m_file_size; }
  [[nodiscard]] std::uint16_t version_minor() const { return m_version_minor; }
  // The next next_kernel() returns kernel `index` (0-based, in file order).
  void seek_kernel(std::size_t index);

  bool next_kernel(KernelLaunch& launch) override;
  bool next_block(BlockTrace& block) override;
  // Decodes whole chunks on up to `threads` threads at once (they decode independently: docs/mht-format.md).
  std::size_t next_blocks(std::span<BlockTrace> out, int threads) override;

 private:
  struct Chunk;
  void read_header();
  void read_index();
  // Reads the header and stored bytes of the current kernel's next chunk into `c`; false past its last one.
  bool read_chunk(Chunk& c);
  // Decompresses `c` (read_chunk()) with `dctx` and sets up its decoder.
  void decompress(Chunk& c, ::ZSTD_DCtx_s* dctx) const;
  // The next block of `c` into `block`, checked against the launch.
  void decode_block(Chunk& c, BlockTrace& block) const;
  [[noreturn]] void fail(std::uint64_t offset, const std::string& message) const;

  std::filesystem::path m_path;
  std::ifstream m_in;
  std::uint64_t m_file_size = 0;
  std::uint16_t m_version_minor = 0;
  std::vector<MhtKernelInfo> m_kernels;
  std::size_t m_next_kernel = 0;
  std::size_t m_current = SIZE_MAX;
  std::uint64_t m_pos = 0;          // file offset of the next section of the current kernel
  std::string m_compressed, m_raw;  // of metadata sections
  std::uint64_t m_blocks_left_in_chunk = 0;
  struct DecoderState;
  std::unique_ptr<DecoderState> m_decoder;
};

}  // namespace memhier
