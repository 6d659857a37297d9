// .mht: exact round trips for every address form, per-kernel access through the index, the size of regular traces,
// and a clear error with a byte offset for every kind of damage.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <zstd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <tuple>

#include "../traces/mht/mht_codec.h"
#include "../traces/mht/mht_layout.h"
#include "memhier/error.h"
#include "memhier/kernel_desc.h"
#include "memhier/mht.h"
#include "memhier/trace_json.h"

namespace {

using namespace memhier;
namespace fs = std::filesystem;

fs::path temp(const std::string& name) { return fs::temp_directory_path() / fmt::format("memhier_test_{}", name); }

KernelLaunch launch(const std::string& name, std::uint32_t blocks) {
  KernelLaunch k;
  k.name = name;
  k.grid = {blocks, 1, 1};
  k.block = {128, 1, 1};
  k.registers_per_thread = 32;
  k.windows.push_back({0x1000, 4096, 0.25, L2Property::persisting, L2Property::streaming});
  return k;
}

// A block mixing every record shape: strided, delta, raw (random), partial masks, no lane (predicated off), barriers,
// work, bulk copies.
BlockTrace random_block(std::mt19937_64& rng, std::uint32_t bx) {
  BlockTrace b;
  b.clear();
  b.index = {bx, 0, 0};
  for (int w = 0; w < 4; ++w) {
    b.begin_warp();
    for (int i = 0; i < 20; ++i) {
      WarpRecord r;
      r.pc = static_cast<std::uint32_t>(16 * (i % 7));
      const int shape = static_cast<int>(rng() % 7);
      if (shape == 5) {
        r.record = RecordKind::barrier;
        r.active_mask = 0xFFFFFFFFU;
        r.work = static_cast<std::uint32_t>(rng() % 3);
        b.add(r, {});
        continue;
      }
      r.active_mask = shape == 4   ? static_cast<std::uint32_t>(rng() | 1U)
                      : shape == 6 ? 0U
                                   : 0xFFFFFFFFU;  // 6: predicated off
      r.space = static_cast<AddressSpace>(rng() % kAddressSpaceCount);
      r.kind = static_cast<AccessKind>(rng() % kAccessKindCount);
      r.hint = static_cast<CacheHint>(rng() % kCacheHintCount);
      r.size = static_cast<std::uint8_t>(1U << (rng() % 5));
      r.work = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() % 100000 : 0);
      if (r.kind == AccessKind::bulk_copy) r.bulk_bytes = 4096;
      std::vector<std::uint64_t> a(static_cast<std::size_t>(r.active_lanes()));
      const std::uint64_t base = 0x7f0000000000ULL + (rng() % (1ULL << 30U));
      for (std::size_t l = 0; l < a.size(); ++l) {
        if (shape == 0)
          a[l] = base + (r.size << (i % 3)) * l;  // stride: gapless, dense or neither
        else if (shape == 1)
          a[l] = base - 128 * l;  // negative stride
        else if (shape == 2)
          a[l] = base + (rng() % 64) * 4;  // small deltas
        else
          a[l] = rng();  // raw
      }
      b.add(r, a);
    }
  }
  return b;
}

bool same(const BlockTrace& a, const BlockTrace& b) {
  if (!(a.index == b.index) || a.warp_begin != b.warp_begin || a.records.size() != b.records.size()) return false;
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    const WarpRecord& x = a.records[i];
    const WarpRecord& y = b.records[i];
    if (x.pc != y.pc || x.active_mask != y.active_mask || x.work != y.work || x.bulk_bytes != y.bulk_bytes ||
        x.record != y.record || x.space != y.space || x.kind != y.kind || x.hint != y.hint || x.size != y.size) {
      MESSAGE("record " << i << " differs: pc " << x.pc << "/" << y.pc << " mask " << x.active_mask << "/"
                        << y.active_mask << " work " << x.work << "/" << y.work << " size " << int(x.size) << "/"
                        << int(y.size));
      return false;
    }
    LaneBuffer buffer_a, buffer_b;  // for compact records (BlockTrace::compact_strided)
    auto la = a.lane_addresses(x, buffer_a);
    auto lb = b.lane_addresses(y, buffer_b);
    // A layout a record states (the decoder's, from a strided record's encoding) is what its addresses show, and
    // first_last() gives its first and last lane's, compact or not.
    for (const auto& [r, l, block] : {std::tuple{x, la, &a}, std::tuple{y, lb, &b}}) {
      const auto stated = static_cast<std::uint8_t>(r.layout & ~kLayoutFormBits);
      if ((r.layout & kLayoutKnown) != 0 && stated != lane_layout(l, r.size)) {
        MESSAGE("record " << i << " states layout " << int(r.layout) << ", its addresses show "
                          << int(lane_layout(l, r.size)));
        return false;
      }
      if (!l.empty() && block->first_last(r) != std::pair{l.front(), l.back()}) {
        MESSAGE("record " << i << ": first_last() is not its first and last lane's addresses");
        return false;
      }
    }
    if (!std::equal(la.begin(), la.end(), lb.begin(), lb.end())) {
      MESSAGE("record " << i << " addresses differ, first " << la[0] << "/" << lb[0] << " n " << la.size() << " idx "
                        << x.address_index << "/" << y.address_index << " pool " << a.addresses.size() << "/"
                        << b.addresses.size() << " mask " << x.active_mask);
      return false;
    }
  }
  if (a.lanes != b.lanes) {
    MESSAGE("lane counts differ: " << a.lanes << "/" << b.lanes);
    return false;
  }
  return true;
}

