// Accel-Sim import of hand-written traces (all three address modes, line info, tracer versions 3 to 5, the quirks)
// and export -> import round trips.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "memhier/accelsim.h"
#include "memhier/error.h"
#include "memhier/kernel_desc.h"

namespace {

using namespace memhier;
namespace fs = std::filesystem;

fs::path make_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / fmt::format("memhier_accelsim_{}", name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

std::string header(int version, int lineinfo) {
  return "-kernel name = _Z4copyPfS_\n-kernel id = 1\n-grid dim = (2,1,1)\n-block dim = (64,1,1)\n-shmem = 1024\n"
         "-nregs = 18\n-binary version = 90\n-cuda stream id = 0\n-shmem base_addr = 0x00007f2c00000000\n"
         "-local mem base_addr = 0x00007f2c01000000\n-nvbit version = 1.5.5\n-accelsim tracer version = " +
         std::to_string(version) + "\n-enable lineinfo = " + std::to_string(lineinfo) +
         "\n\n#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width "
         "[adrrescompress?] [mem_addresses] immediate\n\n";
}

struct Read {
  KernelLaunch launch;
  std::vector<BlockTrace> blocks;
};

Read read(const fs::path& p) {
  AccelSimReader r(p);
  Read out;
  REQUIRE(r.next_kernel(out.launch));
  BlockTrace b;
  while (r.next_block(b)) out.blocks.push_back(b);
  return out;
}

}  // namespace

TEST_CASE("import: three address modes, work counting, barriers, generic and LDGSTS by address window") {
  const fs::path d = make_dir("modes");
  write(d / "kernelslist.g", "MemcpyHtoD,0x00007f2c10000000,4096\nkernel-1.traceg\n");
  write(d / "kernel-1.traceg", header(5, 0) +
                                   "#BEGIN_TB\n\nthread block = 1,0,0\n\nwarp = 0\ninsts = 7\n"
                                   "0000 ffffffff 1 R1 S2R 0 0\n"
                                   "0010 ffffffff 1 R1 IMAD 2 R1 R2 0\n"
                                   "0020 ffffffff 1 R4 LDG.E 1 R2 4 1 0x00007f2c10000000 4\n"
                                   "0030 0000000f 0 STG.E.64 2 R2 R4 8 0 0x00007f2c20000000 0x00007f2c20000100 "
                                   "0x00007f2c20000008 0x00007f2c20000010\n"
                                   "0040 00000007 1 R5 LD.E 1 R2 4 2 0x00007f2c00000010 4 -8 0x10\n"
                                   "0050 ffffffff 0 BAR.SYNC.DEFER_BLOCKING 0 0\n"
                                   "0060 00000003 0 LDGSTS.E.BYPASS.128 2 R2 R3 16 1 0x00007f2c10000000 16\n"
                                   "warp = 1\ninsts = 1\n"
                                   "0020 00000001 1 R4 LDG.E.CONSTANT 1 R2 4 1 0x00007f2c10000040 0\n"
                                   "\n#END_TB\n");
  Read r = read(d);
  CHECK(r.launch.name == "_Z4copyPfS_");
  CHECK(r.launch.grid == Dim3{2, 1, 1});
  CHECK(r.launch.registers_per_thread == 18);
  CHECK(r.launch.static_shared_bytes == 1024);
  REQUIRE(r.blocks.size() == 1);
  const BlockTrace& b = r.blocks[0];
  CHECK(b.index == Dim3{1, 0, 0});
  REQUIRE(b.warp_count() == 2);
  auto w0 = b.warp(0);
  REQUIRE(w0.size() == 5);
  CHECK(w0[0].work == 2);  // S2R and IMAD before the load
  CHECK(w0[0].space == AddressSpace::global);
  CHECK(b.lane_addresses(w0[0])[31] == 0x00007f2c10000000ULL + 4 * 31);
  CHECK(w0[1].kind == AccessKind::store);
  CHECK(w0[1].size == 8);
  CHECK(b.lane_addresses(w0[1])[1] == 0x00007f2c20000100ULL);
  CHECK(w0[2].space == AddressSpace::shared);  // generic LD inside the shared window
  auto a2 = b.lane_addresses(w0[2]);
  REQUIRE(a2.size() == 3);
  CHECK(a2[0] == 0x10);  // offset in the shared window
  CHECK(a2[1] == 0x14);
  CHECK(a2[2] == 0x0C);  // the trailing immediate 0x10 is not a fourth delta
  CHECK(w0[3].record == RecordKind::barrier);
  CHECK(w0[4].kind == AccessKind::async_copy);
  CHECK(w0[4].hint == CacheHint::cg);
  CHECK(w0[4].size == 16);
  CHECK(b.warp(1)[0].hint == CacheHint::nc);
}

TEST_CASE("import: line info, version 3 without insts lines, a single .traceg file, exited warps") {
  const fs::path d = make_dir("v3");
  write(d / "k.traceg", header(3, 1) +
                            "#BEGIN_TB\nthread block = 0,0,0\nwarp = 1\n"
                            "12 0020 ffffffff 1 R4 LDS.128 1 R2 16 1 0x00007f2c00000000 16\n"
                            "#END_TB\n#BEGIN_TB\nthread block = 1,0,0\nwarp = 0\n"
                            "13 0030 ffffffff 0 STL 2 R2 R4 4 1 0x00007f2c01000000 4\n#END_TB\n");
  Read r = read(d / "k.traceg");
  REQUIRE(r.blocks.size() == 2);
  CHECK(r.blocks[0].warp_count() == 2);
  CHECK(r.blocks[0].warp(0).empty());
  CHECK(r.blocks[0].warp(1)[0].space == AddressSpace::shared);
  CHECK(r.blocks[0].lane_addresses(r.blocks[0].warp(1)[0])[2] == 32);
  CHECK(r.blocks[1].warp(0)[0].space == AddressSpace::local);
  CHECK(r.blocks[1].lane_addresses(r.blocks[1].warp(0)[0])[1] == 4);
}

TEST_CASE("import errors name file and line") {
  const fs::path d = make_dir("bad");
  auto err = [&](const std::string& body, int version = 5) {
    write(d / "k.traceg", header(version, 0) + body);
    try {
      AccelSimReader r(d / "k.traceg");
      KernelLaunch k;
      BlockTrace b;
      while (r.next_kernel(k))
        while (r.next_block(b)) {
        }
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(err("", 6).find("version 6") != std::string::npos);
  // Header counts out of range (a negative one was read as 4 billion registers, which the occupancy calculator then
  // refused without naming the file).
  auto header_err = [&](const std::string& from, const std::string& to) {
    std::string h = header(5, 0);
    h.replace(h.find(from), from.size(), to);
    write(d / "h.traceg", h);
    try {
      AccelSimReader r(d / "h.traceg");
      KernelLaunch k;
      r.next_kernel(k);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(header_err("-nregs = 18", "-nregs = -16").ends_with("h.traceg:6: nregs -16: a thread has 0 to 255 registers"));
  CHECK(header_err("-nregs = 18", "-nregs = 256").find("nregs 256") != std::string::npos);
  CHECK(header_err("-nregs = 18", "-nregs = 255").empty());
  CHECK(header_err("-shmem = 1024", "-shmem = -1").ends_with("h.traceg:5: shmem -1: not a size in bytes"));
  CHECK(err("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n0020 ffffffff 1 R4 LDG.E 1 R2 4 7 0x0\n#END_TB\n")
            .find("k.traceg:20: address mode 7") != std::string::npos);
  CHECK(
      err("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n0020 zz 1 R4 LDG.E 1 R2 4 1 0x0 4\n#END_TB\n").find("bad mask") !=
      std::string::npos);
  CHECK(err("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n0020 ffffffff 1 R4 LDG.E 1 R2 4 0 0x0\n#END_TB\n")
            .find("ends early") != std::string::npos);
  CHECK(err("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n").find("no #END_TB") != std::string::npos);
  CHECK(err("#BEGIN_TB\nthread block = 5,0,0\n#END_TB\n").find("outside the grid") != std::string::npos);
  CHECK(err("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n0020 ffffffff 1 R4 FOO 1 R2 4 1 0x0 4\n#END_TB\n")
            .find("unknown kind") != std::string::npos);
  // A warp whose line count disagrees with its `insts = n` (a line lost or added): Accel-Sim reads exactly n.
  const std::string two = "0020 ffffffff 1 R4 LDG.E 1 R2 4 1 0x00007f2c10000000 4\n";
  CHECK(err("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 3\n" + two + two + "#END_TB\n")
            .find("k.traceg:23: warp 0 has 2 instruction lines where its 'insts' line says 3") != std::string::npos);
  CHECK(err("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n" + two + two + "warp = 1\n#END_TB\n")
            .find("k.traceg:23: warp 0 has 2 instruction lines where its 'insts' line says 1") != std::string::npos);
  CHECK(err("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n" + two + two + "#END_TB\n").empty());
  CHECK(err("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n" + two + "insts = 1\n#END_TB\n").find("not right after") !=
        std::string::npos);
}

TEST_CASE("export then import gives back the same records") {
  const std::string yaml = R"(kernel: mix
launch: {grid: 2, block: 64, registers: 24}
arrays:
  x: {element: 4, length: 4096}
  s: {element: 4, length: 256, space: shared}
  l: {element: 4, length: 8, space: local}
body:
  - work: 2
  - load: x[threadIdx.x * 3]
    hint: nc
  - store: s[(threadIdx.x * 7) % 256]
  - barrier
  - load: l[threadIdx.x % 8]
  - if: threadIdx.x % 3 == 0
    then:
      - atomic: x[urand(1, threadIdx.x, 0, 4096)]
  - async_copy: x[4 * threadIdx.x]
    to: s[(4 * threadIdx.x) % 256]
    vector: 4
)";
  const fs::path d = make_dir("roundtrip");
  auto src = load_kernel_description_string(yaml, "mix.yaml");
  CHECK(write_accelsim(*src, d) == 1);
  auto again = load_kernel_description_string(yaml, "mix.yaml");
  KernelLaunch k0;
  REQUIRE(again->next_kernel(k0));
  AccelSimReader r(d);
  KernelLaunch k1;
  REQUIRE(r.next_kernel(k1));
  CHECK(k1.name == k0.name);
  CHECK(k1.grid == k0.grid);
  CHECK(k1.block == k0.block);
  CHECK(k1.registers_per_thread == 24);
  BlockTrace a, b;
  int blocks = 0;
  while (again->next_block(a)) {
    REQUIRE(r.next_block(b));
    ++blocks;
    CHECK(a.index == b.index);
    REQUIRE(a.records.size() == b.records.size());
    for (std::size_t i = 0; i < a.records.size(); ++i) {
      const WarpRecord& x = a.records[i];
      const WarpRecord& y = b.records[i];
      CAPTURE(i);
      CHECK(x.pc == y.pc);
      CHECK(x.active_mask == y.active_mask);
      CHECK(x.record == y.record);
      CHECK(x.space == y.space);
      CHECK(x.kind == y.kind);
      CHECK(x.size == y.size);
      CHECK(x.hint == y.hint);
      CHECK(x.work == y.work);
      auto la = a.lane_addresses(x);
      auto lb = b.lane_addresses(y);
      CHECK(std::equal(la.begin(), la.end(), lb.begin(), lb.end()));
    }
  }
  CHECK(blocks == 2);
  CHECK_FALSE(r.next_block(b));
}
