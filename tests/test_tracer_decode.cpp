// The tracer's record decoding (tools/tracer/tracer_decode.cpp), fed hand-built record streams as the device patches
// would write them: records of different warps interleaved in time, async copies, barriers, bulk copies, sampling.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "memhier/error.h"
#include "memhier/mht.h"
#include "tracer_decode.h"
#include "tracer_record.h"

namespace {
namespace fs = std::filesystem;
using namespace memhier;
using namespace memhier::tracer;

struct Stream {
  std::vector<unsigned char> bytes;
  void add(std::uint32_t block, std::uint16_t warp, RecordType type, RecordSpace space, std::uint32_t mask,
           std::uint64_t pc, std::vector<std::uint64_t> values, std::uint32_t bulk = 0) {
    RecordHeader h{};
    h.pc = pc;
    h.block = block;
    h.warp = warp;
    h.type = type;
    h.space = space;
    h.mask = mask;
    h.size = type == kBulkCopy ? 16 : 4;
    h.address_count = static_cast<std::uint16_t>(values.size());
    h.bulk_bytes = bulk;
    const auto* head = reinterpret_cast<const unsigned char*>(&h);
    bytes.insert(bytes.end(), head, head + sizeof h);
    for (std::uint64_t v : values)
      for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<unsigned char>(v >> (8 * i)));
  }
};

KernelLaunch two_by_two() {
  KernelLaunch k;
  k.name = fmt::format("k{}", 2);
  k.grid = {2, 1, 1};
  k.block = {64, 1, 1};
  return k;
}

std::vector<BlockTrace> read_back(const fs::path& path) {
  MhtReader r(path);
  KernelLaunch k;
  std::vector<BlockTrace> blocks;
  REQUIRE(r.next_kernel(k));
  BlockTrace b;
  while (r.next_block(b)) blocks.push_back(b);
  return blocks;
}

}  // namespace

TEST_CASE("tracer decode: interleaved warps come out per block and warp, in issue order, pcs function-relative") {
  Stream s;
  s.add(1, 1, kLoad, kGlobal, 0x3, 0x1010, {0x100, 0x104});
  s.add(0, 0, kLoad, kGlobal, 0x1, 0x1010, {0x200});
  s.add(1, 1, kStore, kGlobal, 0x1, 0x1020, {0x300});
  s.add(0, 1, kBarrier, kGlobal, 0xFFFFFFFF, 0x1030, {});
  s.add(1, 0, kAsyncCopy, kGlobal, 0x3, 0x1040, {0x400, 0x410, 0x0, 0x10});
  const fs::path out = fs::temp_directory_path() / "memhier_tracer_decode.mht";
  {
    MhtWriter w(out);
    const DecodeStats st = write_launch(w, two_by_two(), 0x1000, 1, s.bytes);
    w.close();
    CHECK(st.blocks == 2);
    CHECK(st.records == 6);  // the async copy becomes a global read and a shared write
    CHECK(st.lane_accesses == 2 + 1 + 1 + 2 + 2);
  }
  const auto blocks = read_back(out);
  REQUIRE(blocks.size() == 2);
  REQUIRE(blocks[0].warp_count() == 2);
  CHECK(blocks[0].warp(0).size() == 1);
  CHECK(blocks[0].warp(0)[0].pc == 0x10);
  CHECK(blocks[0].warp(1)[0].record == RecordKind::barrier);
  const auto w10 = blocks[1].warp(0);
  REQUIRE(w10.size() == 2);
  CHECK(w10[0].kind == AccessKind::async_copy);
  CHECK(w10[0].space == AddressSpace::global);
  CHECK(w10[0].hint == CacheHint::none);  // 4-byte cp.async goes through L1 (.ca)
  CHECK(w10[1].space == AddressSpace::shared);
  CHECK(blocks[1].lane_addresses(w10[1])[1] == 0x10);
  const auto w11 = blocks[1].warp(1);
  REQUIRE(w11.size() == 2);
  CHECK(w11[0].kind == AccessKind::load);
  CHECK(w11[1].kind == AccessKind::store);  // program order kept although block 0's records came in between
  CHECK(blocks[1].lane_addresses(w11[0])[1] == 0x104);
  fs::remove(out);
}

TEST_CASE("tracer decode: sampling keeps every N-th block; bulk copies keep their size; bad records are errors") {
  Stream s;
  KernelLaunch k = two_by_two();
  k.grid = {4, 1, 1};
  s.add(0, 0, kBulkCopy, kGlobal, 0x1, 0, {0x1000}, 4096);
  s.add(2, 0, kLoad, kGlobal, 0x1, 0, {0x2000});
  const fs::path out = fs::temp_directory_path() / "memhier_tracer_sample.mht";
  {
    MhtWriter w(out);
    CHECK(write_launch(w, k, 0, 2, s.bytes).blocks == 2);
    w.close();
  }
  const auto blocks = read_back(out);
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[1].index.x == 2);
  CHECK(blocks[0].warp(0)[0].bulk_bytes == 4096);
  fs::remove(out);

  Stream bad;
  bad.add(7, 0, kLoad, kGlobal, 0x1, 0, {0x1});  // block 7 of a 4-block grid
  MhtWriter w(fs::temp_directory_path() / "memhier_tracer_bad.mht");
  CHECK_THROWS_AS(write_launch(w, k, 0, 1, bad.bytes), InputError);
  bad.bytes.resize(bad.bytes.size() - 4);  // truncated
  CHECK_THROWS_AS(write_launch(w, k, 0, 1, bad.bytes), InputError);
}

TEST_CASE("tracer decode: kernel names lose scopes, templates and parameters; device names map to arch files") {
  CHECK(demangled_name("_ZN5suite12_GLOBAL__N_114coalesced_copyEPKfPfx") == "coalesced_copy");
  CHECK(demangled_name("_ZN5suite12_GLOBAL__N_116transpose_sharedILi33EEEvPKfPfi") == "transpose_shared");
  CHECK(demangled_name("plain_c_kernel") == "plain_c_kernel");
  CHECK(arch_from_device_name("NVIDIA H100 80GB HBM3") == "h100");
  CHECK(arch_from_device_name("NVIDIA H200") == "h200");
  CHECK(arch_from_device_name("Tesla T4").empty());
}