std::vector<BlockTrace> write_random(const fs::path& path, int kernels, std::uint32_t blocks, std::size_t chunk_bytes) {
  std::mt19937_64 rng(42);
  std::vector<BlockTrace> all;
  MhtWriter w(path, {chunk_bytes, 3});
  for (int k = 0; k < kernels; ++k) {
    w.begin_kernel(launch(fmt::format("k{}", k), blocks));
    for (std::uint32_t b = 0; b < blocks; ++b) {
      all.push_back(random_block(rng, b));
      w.add_block(all.back());
    }
    w.end_kernel();
  }
  w.close();
  return all;
}

std::string error_of(const fs::path& path) {
  try {
    MhtReader r(path);
    KernelLaunch k;
    BlockTrace b;
    while (r.next_kernel(k))
      while (r.next_block(b)) {
      }
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void write_all(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

std::uint64_t load_u64(const std::string& bytes, std::uint64_t at) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

// A section: its header, then `raw` as one zstd frame with its checksum and size, as the writer writes it.
std::string section(std::uint32_t tag, const std::string& raw) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  std::string frame(ZSTD_compressBound(raw.size()), '\0');
  const std::size_t n = ZSTD_compress2(cctx, frame.data(), frame.size(), raw.data(), raw.size());
  ZSTD_freeCCtx(cctx);
  REQUIRE(ZSTD_isError(n) == 0U);
  frame.resize(n);
  std::string header(mht::kSectionBytes, '\0');
  const std::uint32_t count = 0;
  const std::uint64_t stored = n, raw_bytes = raw.size();
  std::memcpy(header.data(), &tag, 4);
  std::memcpy(header.data() + 4, &count, 4);
  std::memcpy(header.data() + 8, &stored, 8);
  std::memcpy(header.data() + 16, &raw_bytes, 8);
  return header + frame;
}

// The text of the section at `at`.
std::string section_text(const std::string& bytes, std::uint64_t at) {
  std::string raw(load_u64(bytes, at + 16), '\0');
  const std::size_t n =
      ZSTD_decompress(raw.data(), raw.size(), bytes.data() + at + mht::kSectionBytes, load_u64(bytes, at + 8));
  REQUIRE(n == raw.size());
  return raw;
}

// `bytes`, a .mht whose first kernel's launch JSON `edit` changes: that section compressed again, the later offsets
// (index entries, footer) moved by its change in size. Makes files the writer will not write (it refuses what a
// reader refuses), to test the reader's own checks.
std::string edit_launch(const std::string& bytes, const std::function<std::string(std::string)>& edit) {
  const std::uint64_t kernel_at = mht::kHeaderBytes;
  const std::uint64_t kernel_end = kernel_at + mht::kSectionBytes + load_u64(bytes, kernel_at + 8);
  const std::string kernel = section(mht::kKernelTag, edit(section_text(bytes, kernel_at)));
  const std::uint64_t shift = kernel.size() - (kernel_end - kernel_at);  // modulo 2^64: added, it moves either way
  const std::uint64_t index_at = load_u64(bytes, bytes.size() - mht::kFooterBytes);
  auto index = nlohmann::json::parse(section_text(bytes, index_at));
  for (auto& k : index["kernels"]) {
    if (k["offset"] != kernel_at) k["offset"] = k["offset"].get<std::uint64_t>() + shift;
    k["end"] = k["end"].get<std::uint64_t>() + shift;
  }
  std::string out = bytes.substr(0, kernel_at) + kernel + bytes.substr(kernel_end, index_at - kernel_end) +
                    section(mht::kIndexTag, index.dump());
  const std::uint64_t new_index_at = index_at + shift;
  out.append(reinterpret_cast<const char*>(&new_index_at), 8);
  return out + bytes.substr(bytes.size() - 8);
}

}  // namespace

TEST_CASE("round trip: every record shape, several kernels, chunks of many sizes") {
  for (std::size_t chunk : {std::size_t{64}, std::size_t{4096}, std::size_t{4} << 20U}) {
    CAPTURE(chunk);
    const fs::path p = temp("roundtrip.mht");
    auto written = write_random(p, 3, 40, chunk);
    MhtReader r(p);
    REQUIRE(r.kernels().size() == 3);
    CHECK(r.kernels()[1].launch == launch("k1", 40));
    CHECK(r.kernels()[2].counts.blocks == 40);
    std::size_t i = 0, stated = 0;
    KernelLaunch k;
    BlockTrace b;
    while (r.next_kernel(k))
      while (r.next_block(b)) {
        REQUIRE(i < written.size());
        CHECK(same(b, written[i++]));
        for (const WarpRecord& rec : b.records) stated += (rec.layout & kLayoutKnown) != 0 ? 1 : 0;
      }
    CHECK(i == written.size());
    CHECK(stated > 0);                                    // strided records come back with their layout
    if (chunk == 64) CHECK(r.kernels()[0].chunks == 40);  // one block per chunk
  }
}

TEST_CASE("seek_kernel reads one kernel without the others") {
  const fs::path p = temp("seek.mht");
  auto written = write_random(p, 3, 10, 1024);
  MhtReader r(p);
  r.seek_kernel(2);
  KernelLaunch k;
  BlockTrace b;
  REQUIRE(r.next_kernel(k));
  CHECK(k.name == "k2");
  REQUIRE(r.next_block(b));
  CHECK(same(b, written[20]));
  CHECK_THROWS_AS(r.seek_kernel(3), InputError);
}

TEST_CASE("a coalesced copy costs well under 2 bytes per warp memory instruction") {
  const std::string yaml = R"(kernel: copy
params: {n: 1 << 20}
launch: {grid: 'ceil_div(n, 256)', block: 256, registers: 16}
arrays: {x: {element: 4, length: n}, y: {element: 4, length: n}}
body:
  - let: {i: blockIdx.x * blockDim.x + threadIdx.x}
  - load: x[i]
  - store: y[i]
)";
  const fs::path p = temp("copy.mht");
  {
    auto src = load_kernel_description_string(yaml, "copy.yaml");
    CHECK(write_mht(*src, p) == 1);
  }
  MhtReader r(p);
  const auto& k = r.kernels()[0];
  CHECK(k.counts.memory_instructions == 65536);
  const double per_instr = static_cast<double>(fs::file_size(p)) / static_cast<double>(k.counts.memory_instructions);
  CHECK(per_instr < 2.0);
}

TEST_CASE("an unfinished writer leaves nothing under the final name") {
  const fs::path p = temp("unfinished.mht");
  fs::remove(p);
  {
    MhtWriter w(p);
    w.begin_kernel(launch("x", 1));
  }
  CHECK_FALSE(fs::exists(p));
  fs::path partial = p;
  partial += ".partial";
  CHECK_FALSE(fs::exists(partial));
}

TEST_CASE("the writer refuses a launch the reader would refuse, naming where the launch came from") {
  const fs::path p = temp("refused.mht");
  fs::remove(p);
  // Found by fuzzing (sim_fuzz): 256 registers a thread were written, and the file then failed to read back.
  for (const auto& [change, what] : std::vector<std::pair<std::function<void(KernelLaunch&)>, std::string>>{
           {[](KernelLaunch& k) { k.registers_per_thread = 256; }, "'registers_per_thread' is 256"},
           {[](KernelLaunch& k) {
              k.block = {1100, 1, 1};
            },
            "block of 1100 threads"},
           {[](KernelLaunch& k) {
              k.grid = {4, 0, 1};
            },
            "'grid' must be three positive integers"},
           {[](KernelLaunch& k) { k.windows[0].hit_ratio = 1.5; }, "hit_ratio outside [0, 1]"}}) {
    CAPTURE(what);
    KernelLaunch k = launch("x", 4);
    k.source = "made/here.yaml";
    change(k);
    MhtWriter w(p);
    try {
      w.begin_kernel(k);
      FAIL("written");
    } catch (const InputError& e) {
      CHECK(e.where().file == "made/here.yaml");
      CHECK(std::string(e.what()).find(what) != std::string::npos);
      CHECK(std::string(e.what()).find(p.string()) != std::string::npos);
    }
  }
  CHECK_FALSE(fs::exists(p));
}

TEST_CASE("damaged files: every error names the file and a byte offset") {
  const fs::path good = temp("good.mht");
  write_random(good, 2, 8, 2048);
  const std::string bytes = read_all(good);
  const fs::path bad = temp("bad.mht");

  SUBCASE("truncated") {
    write_all(bad, bytes.substr(0, bytes.size() / 2));
    CHECK(error_of(bad).find("truncated") != std::string::npos);
  }
  SUBCASE("more registers than a thread can have") {  // once 4 billion of them, read as a negative count later
    {
      MhtWriter w(bad, {4096, 3});
      w.begin_kernel(launch("k", 1));  // 32 registers a thread
      w.end_kernel();
      w.close();
    }
    const std::string edited = edit_launch(read_all(bad), [](std::string text) {
      const std::string from = R"("registers_per_thread":32)";
      REQUIRE(text.find(from) != std::string::npos);
      return text.replace(text.find(from), from.size(), R"("registers_per_thread":4294967280)");
    });
    write_all(bad, edited);
    const std::string e = error_of(bad);
    CHECK(e.find(bad.string() + ": byte offset ") == 0);
    CHECK(e.find("field 'registers_per_thread' is 4294967280; a thread has 0 to 255") != std::string::npos);
  }
  SUBCASE("too short for a header") {
    write_all(bad, bytes.substr(0, 10));
    CHECK(error_of(bad).find("too short") != std::string::npos);
  }
  SUBCASE("wrong magic") {
    std::string b = bytes;
    b[1] = 'X';
    write_all(bad, b);
    CHECK(error_of(bad).find("byte offset 0: not a .mht trace") != std::string::npos);
  }
  SUBCASE("newer version") {
    std::string b = bytes;
    b[8] = 2;
    write_all(bad, b);
    CHECK(error_of(bad).find("written by a newer memhier") != std::string::npos);
  }
  SUBCASE("checksum mismatch in a chunk") {
    // The first chunk follows the first kernel section; flip a byte in the middle of its payload.
    MhtReader r(good);
    const std::uint64_t kernel_end = r.kernels()[0].end;
    std::string b = bytes;
    const std::uint64_t chunk_payload = kernel_end - r.kernels()[0].stored_bytes + 24 + 40;
    b[chunk_payload] = static_cast<char>(b[chunk_payload] ^ 0x5A);
    write_all(bad, b);
    const std::string e = error_of(bad);
    CHECK(e.find(bad.string()) != std::string::npos);
    CHECK(e.find("byte offset") != std::string::npos);
    CHECK((e.find("checksum") != std::string::npos || e.find("corrupt") != std::string::npos));
  }
  SUBCASE("impossible block count in a chunk header") {
    MhtReader r(good);
    const std::uint64_t chunk = r.kernels()[0].end - r.kernels()[0].stored_bytes;
    std::string b = bytes;
    const std::uint32_t huge = 0x7FFFFFFF;
    std::memcpy(b.data() + chunk + 4, &huge, 4);
    write_all(bad, b);
    CHECK(error_of(bad).find(fmt::format("byte offset {}: chunk claims", chunk)) != std::string::npos);
  }
  SUBCASE("chunk claiming more raw bytes than any chunk may hold") {
    MhtReader r(good);
    const std::uint64_t chunk = r.kernels()[0].end - r.kernels()[0].stored_bytes;
    std::string b = bytes;
    const std::uint64_t huge = 1ULL << 40U;
    std::memcpy(b.data() + chunk + 16, &huge, 8);
    write_all(bad, b);
    CHECK(error_of(bad).find("raw bytes") != std::string::npos);
  }
  SUBCASE("a directory and a missing file") {
    CHECK(error_of(fs::temp_directory_path()).find("directory") != std::string::npos);
    CHECK(error_of(temp("does-not-exist.mht")).find("cannot open") != std::string::npos);
  }
}

namespace {

// Offsets of the section headers of kernel `k`'s chunks (the kernel section first, then its chunks back to back).
std::vector<std::uint64_t> chunk_offsets(const std::string& bytes, const MhtKernelInfo& k) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t at = k.offset; at < k.end;) {
    std::uint64_t stored = 0;
    std::memcpy(&stored, bytes.data() + at + 8, 8);
    if (at != k.offset) out.push_back(at);
    at += 24 + stored;
  }
  return out;
}

// Reads every block with next_blocks() in requests of the given sizes, in turn, on `threads` threads.
std::vector<BlockTrace> read_in_requests(MhtReader& r, const std::vector<std::size_t>& sizes, int threads) {
  std::vector<BlockTrace> got;
  KernelLaunch k;
  std::size_t turn = 0;
  while (r.next_kernel(k)) {
    for (;;) {
      std::vector<BlockTrace> part(sizes[turn++ % sizes.size()]);
      const std::size_t n = r.next_blocks(part, threads);
      REQUIRE(n <= part.size());
      for (std::size_t i = 0; i < n; ++i) got.push_back(std::move(part[i]));
      if (n < part.size()) break;  // the launch's end
    }
  }
  return got;
}

std::string error_in_requests(const fs::path& p, const std::vector<std::size_t>& sizes, int threads) {
  try {
    MhtReader r(p);
    read_in_requests(r, sizes, threads);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("next_blocks decodes chunks in parallel into the blocks next_block gives, in their order") {
  const fs::path p = temp("parallel.mht");
  const auto written = write_random(p, 3, 40, 6000);  // a few blocks a chunk, many chunks a kernel
  {
    MhtReader r(p);
    REQUIRE(r.kernels()[0].chunks > 5);
    REQUIRE(r.kernels()[0].chunks < 40);
  }
  for (const int threads : {1, 2, 4, 7}) {
    for (const auto& sizes : {std::vector<std::size_t>{1}, {7, 1, 3}, {16}, {100}, {40}, {39, 2}}) {
      CAPTURE(threads);
      CAPTURE(sizes.front());
      MhtReader r(p);
      const auto got = read_in_requests(r, sizes, threads);
      REQUIRE(got.size() == written.size());
      for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(same(got[i], written[i]));
    }
  }
  // Block by block after a parallel read goes on inside the chunk it left part-read.
  MhtReader r(p);
  KernelLaunch k;
  REQUIRE(r.next_kernel(k));
  std::vector<BlockTrace> part(5);
  REQUIRE(r.next_blocks(part, 4) == 5);
  BlockTrace b;
  REQUIRE(r.next_block(b));
  CHECK(same(b, written[5]));
}

TEST_CASE("next_blocks on several threads reports a damaged chunk as reading block by block does") {
  const fs::path good = temp("parallel-good.mht");
  write_random(good, 1, 40, 6000);
  const std::string bytes = read_all(good);
  MhtReader info(good);
  const auto chunks = chunk_offsets(bytes, info.kernels()[0]);
  REQUIRE(chunks.size() > 5);
  const fs::path bad = temp("parallel-bad.mht");
  std::string b = bytes;
  SUBCASE("a checksum mismatch in the third chunk, another in the fifth") {
    for (const std::size_t c : {std::size_t{2}, std::size_t{4}}) b[chunks[c] + 24 + 20] ^= 0x5A;
    write_all(bad, b);
    const std::string serial = error_of(bad);
    CHECK(serial.find(fmt::format("byte offset {}:", chunks[2])) != std::string::npos);
    CHECK(error_in_requests(bad, {100}, 4) == serial);
    CHECK(error_in_requests(bad, {3, 9}, 3) == serial);
  }
  SUBCASE("a bad chunk header after a corrupt chunk: the corrupt chunk is reported") {
    b[chunks[2] + 24 + 20] ^= 0x5A;
    b[chunks[3]] = 'X';  // tag
    write_all(bad, b);
    const std::string serial = error_of(bad);
    CHECK(serial.find(fmt::format("byte offset {}:", chunks[2])) != std::string::npos);
    CHECK(error_in_requests(bad, {100}, 4) == serial);
  }
  SUBCASE("a bad chunk header alone") {
    b[chunks[3]] = 'X';
    write_all(bad, b);
    const std::string serial = error_of(bad);
    CHECK(serial.find(fmt::format("byte offset {}: expected a CHNK section", chunks[3])) != std::string::npos);
    CHECK(error_in_requests(bad, {100}, 4) == serial);
  }
}

TEST_CASE("records whose lanes are runs decode into a simulator's block as three pool entries, the same lanes") {
  // Runs of 2, 4, 8 and 16 lanes (a two-dimensional block's thread rows), each in a record of its own, and the same
  // with the last lane moved (kept whole), written as any record is and read with and without the request.
  const fs::path p = temp("runs.mht");
  BlockTrace written;
  written.clear();
  written.index = {0, 0, 0};
  written.begin_warp();
  for (const unsigned length : {2U, 4U, 8U, 16U})
    for (const bool off : {false, true}) {
      WarpRecord r;
      r.pc = 16 * length + (off ? 8 : 0);
      r.active_mask = 0xFFFFFFFFU;
      std::array<std::uint64_t, kWarpSize> a{};
      for (unsigned l = 0; l < kWarpSize; ++l) a[l] = 0x7f0000001000ULL + (l % length) * 4 + (l / length) * 4096;
      if (off) a[31] += 4;
      written.add(r, a);
    }
  {
    MhtWriter w(p, {std::size_t{1} << 16U, 3});
    w.begin_kernel(launch("runs", 1));
    w.add_block(written);
    w.end_kernel();
    w.close();
  }
  for (const bool ask : {true, false}) {
    CAPTURE(ask);
    MhtReader r(p);
    KernelLaunch k;
    REQUIRE(r.next_kernel(k));
    BlockTrace b;
    b.compact_strided = ask;
    REQUIRE(r.next_block(b));
    REQUIRE(same(b, written));
    std::vector<unsigned> runs;
    for (const WarpRecord& rec : b.records)
      if ((rec.layout & kLayoutRuns) != 0) runs.push_back(b.runs(rec).length);
    CHECK(runs == (ask ? std::vector<unsigned>{2, 4, 8, 16} : std::vector<unsigned>{}));
    CHECK(b.addresses.size() == (ask ? 4 * 3 + 4 * 32 : 8 * 32));
  }
}

TEST_CASE(
    "records repeating an earlier record's deltas decode as it did from their own first lane, whole or in parts") {
  // Two blocks of two warps. Record after record the same runs (a matmul's rows: the decoder takes a record whose
  // delta bytes repeat those of the last record in its pc's slot as that record's runs, and skips it in parts by
  // them), between them: other runs at another pc, the same deltas with another size, with one lane fewer, in a pc of
  // another predictor slot that shares the deltas' slot, a gather's deltas at the same pc and then the runs again. Read
  // whole and in parts of 3 records, with and without compact records, every record is what the lanes written give
  // (compact_last_runs() of each in a block that asks for it).
  const fs::path p = temp("deltas.mht");
  auto lanes_of = [](std::uint64_t first, unsigned length, std::uint64_t stride, std::uint64_t step) {
    std::array<std::uint64_t, kWarpSize> a{};
    for (unsigned l = 0; l < kWarpSize; ++l) a[l] = first + (l % length) * stride + (l / length) * step;
    return a;
  };
  std::vector<BlockTrace> written(2);
  std::mt19937_64 rng(11);
  for (std::uint32_t bx = 0; bx < 2; ++bx) {
    BlockTrace& b = written[bx];
    b.clear();
    b.index = {bx, 0, 0};
    for (int w = 0; w < 2; ++w) {
      b.begin_warp();
      for (std::uint64_t k = 0; k < 12; ++k) {
        WarpRecord r;
        r.active_mask = 0xFFFFFFFFU;
        r.size = 4;
        r.pc = 0x40;
        const std::uint64_t at = 0x7f0000000000ULL + 0x100000 * bx + 0x10000 * static_cast<std::uint64_t>(w);
        b.add(r, lanes_of(at + 4 * k, 16, 0, 1024));  // A[row][k]: two rows
        r.pc = 0x80;
        b.add(r, lanes_of(at + 0x8000 + 1024 * k, 16, 4, 0));  // B[k][col]: one row twice
        if (k % 4 == 1) {
          r.pc = 0x40;
          r.size = 8;
          b.add(r, lanes_of(at + 64 * k, 16, 0, 1024));  // the same deltas, 8-byte lanes
          r.size = 4;
          // Lanes 0-30: their deltas are the first 30 of the runs', and a raw record after them (the tag byte 0,
          // as the runs' last delta) makes the bytes the same as far as the runs' deltas go.
          const std::array<std::uint64_t, kWarpSize> a = lanes_of(at + 8 * k, 16, 0, 1024);
          WarpRecord fewer = r;
          fewer.active_mask = 0x7FFFFFFFU;
          b.add(fewer, {a.data(), a.size() - 1});
          WarpRecord raw = r;
          raw.pc = 0x300;
          raw.active_mask = 0xFFFFU;
          std::array<std::uint64_t, 16> far{};
          for (std::uint64_t& x : far) x = rng() >> 4U;  // deltas of 8 bytes and more: the raw form
          b.add(raw, far);
          r.pc = 0x40 + 32 * 4;  // another predictor slot (48), the same slot of deltas (48 mod 32)
          b.add(r, lanes_of(at + 0x4000 + 12 * k, 16, 0, 1024));
          r.pc = 0x40;
          std::array<std::uint64_t, kWarpSize> gather{};
          for (std::uint64_t& x : gather) x = at + 4 * (rng() % 4096);
          b.add(r, gather);
        }
      }
    }
  }
  {
    MhtWriter w(p, {std::size_t{1} << 16U, 3});
    w.begin_kernel(launch("deltas", 2));
    for (const BlockTrace& b : written) w.add_block(b);
    w.end_kernel();
    w.close();
  }
  for (const bool ask : {true, false}) {
    CAPTURE(ask);
    std::vector<BlockTrace> expected(2);
    for (std::size_t i = 0; i < 2; ++i) {  // the records as the decoder without its memory of deltas gives them
      BlockTrace& e = expected[i];
      e.compact_strided = ask;
      e.clear();
      e.index = written[i].index;
      for (std::size_t w = 0; w < written[i].warp_count(); ++w) {
        e.begin_warp();
        for (const WarpRecord& r : written[i].warp(w)) {
          e.add(r, written[i].lane_addresses(r));
          e.compact_last_runs();
        }
      }
    }
    std::size_t runs = 0;
    for (const WarpRecord& r : expected[0].records) runs += (r.layout & kLayoutRuns) != 0 ? 1 : 0;
    CHECK(runs == (ask ? 2 * (2 * 12 + 2 * 3) : 0));  // every record but the gathers, the 31-lane and the raw ones
    for (const std::size_t part : {std::size_t{0}, std::size_t{3}}) {
      CAPTURE(part);
      MhtReader r(p);
      KernelLaunch k;
      REQUIRE(r.next_kernel(k));
      for (std::size_t i = 0; i < 2; ++i) {
        BlockTrace b;
        b.compact_strided = ask;
        b.part_records = part;
        REQUIRE(r.next_block(b));
        if (part == 0) {
          CHECK(same(b, expected[i]));
          CHECK(b.addresses == expected[i].addresses);  // runs as three entries, the same three
          for (std::size_t n = 0; n < b.records.size(); ++n)
            CHECK(b.records[n].layout == expected[i].records[n].layout);
          continue;
        }
        REQUIRE(b.rest);
        // A warp's records with their lanes written out, and the layouts (form bits included) they came with.
        struct Warp {
          BlockTrace records;
          std::vector<std::uint8_t> layouts;
          Warp() {
            records.clear();
            records.begin_warp();
          }
          void take(const BlockTrace& from, std::size_t w) {
            for (const WarpRecord& x : from.warp(w)) {
              LaneBuffer buffer;
              records.add(x, from.lane_addresses(x, buffer));
              layouts.push_back(x.layout);
            }
          }
        };
        for (std::size_t w = 0; w < b.warp_count(); ++w) {
          Warp got, want;
          got.take(b, w);
          BlockTrace more;
          more.compact_strided = ask;
          while (b.rest->next(w, more)) got.take(more, 0);
          want.take(expected[i], w);
          CHECK(same(got.records, want.records));
          CHECK(got.layouts == want.layouts);
        }
      }
    }
  }
}

TEST_CASE("a block that asks for compact strided records holds two pool entries for each, and the same addresses") {
  const fs::path p = temp("compact.mht");
  const auto written = write_random(p, 2, 40, 6000);
  for (const int threads : {1, 3}) {
    CAPTURE(threads);
    MhtReader r(p);
    KernelLaunch k;
    std::size_t i = 0, compact = 0, strided_lanes = 0;
    while (r.next_kernel(k)) {
      std::vector<BlockTrace> got(40);
      for (BlockTrace& b : got) b.compact_strided = true;
      REQUIRE(r.next_blocks(got, threads) == 40);
      for (const BlockTrace& b : got) {
        REQUIRE(same(b, written[i++]));
        REQUIRE(b.compact_strided);  // decoding keeps the block's request
        std::size_t pool = 0;
        for (const WarpRecord& rec : b.records) {
          if (!rec.is_memory()) continue;
          const bool is_compact = (rec.layout & kLayoutCompact) != 0;
          pool += is_compact ? ((rec.layout & kLayoutRuns) != 0 ? 3 : 2) : static_cast<std::size_t>(rec.active_lanes());
          if (is_compact) {
            CHECK_THROWS_AS((void)b.lane_addresses(rec), std::logic_error);  // its lanes need a LaneBuffer
            ++compact;
            strided_lanes += static_cast<std::size_t>(rec.active_lanes());
            CHECK(rec.active_lanes() > 1);  // a one-lane record is kept as it is
          }
        }
        CHECK(b.addresses.size() == pool);
      }
    }
    CHECK(i == written.size());
    // random_block's shapes 0 and 1 (a sixth of its 80 records each, of 32 lanes) are strided.
    CHECK(compact > 100);
    CHECK(strided_lanes == 32 * compact);
  }
  // Without the request, the same file gives every lane's address.
  MhtReader r(p);
  KernelLaunch k;
  REQUIRE(r.next_kernel(k));
  BlockTrace b;
  REQUIRE(r.next_block(b));
  CHECK(b.addresses.size() == b.lanes);
  CHECK(same(b, written[0]));
}

TEST_CASE("numbers of every length from 1 to 10 bytes decode exactly, in a chunk's body and at its end") {
  // Lane deltas of alternating sign and magnitudes 2^0 to 2^62: zigzagged, numbers of 1 to 10 bytes, which the
  // decoder reads in line while 10 bytes of the chunk remain and through get_varint() (1 and 2 bytes in line, longer
  // ones byte by byte) in the last 10, up to the chunk's last byte.
  BlockTrace block;
  block.clear();
  block.index = {1u << 28U, 300, 0};  // 5- and 2-byte block indices
  block.begin_warp();
  std::vector<std::uint64_t> expected;
  for (unsigned r = 0; r < 10; ++r) {
    WarpRecord rec;
    rec.pc = 1U << (3 * r);               // 1 to 4 bytes
    rec.work = r == 9 ? 0xFFFFFFFFU : 0;  // 5 bytes
    rec.active_mask = 0xFFFFFFFFU;
    rec.size = 4;
    std::vector<std::uint64_t> a(32);
    a[0] = 0x7f0000000000ULL + r;
    for (std::size_t l = 1; l < a.size(); ++l) {
      const std::uint64_t d = std::uint64_t{1} << ((7 * l + r) % 63);
      a[l] = l % 2 == 0 ? a[l - 1] + d : a[l - 1] - d;
    }
    expected.insert(expected.end(), a.begin(), a.end());
    block.add(rec, a);
  }
  mht::ChunkEncoder enc;
  enc.reset();
  enc.add_block(block);
  const std::string bytes = enc.bytes();
  REQUIRE(bytes.size() < 10 * 32 * 8);  // the deltas' form, not raw 8-byte addresses
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  // The whole chunk, then the same bytes with 1 to 16 bytes of another block after them (the decoder reads no further
  // than the numbers it needs).
  for (std::size_t extra = 0; extra <= 16; ++extra) {
    CAPTURE(extra);
    std::string padded = bytes + std::string(extra, '\x80');
    mht::ChunkDecoder dec(reinterpret_cast<const std::uint8_t*>(padded.data()), padded.size(), 1);
    BlockTrace out;
    dec.next_block(out);
    CHECK(dec.offset() == bytes.size());
    CHECK(out.index == block.index);
    REQUIRE(out.records.size() == 10);
    std::vector<std::uint64_t> got;
    for (const WarpRecord& rec : out.records) {
      LaneBuffer buffer;
      const auto lanes = out.lane_addresses(rec, buffer);
      got.insert(got.end(), lanes.begin(), lanes.end());
    }
    CHECK(got == expected);
    CHECK(out.records[9].work == 0xFFFFFFFFU);
    CHECK(out.records[9].pc == 1U << 27U);
  }
  // Cut anywhere inside, the chunk fails with an offset inside it, never reading past its end.
  for (std::size_t cut = 1; cut < bytes.size(); ++cut) {
    mht::ChunkDecoder dec(data, cut, 1);
    BlockTrace out;
    try {
      dec.next_block(out);
      FAIL("a chunk cut at " << cut << " of " << bytes.size() << " bytes decoded");
    } catch (const mht::DecodeError& e) {
      CHECK(e.offset <= cut);
    }
  }
}

TEST_CASE("a block read in parts: its warps' first records, then the rest part by part, are the whole block's") {
  // Warps of 300 to 700 records: strided loads whose first address the predictor carries from record to record and
  // from warp to warp, gathers, a barrier; written in chunks of 4 KiB and of 64 KiB (several blocks a chunk).
  const std::string yaml = R"(kernel: long
params: {n: 1 << 16}
launch: {grid: 12, block: 96, registers: 32}
arrays: {x: {element: 4, length: n}, y: {element: 8, length: n}}
body:
  - let: {i: blockIdx.x * blockDim.x + threadIdx.x}
  - for: k
    to: 150 + 50 * (blockIdx.x % 5)
    do:
      - load: x[(i + 96 * k) % n]
      - load: 'y[urand(3, i, k, n)]'
  - barrier
  - store: x[i]
)";
  auto seen = [](const BlockTrace& b, std::size_t w,
                 std::vector<std::pair<WarpRecord, std::vector<std::uint64_t>>>& out) {
    for (const WarpRecord& r : b.warp(w)) {
      LaneBuffer buffer;
      const std::span<const std::uint64_t> a = b.lane_addresses(r, buffer);
      out.emplace_back(r, std::vector<std::uint64_t>(a.begin(), a.end()));
    }
  };
  auto same = [](const std::vector<std::pair<WarpRecord, std::vector<std::uint64_t>>>& a,
                 const std::vector<std::pair<WarpRecord, std::vector<std::uint64_t>>>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const WarpRecord &x = a[i].first, &y = b[i].first;
      if (x.pc != y.pc || x.active_mask != y.active_mask || x.kind != y.kind || x.record != y.record ||
          x.layout != y.layout || a[i].second != b[i].second)
        return false;
    }
    return true;
  };
  for (const std::size_t chunk : {std::size_t{4} << 10U, std::size_t{64} << 10U}) {
    const fs::path p = temp("long.mht");
    {
      auto src = load_kernel_description_string(yaml, "long.yaml");
      MhtWriterOptions o;
      o.chunk_bytes = chunk;
      REQUIRE(write_mht(*src, p, o) == 1);
    }
    std::vector<std::vector<std::vector<std::pair<WarpRecord, std::vector<std::uint64_t>>>>> whole;
    {
      MhtReader r(p);
      KernelLaunch k;
      REQUIRE(r.next_kernel(k));
      BlockTrace b;
      b.compact_strided = true;
      while (r.next_block(b)) {
        CHECK(!b.rest);
        whole.emplace_back(b.warp_count());
        for (std::size_t w = 0; w < b.warp_count(); ++w) seen(b, w, whole.back()[w]);
      }
    }
    REQUIRE(whole.size() == 12);
    for (const std::size_t part : {std::size_t{5}, std::size_t{128}}) {
      for (const int threads : {1, 3}) {
        CAPTURE(chunk);
        CAPTURE(part);
        CAPTURE(threads);
        std::vector<BlockTrace> blocks(12);
        {
          MhtReader r(p);
          KernelLaunch k;
          REQUIRE(r.next_kernel(k));
          for (BlockTrace& b : blocks) {
            b.compact_strided = true;
            b.part_records = part;
          }
          for (std::size_t at = 0; at < blocks.size(); at += 5)  // several requests: chunks read after others
            REQUIRE(r.next_blocks({blocks.data() + at, std::min<std::size_t>(5, blocks.size() - at)}, threads) ==
                    std::min<std::size_t>(5, blocks.size() - at));
        }  // the reader gone: the parts decode from the chunks their blocks keep
        for (std::size_t i = 0; i < blocks.size(); ++i) {
          REQUIRE(blocks[i].rest);
          for (std::size_t w = 0; w < blocks[i].warp_count(); ++w) {
            std::vector<std::pair<WarpRecord, std::vector<std::uint64_t>>> got;
            seen(blocks[i], w, got);
            CHECK(got.size() == part);
            BlockTrace more;
            more.compact_strided = true;
            while (blocks[i].rest->next(w, more)) {
              CHECK(more.records.size() <= part);
              seen(more, 0, got);
            }
            CHECK(same(got, whole[i][w]));
          }
        }
      }
    }
  }
}

TEST_CASE("a block read in parts fails on a damaged record where the whole block does, and else decodes the same") {
  // Three warps of 30 records in every form (strided, gather deltas, raw addresses, a barrier, a predicated-off load,
  // a bulk copy, partial masks, work), encoded, then each byte of the chunk changed in turn (three ways). Read whole
  // and read in parts of 4 (the later parts checked as they are passed, then decoded alone from their spans), each
  // changed chunk fails with the same message at the same byte both ways, or decodes to the same records.
  BlockTrace block;
  block.clear();
  block.index = {3, 0, 0};
  std::mt19937_64 rng(7);
  for (int w = 0; w < 3; ++w) {
    block.begin_warp();
    for (int i = 0; i < 30; ++i) {
      WarpRecord r;
      r.pc = 0x10 * static_cast<std::uint32_t>(1 + i % 6);
      r.active_mask = i % 5 == 4 ? 0x0000FFFFU : 0xFFFFFFFFU;
      r.work = static_cast<std::uint32_t>(i % 3);
      std::vector<std::uint64_t> a;
      const std::uint64_t base = 0x100000 * static_cast<std::uint64_t>(w + 1) + 0x80 * static_cast<std::uint64_t>(i);
      for (unsigned l = 0; l < 32; ++l)
        if ((r.active_mask >> l & 1U) != 0) {
          if (i % 6 == 1)
            a.push_back(base + (rng() % 4096) * 4);  // a gather: deltas
          else if (i % 6 == 2)
            a.push_back(rng() & ~std::uint64_t{7});  // far apart: raw
          else
            a.push_back(base + 4 * l);  // strided
        }
      if (i % 6 == 3) {
        r.record = RecordKind::barrier;
        a.clear();
      } else if (i % 6 == 4) {
        r.active_mask = 0;  // predicated off
        a.clear();
      } else if (i % 6 == 5 && w == 1) {
        r.kind = AccessKind::bulk_copy;
        r.size = 16;
        r.bulk_bytes = 4096;
        r.active_mask = 1;
        a.assign(1, base);
      }
      block.add(r, a);
    }
  }
  mht::ChunkEncoder enc;
  enc.reset();
  enc.add_block(block);
  const std::string bytes = enc.bytes();
  struct Outcome {
    std::string error;
    std::vector<std::vector<std::pair<WarpRecord, std::vector<std::uint64_t>>>> warps;
  };
  auto records_of = [](const BlockTrace& b, std::size_t w, auto& out) {
    for (const WarpRecord& r : b.warp(w)) {
      LaneBuffer buffer;
      const auto a = b.lane_addresses(r, buffer);
      out.emplace_back(r, std::vector<std::uint64_t>(a.begin(), a.end()));
    }
  };
  auto read = [&](const std::string& chunk, bool parts) {
    Outcome o;
    const auto* data = reinterpret_cast<const std::uint8_t*>(chunk.data());
    mht::ChunkDecoder d(data, chunk.size(), 3);
    BlockTrace b;
    b.part_records = parts ? 4 : 0;
    std::vector<mht::PartSpan> rest;
    try {
      d.next_block(b, &rest);
    } catch (const mht::DecodeError& e) {
      o.error = fmt::format("{}: {}", e.offset, e.message);
      return o;
    }
    o.warps.resize(b.warp_count());
    for (std::size_t w = 0; w < b.warp_count(); ++w) records_of(b, w, o.warps[w]);
    for (const mht::PartSpan& s : rest) {
      mht::ChunkDecoder p(data + s.begin, s.end - s.begin, 3);
      BlockTrace part;
      part.clear();
      part.begin_warp();
      p.part(part, s.predictor, s.records);  // throws: a failure the first read let through
      records_of(part, 0, o.warps[s.warp]);
    }
    return o;
  };
  auto same = [](const Outcome& a, const Outcome& b) {
    if (a.error != b.error || a.warps.size() != b.warps.size()) return false;
    for (std::size_t w = 0; w < a.warps.size(); ++w) {
      if (a.warps[w].size() != b.warps[w].size()) return false;
      for (std::size_t i = 0; i < a.warps[w].size(); ++i) {
        const WarpRecord &x = a.warps[w][i].first, &y = b.warps[w][i].first;
        if (x.pc != y.pc || x.active_mask != y.active_mask || x.work != y.work || x.kind != y.kind ||
            x.record != y.record || x.bulk_bytes != y.bulk_bytes || a.warps[w][i].second != b.warps[w][i].second)
          return false;
      }
    }
    return true;
  };
  const Outcome intact = read(bytes, true);
  REQUIRE(intact.error.empty());
  REQUIRE(intact.warps.size() == 3);
  CHECK(same(intact, read(bytes, false)));
  int failed = 0;
  for (std::size_t at = 0; at < bytes.size(); ++at)
    for (const unsigned flip : {0x01U, 0x80U, 0xFFU}) {
      std::string changed = bytes;
      changed[at] = static_cast<char>(static_cast<unsigned char>(changed[at]) ^ flip);
      CAPTURE(at);
      CAPTURE(flip);
      const Outcome whole = read(changed, false);
      Outcome parts;
      REQUIRE_NOTHROW(parts = read(changed, true));
      CHECK(same(whole, parts));
      failed += whole.error.empty() ? 0 : 1;
    }
  CHECK(failed > 100);  // the changes reach the checks
}

TEST_CASE("a name that is not UTF-8 is stored with U+FFFD, and utf8_text() makes the same of a pattern") {
  // 0xE9 is Latin-1's e-acute: no UTF-8 sequence starts with it followed by 'x'.
  CHECK(utf8_text("caf\xE9") == "caf\xEF\xBF\xBD");
  CHECK(utf8_text("caf\xE9x") == "caf\xEF\xBF\xBDx");
  CHECK(utf8_text("caf\xC3\xA9") == "caf\xC3\xA9");  // UTF-8 itself stays
  CHECK(utf8_text("gemm<float, 128>") == "gemm<float, 128>");
  CHECK(json_text(nlohmann::json("caf\xE9")) == "\"" + utf8_text("caf\xE9") + "\"");  // as a .mht writes it
}
