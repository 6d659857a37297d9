// Simulation against hand-computed counts: coalescing, bank conflicts, broadcast, constant serialization, the L1
// capacity edge, DRAM fetch granularity, L2 persisting windows, and identical results on any number of threads.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <tuple>
#include <variant>

#include "../model/sim/coalescer.h"
#include "../model/sim/warp_scheduler.h"
#include "../model/smem/bank_model.h"
#include "memhier/arch_loader.h"
#include "memhier/error.h"
#include "memhier/kernel_desc.h"
#include "memhier/mht.h"
#include "memhier/sim.h"
#include "test_support.h"

namespace {

using namespace memhier;

Arch h100() { return load_arch_file(test::arch_dir() / "h100.yaml"); }

SimCounters run(const Arch& arch, const std::string& yaml, const std::vector<ParamOverride>& sets = {},
                SimOptions opt = {}) {
  auto src = load_kernel_description_string(yaml, "sim.yaml", sets);
  auto result = simulate(arch, *src, opt);
  REQUIRE(!result.empty());
  return result.back().counters;
}

// Each of n threads runs `cycles` cycles of {16 streaming .cg loads, 1 .cg load of hot[i]} under a window on hot (hits
// persisting, misses streaming) with a set-aside of `set_aside` (empty: none asked).
std::string persisting_kernel(const std::string& n, const std::string& set_aside, const std::string& hit_ratio = "1.0",
                              int cycles = 16) {
  return fmt::format(R"(kernel: persist
params: {{n: {}, cycles: {}}}
launch: {{grid: 'ceil_div(n, 256)', block: 256, registers: 16}}
arrays:
  stream: {{element: 4, length: 16 * n * cycles}}
  hot: {{element: 4, length: n}}
l2:
{}  windows: [{{array: hot, hit_ratio: {}, hit_prop: persisting, miss_prop: streaming}}]
body:
  - let: {{i: blockIdx.x * blockDim.x + threadIdx.x}}
  - for: c
    to: cycles
    do:
      - for: j
        to: 16
        do:
          - load: stream[(c * n + i) * 16 + j]
            hint: cg
      - load: hot[i]
        hint: cg
)",
                     n, cycles, set_aside.empty() ? "" : "  persisting_set_aside: " + set_aside + "\n", hit_ratio);
}

// A launch of one block of `threads` threads, whose records `fill` writes into the block (cleared, no warp opened).
class OneBlock final : public TraceSource {
 public:
  OneBlock(std::string name, std::uint32_t threads, std::function<void(BlockTrace&)> fill)
      : m_name(std::move(name)), m_threads(threads), m_fill(std::move(fill)) {}
  bool next_kernel(KernelLaunch& k) override {
    if (m_kernel) return false;
    m_kernel = true;
    k = {};
    k.name = m_name;
    k.grid = {1, 1, 1};
    k.block = {m_threads, 1, 1};
    return true;
  }
  bool next_block(BlockTrace& b) override {
    if (m_block) return false;
    m_block = true;
    b.clear();
    m_fill(b);
    return true;
  }

 private:
  std::string m_name;
  std::uint32_t m_threads;
  std::function<void(BlockTrace&)> m_fill;
  bool m_kernel = false, m_block = false;
};

SimCounters run_example(const std::string& name, const std::vector<ParamOverride>& sets, SimOptions opt = {}) {
  auto src =
      load_kernel_description(std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples" / (name + ".yaml"), sets);
  auto result = simulate(h100(), *src, opt);
  REQUIRE(result.size() == 1);
  return result[0].counters;
}

}  // namespace

TEST_CASE("strided float loads: 4, 8, 16, 32, 32 sectors per request for stride 1, 2, 4, 8, 32") {
  const std::pair<int, int> cases[] = {{1, 4}, {2, 8}, {4, 16}, {8, 32}, {32, 32}};
  for (auto [stride, sectors] : cases) {
    CAPTURE(stride);
    SimCounters c = run_example("strided_copy", {{"n", "4096"}, {"stride", std::to_string(stride)}});
    CHECK(c.global_ld_requests == 128);  // 4096 threads / 32
    CHECK(c.global_ld_sectors == 128U * static_cast<unsigned>(sectors));
    CHECK(c.global_st_sectors == 128 * 4);
  }
}

TEST_CASE("a column coalesced line by line gives what its lanes written out give, and nothing else is a column") {
  // Strides of whole lines, every place in a line a size apart and half a size before a sector's end, 1 to 32 lanes:
  // coalesce_column's lines, masks and sector count are coalesce()'s over the lanes. Strides that are not whole lines,
  // a lane across a line's end, negative strides and addresses from 2^62 are left to coalesce().
  constexpr std::uint64_t base = 0x7f0000000000ULL;
  for (const std::uint64_t stride : {128ULL, 256ULL, 1152ULL, 4096ULL, 65536ULL})
    for (const unsigned size : {1U, 2U, 4U, 8U, 16U})
      for (std::uint64_t at = 0; at + size <= 128; at += size / 2 == 0 ? 1 : size / 2)
        for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{32}}) {
          CAPTURE(stride);
          CAPTURE(size);
          CAPTURE(at);
          CAPTURE(n);
          std::array<std::uint64_t, kWarpSize> lanes{};
          for (std::size_t l = 0; l < n; ++l) lanes[l] = base + at + l * stride;
          SectorSet want, got;
          coalesce({lanes.data(), n}, size, kLayoutUnknown, want);
          REQUIRE(coalesce_column(base + at, stride, n, size, got));
          CHECK(got.count == want.count);
          REQUIRE(got.line_count == want.line_count);
          for (int i = 0; i < got.line_count; ++i) {
            CHECK(got.lines[static_cast<std::size_t>(i)].line == want.lines[static_cast<std::size_t>(i)].line);
            CHECK(got.lines[static_cast<std::size_t>(i)].mask == want.lines[static_cast<std::size_t>(i)].mask);
          }
        }
  SectorSet out;
  CHECK(!coalesce_column(base, 136, 32, 4, out));                     // not whole lines
  CHECK(!coalesce_column(base, 64, 32, 4, out));                      // two lanes a line
  CHECK(!coalesce_column(base + 126, 128, 32, 4, out));               // across a line's end
  CHECK(!coalesce_column(base, ~std::uint64_t{127}, 32, 4, out));     // up the column
  CHECK(!coalesce_column(std::uint64_t{1} << 62U, 128, 32, 4, out));  // lanes that could wrap
}

TEST_CASE("float4 coalesced loads: 16 sectors per request; a misaligned warp: 5") {
  SimCounters v = run_example("vector_copy", {{"n", "4096"}, {"width", "4"}});
  CHECK(v.global_ld_requests == 32);  // 1024 threads
  CHECK(v.global_ld_sectors == 32 * 16);
  SimCounters m = run_example("misaligned_copy", {{"n", "4096"}, {"offset", "1"}});
  CHECK(m.global_ld_requests == 128);
  CHECK(m.global_ld_sectors == 128 * 5);
  SimCounters a = run_example("misaligned_copy", {{"n", "4096"}, {"offset", "0"}});
  CHECK(a.global_ld_sectors == 128 * 4);
}

TEST_CASE("transpose: tile[32][32] column reads are 32-way conflicts, tile[32][33] none") {
  SimCounters t = run_example("transpose_tiled", {{"n", "64"}});
  // 4 blocks x 8 warps x 4 iterations of one shared load each
  CHECK(t.shared_ld_requests == 128);
  CHECK(t.shared_ld_wavefronts == 128 * 32);
  CHECK(t.shared_ld_bank_conflicts == 128 * 31);
  CHECK(t.shared_st_wavefronts == 128);
  SimCounters p = run_example("transpose_padded", {{"n", "64"}});
  CHECK(p.shared_ld_wavefronts == 128);
  CHECK(p.shared_ld_bank_conflicts == 0);
}

TEST_CASE("shared broadcast, bank-stride conflicts and wide accesses") {
  const std::string yaml = R"(kernel: s
params: {stride: 1, width: 1, same: 0}
launch: {grid: 1, block: 32, registers: 16}
arrays: {s: {element: 4, length: 4096, space: shared}}
body:
  - load: 's[same ? threadIdx.x / 16 * 16 : threadIdx.x * stride * width]'
    vector: width
)";
  auto wavefronts = [&](int stride, int width, int same) {
    return run(h100(), yaml,
               {{"stride", std::to_string(stride)}, {"width", std::to_string(width)}, {"same", std::to_string(same)}})
        .shared_ld_wavefronts;
  };
  CHECK(wavefronts(1, 1, 1) == 1);  // two words (banks 0 and 16), each a broadcast to 16 lanes
  CHECK(wavefronts(1, 1, 0) == 1);
  CHECK(wavefronts(2, 1, 0) == 2);  // gcd(2, 32)-way
  CHECK(wavefronts(16, 1, 0) == 16);
  CHECK(wavefronts(32, 1, 0) == 32);
  CHECK(wavefronts(3, 1, 0) == 1);  // odd strides are conflict-free
  CHECK(wavefronts(1, 2, 0) == 2);  // 8-byte: two half-warp phases
  CHECK(wavefronts(1, 4, 0) == 4);  // 16-byte: 512 B in two half-warp phases of two wavefronts
  // 16-byte broadcasts: each half-warp reads one 16-byte chunk, a wavefront a phase. The H100 counts 2 wavefronts for
  // matmul_tiled's LDS.128 of As[ty][k..k+3] (786432 = 20 loads a warp a tile: 16 x 1 + 4 x 2); quarter-warp phases
  // would make 4.
  CHECK(wavefronts(1, 4, 1) == 2);
}

TEST_CASE("constant cache: one access for a broadcast, one per distinct address otherwise") {
  SimCounters b = run_example("constant_broadcast", {{"n", "256"}, {"k_count", "4"}});
  CHECK(b.constant_requests == 8 * 4);  // 8 warps x 4 loads
  CHECK(b.constant_serialized == 8 * 4);
  CHECK(b.constant_broadcasts == 8 * 4);
  SimCounters d = run_example("constant_divergent", {{"n", "256"}, {"k_count", "4"}});
  CHECK(d.constant_serialized == 8 * 4 * 32);
  CHECK(d.constant_broadcasts == 0);
  // distinct=4: lanes read lane % 4 lines, so 4 accesses per load; distinct=1 is a broadcast.
  SimCounters four = run_example("constant_distinct", {{"n", "256"}, {"k_count", "4"}, {"distinct", "4"}});
  CHECK(four.constant_serialized == 8 * 4 * 4);
  CHECK(four.constant_broadcasts == 0);
  SimCounters one = run_example("constant_distinct", {{"n", "256"}, {"k_count", "4"}, {"distinct", "1"}});
  CHECK(one.constant_broadcasts == 8 * 4);
}

TEST_CASE("constant cache misses: lines that fit a 4-way set miss once, 8 lines of one set on every access") {
  // One block of 8 warps, 4 loads each (n = 256). constant_distinct distinct=4: lanes read floats (lane % 4) * 16 +
  // k, i.e. 64-byte lines 0-3, one a set of the H100's 8: the first warp's first load misses 4 times, nothing after.
  SimCounters fit = run_example("constant_distinct", {{"n", "256"}, {"k_count", "4"}, {"distinct", "4"}});
  CHECK(fit.constant_misses == 4);
  // constant_divergent: lane reads float lane * 32 + k, lines 0, 2, ..., 62 for k < 16: 8 lines in each of sets 0,
  // 2, 4, 6, met in ascending order by every load, so LRU keeps none of them to the next use.
  SimCounters thrash = run_example("constant_divergent", {{"n", "256"}, {"k_count", "4"}});
  CHECK(thrash.constant_misses == 8 * 4 * 32);
  // An arch without constant_cache.associativity simulates no constant cache: no misses.
  const Arch off =
      load_arch_string("extends: h100\nname: x\nconstant_cache:\n  associativity: 0\n  miss_replays: 0\n", "off.yaml");
  const auto yaml = std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples" / "constant_divergent.yaml";
  auto src = load_kernel_description(yaml, {{"n", "256"}, {"k_count", "4"}});
  CHECK(simulate(off, *src, {})[0].counters.constant_misses == 0);
}

TEST_CASE("L1 working-set sweep: hits while the buffer fits, none once it exceeds L1") {
  // One block re-reads a buffer 4 times. L1 without shared memory: the h100 carveout table's smallest size (0) leaves
  // 256 KiB. Fits: 3 of 4 passes hit. Twice the capacity: LRU evicts every line before its reuse.
  const std::string yaml = R"(kernel: sweep
params: {words: 1024}
launch: {grid: 1, block: 256, registers: 16}
arrays: {buf: {element: 4, length: words}}
body:
  - for: pass
    to: 4
    do:
      - for: k
        from: threadIdx.x
        to: words
        step: 256
        do:
          - load: buf[k]
)";
  auto rate = [&](int kib) {
    SimCounters c = run(h100(), yaml, {{"words", std::to_string(kib * 256)}});
    return static_cast<double>(c.l1_sector_hits) / static_cast<double>(c.l1_sector_lookups);
  };
  CHECK(rate(64) == doctest::Approx(0.75));
  CHECK(rate(192) == doctest::Approx(0.75));
  CHECK(rate(512) < 0.01);
}

TEST_CASE("DRAM fetch granularity: isolated sectors cost 64 bytes each, a coalesced stream 32 per sector") {
  SimCounters s = run_example("strided_copy", {{"n", "4096"}, {"stride", "32"}});
  CHECK(s.l2_read_hits == 0);
  CHECK(s.dram_read_bytes == 4096 * 64);
  // Requests for the far partition count twice, the far lookup in whole 64-byte granules (2 sectors here): about
  // half the 4096 single-sector requests are far, so reads = 4096 + far sectors, near 2.0x (ncu on H100: 2.0003x).
  // (l2_far_sectors also holds the far halves of the 512 store sectors.)
  CHECK(s.l2_read_sectors + s.l2_write_sectors == 4096 + 512 + s.l2_far_sectors);
  CHECK(static_cast<double>(s.l2_read_sectors) / 4096 == doctest::Approx(2.0).epsilon(0.1));
  SimCounters c = run_example("coalesced_copy", {{"n", "4096"}});
  CHECK(c.dram_read_bytes == 4096 * 4);
  CHECK(c.l2_read_sectors + c.l2_write_sectors == 512 + 512 + c.l2_far_sectors);
  CHECK(static_cast<double>(c.l2_read_sectors) / 512 == doctest::Approx(1.5).epsilon(0.1));  // ncu on H100: 1.50x
  CHECK(c.l2_read_hits == 0);      // the pair fetched by one request counts as two misses
  CHECK(c.dram_write_bytes == 0);  // written lines stay in L2 at the end of the kernel
}

TEST_CASE("DRAM rows: a row opens once for an instruction's lines in one 1 KiB chunk, once for each scattered line") {
  // One warp of 32 lanes loading a[index] from a 2 MiB-aligned array of `element`-byte elements, cold: every line
  // misses L2 and fetches the 64-byte granules holding what the lanes read.
  auto rows = [](int element, const std::string& index) {
    SimCounters c = run(h100(), fmt::format(R"(kernel: rows
launch: {{grid: 1, block: 32, registers: 16}}
arrays:
  a: {{element: {}, length: 1 << 26}}
body:
  - load: 'a[{}]'
)",
                                            element, index));
    return std::pair{c.dram_row_misses, c.dram_row_hits};
  };
  using Rows = std::pair<std::uint64_t, std::uint64_t>;
  // Floats 32 elements (a line) apart, lanes 0-7 (the rest repeat lane 0's): 8 lines of one 1 KiB chunk, a granule
  // each: the first opens the row, the other 7 follow it.
  CHECK(rows(4, "threadIdx.x % 8 * 32") == Rows{1, 7});
  // Floats 4 MiB apart: 32 lines in 32 rows.
  CHECK(rows(4, "threadIdx.x * (1 << 20)") == Rows{32, 0});
  // float4s side by side: 512 bytes, 4 lines of one chunk, 8 granules: one row opened.
  CHECK(rows(16, "threadIdx.x") == Rows{1, 7});
  // Whole lines (8 float4 lanes each) 4 MiB apart: each line's second granule finds the row its first opened.
  CHECK(rows(16, "threadIdx.x / 8 * (1 << 18) + threadIdx.x % 8") == Rows{4, 4});
}

TEST_CASE("DRAM channels: each launch's bytes by channel add up to its DRAM bytes; one line's lie in one channel") {
  const Arch arch = h100();
  auto check_sums = [&](const KernelSim& k) {
    REQUIRE(k.dram_channel_read_bytes.size() == 80);  // archs/h100.yaml dram.channels
    REQUIRE(k.dram_channel_write_bytes.size() == 80);
    std::uint64_t read = 0, written = 0;
    for (std::size_t i = 0; i < 80; ++i) {
      read += k.dram_channel_read_bytes[i];
      written += k.dram_channel_write_bytes[i];
    }
    CHECK(read == k.counters.dram_read_bytes);
    CHECK(written == k.counters.dram_write_bytes);
  };
  // Three launches, cold (each launch's write-backs of the previous one's lines are not its traffic) and warm.
  for (const bool cold : {true, false}) {
    CAPTURE(cold);
    auto src = load_kernel_description(
        std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples" / "persisting_l2_window.yaml",
        {{"n", "1 << 20"}, {"hot_n", "1 << 18"}});
    SimOptions opt;
    opt.flush_between_launches = cold;
    const std::vector<KernelSim> runs = simulate(arch, *src, opt);
    REQUIRE(runs.size() > 1);
    for (const KernelSim& k : runs) check_sums(k);
  }
  // A stream over 64 MiB covers the 80 channels evenly: the busiest within 10% of the mean.
  auto src = load_kernel_description(
      std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples" / "coalesced_copy.yaml", {{"n", "1 << 24"}});
  const KernelSim copy = simulate(arch, *src, {}).at(0);
  check_sums(copy);
  CHECK(*std::max_element(copy.dram_channel_read_bytes.begin(), copy.dram_channel_read_bytes.end()) <
        copy.counters.dram_read_bytes / 80 * 11 / 10);
  // One warp reading one line: its two granules, 128 bytes, in one channel.
  auto one = load_kernel_description_string(R"(kernel: one
launch: {grid: 1, block: 32, registers: 16}
arrays:
  a: {element: 4, length: 32}
body:
  - load: a[threadIdx.x]
)",
                                            "one.yaml", {});
  const KernelSim line = simulate(arch, *one, {}).at(0);
  check_sums(line);
  CHECK(std::count(line.dram_channel_read_bytes.begin(), line.dram_channel_read_bytes.end(), 128) == 1);
  CHECK(std::count(line.dram_channel_read_bytes.begin(), line.dram_channel_read_bytes.end(), 0) == 79);
}

TEST_CASE("L2 partitions: a far SM reads through a copy in its own partition, which its own writes keep") {
  // Two one-warp blocks land on SM 0 and SM 1, one per partition, so one of them is far from the line's home slice
  // whichever slice that is. Every load bypasses L1 (cg) so all of them reach L2.
  const std::string reads = R"(kernel: shared_line
params: {reps: 8}
launch: {grid: 2, block: 32, registers: 16}
arrays:
  buf: {element: 4, length: 32}
body:
  - for: r
    to: reps
    do:
      - load: buf[threadIdx.x]
        hint: cg
)";
  // Near SM: 8 home lookups of 4 sectors, the first a miss. Far SM: 8 lookups of its copy, the first a miss that goes
  // on to the home slice (4 more sectors, a hit or the miss that fetches the line, whoever came first).
  // SMs 0 and 1 are the two SMs of a TPC, whose reads of one line in flight the H100 merges (the next test): merging
  // is off here to see the partitions alone.
  Arch arch = h100();
  arch.l1.miss_merge_sms = 0;
  SimCounters c = run(arch, reads);
  CHECK(c.l2_read_sectors == 8 * 8 + 4);
  CHECK(c.l2_far_sectors == 4);
  CHECK(c.l2_read_hits == 8 * 8 + 4 - 8);
  CHECK(c.dram_read_bytes == 128);

  // Each round both SMs read and then write the line, the near SM first: its write drops the far SM's copy, and the
  // far SM's own write puts the copy back with what it wrote (a far write leaves the writer's partition a copy), so
  // after the first round the far SM reads its copy, as in the read-only run. Writes: 4 sectors near, 4 + 4 far, all
  // hits as ncu counts them.
  std::string rw = reads;
  rw += "      - store: buf[threadIdx.x]\n";
  SimCounters w = run(arch, rw);
  CHECK(w.l2_read_sectors == 8 * 8 + 4);
  CHECK(w.l2_read_hits == 8 * 8 + 4 - 8);
  CHECK(w.l2_write_sectors == 8 * 12);
  CHECK(w.l2_write_hits == w.l2_write_sectors);
  CHECK(w.l2_far_sectors == 4 + 8 * 4);
  CHECK(w.dram_read_bytes == 128);
}

TEST_CASE("an SM's .cg reads of sectors it has in flight reach L2 once; once the data are back, again") {
  // validate/results/h100-2026-11-26/probe (l2_fill): a warp's second ld.global.cg of a sector reaches L2 only if
  // the first's data are back. One warp on one SM: loads of different instructions issue a cycle apart (the second
  // finds the first in flight); a load that uses the previous one's value (`work`) issues after its L2 latency.
  const std::string yaml = R"(kernel: inflight
params: {wait: 0, half: 0}
launch: {grid: 1, block: 32, registers: 16}
arrays:
  buf: {element: 4, length: 32}
body:
  - if: half == 0 || threadIdx.x < 16
    then:
      - load: buf[threadIdx.x]
        hint: cg
  - work: wait
  - load: buf[threadIdx.x]
    hint: cg
)";
  const SimCounters one = run(h100(), R"(kernel: one
launch: {grid: 1, block: 32, registers: 16}
arrays:
  buf: {element: 4, length: 32}
body:
  - load: buf[threadIdx.x]
    hint: cg
)");
  REQUIRE(one.l2_read_sectors >= 4);  // 4 at home, 4 more if SM 0 is far from the line's home slice
  // Back to back: the second read's 4 sectors are in flight, so L2 sees one read's lookups.
  const SimCounters merged = run(h100(), yaml);
  CHECK(merged.global_ld_sectors == 8);
  CHECK(merged.l2_merged_sectors == 4);
  CHECK(merged.l2_read_sectors == one.l2_read_sectors);
  CHECK(merged.l2_read_hits == one.l2_read_hits);
  // The first read covers sectors 0 and 1 only: the second sends sectors 2 and 3.
  const SimCounters half = run(h100(), yaml, {{"half", "1"}});
  CHECK(half.l2_merged_sectors == 2);
  CHECK(half.global_ld_sectors == 6);
  // After the wait the data are back: the second read goes to L2 and hits wherever it is looked up.
  const SimCounters later = run(h100(), yaml, {{"wait", "1"}});
  CHECK(later.l2_merged_sectors == 0);
  CHECK(later.l2_read_sectors == 2 * one.l2_read_sectors - (one.l2_far_sectors != 0 ? 4 : 0));
  CHECK(later.l2_read_hits == 4);
  CHECK(later.dram_read_bytes == 128);
}

TEST_CASE("stores of part of each sector: together they complete it in L2, a part alone leaves it to be fetched") {
  // One warp stores parts of sectors, then (all = 1) the other parts, then reads the sectors back through L2 (.cg).
  // With every part written the sectors are whole in L2 and the read fetches nothing; with the first parts alone every
  // sector is partly written and the read fetches its granule.
  // - Floats 8 bytes apart (a strided record, dense but with gaps: its lanes' words are found lane by lane), the even
  //   words of 2 lines, then the odd ones: 8 sectors, the read fetching their 4 granules (256 bytes).
  // - 16 bytes a lane, each lane in a line of its own (a scatter of whole words), the first halves of sectors 0 and 1
  //   of 32 lines, then their second halves; the read of sector 0 asks for the whole 64-byte granule (a far read
  //   does at its home slice): 32 granules (2048 bytes).
  struct Case {
    const char* what;
    const char* array;                       // element and length
    std::vector<std::string> first, second;  // the stores' indices
    const char* load;
    std::uint64_t stored_all, stored_first, fetched;
  };
  const std::array<Case, 2> cases{{
      {"floats",
       "{element: 4, length: 64}",
       {"2 * threadIdx.x"},
       {"2 * threadIdx.x + 1"},
       "2 * threadIdx.x",
       16,
       8,
       256},
      {"16-byte lanes",
       "{element: 16, length: 256}",
       {"8 * threadIdx.x", "8 * threadIdx.x + 2"},
       {"8 * threadIdx.x + 1", "8 * threadIdx.x + 3"},
       "8 * threadIdx.x",
       128,
       64,
       2048},
  }};
  for (const Case& c : cases) {
    CAPTURE(c.what);
    auto stores = [](const std::vector<std::string>& indices) {
      std::string body;
      for (const std::string& i : indices) body += fmt::format("      - store: x[{}]\n", i);
      return body;
    };
    const std::string yaml = fmt::format(R"(kernel: parts
params: {{all: 1}}
launch: {{grid: 1, block: 32, registers: 16}}
arrays:
  x: {}
body:
  - if: 1 == 1
    then:
{}  - if: all == 1
    then:
{}  - load: x[{}]
    hint: cg
)",
                                         c.array, stores(c.first), stores(c.second), c.load);
    const SimCounters all = run(h100(), yaml);
    CHECK(all.global_st_sectors == c.stored_all);
    CHECK(all.dram_read_bytes == 0);
    const SimCounters part = run(h100(), yaml, {{"all", "0"}});
    CHECK(part.global_st_sectors == c.stored_first);
    CHECK(part.dram_read_bytes == c.fetched);
  }
}

TEST_CASE("4-byte stores 2 bytes off their words write no word whole, the odd words written whole beside them") {
  // One warp stores 4 bytes a lane 8 bytes apart from byte 2 of a line (each lane half of an even word and half of an
  // odd one), then from byte 4 (the odd words, whole): no store writes an even word whole, so every sector of the two
  // lines stays partly written, and a .cg read of their 8 sectors fetches the 4 granules (256 bytes).
  OneBlock src("halves_of_words", 32, [](BlockTrace& b) {
    b.begin_warp();
    constexpr std::uint64_t base = 0x7f0000010000ULL;
    WarpRecord st;
    st.kind = AccessKind::store;
    st.active_mask = 0xFFFFFFFFU;
    std::array<std::uint64_t, 32> a{};
    for (const std::uint64_t from : {2ULL, 4ULL}) {
      st.pc = static_cast<std::uint32_t>(from * 16);
      for (std::uint64_t l = 0; l < 32; ++l) a[l] = base + from + 8 * l;
      b.add(st, a);
    }
    WarpRecord ld;
    ld.pc = 0x200;
    ld.hint = CacheHint::cg;
    ld.active_mask = 0xFFFFFFFFU;
    for (std::uint64_t l = 0; l < 32; ++l) a[l] = base + 8 * l;
    b.add(ld, a);
  });
  const auto result = simulate(h100(), src, {});
  REQUIRE(result.size() == 1);
  CHECK(result[0].counters.global_st_sectors == 8 + 8);  // bytes 2-253 and 4-255
  CHECK(result[0].counters.dram_read_bytes == 256);
}

TEST_CASE("strided stores write the same words of each line: a column's, a float4 across a line's end, a field's") {
  // One warp stores compact records (a stride: SmFront::strided_words), then reads through L2 (.cg). A read's 64-byte
  // granule (sectors 0 and 1: a far read asks for the whole granule at the home slice) is whole in L2 where every
  // word of it was written, and the read fetches nothing; with a word missing it fetches the granule.
  // - Lanes a 4 KiB row apart, words 1 to 15 of a line, 4 bytes a store, then a read of word 0: 32 granules fetched,
  //   2048 bytes; words 0 to 15: none.
  // - A float4 from byte 120 (words 30 and 31 of a line, 0 and 1 of the next), then words 2 to 15 of the next line:
  //   its granule is whole; without word 15 it is not.
  // - Structures of 32 bytes, fields 1 to 7, then a read of field 0: every granule of the 8 lines fetched, 1024 bytes;
  //   fields 0 to 7: none.
  // - Structures of 64 bytes, 8-byte fields 0 to 7, then a read of the last word: none fetched; fields 0 to 6: the
  //   granules of both structures of each of the 16 lines, 2048 bytes.
  // - 32-byte structures from byte 80 (bytes 80 to 1103 written): a read of the first 8 lines, a word a structure,
  //   fetches the first line's 2 granules (bytes 0 to 79 unwritten; a structure's place at byte 16 or 48 is not one
  //   of the lanes'), 128 bytes; a read of the ninth line whole its second granule (bytes 1104 to 1151 unwritten).
  // - Both 4-byte halves of 8-byte structures from byte 40 (bytes 40 to 295, 2 lanes a word apart in a sector): a
  //   read of the first line whole fetches its first granule (bytes 32 to 39 unwritten), of the third line whole both
  //   (bytes 296 to 319 unwritten, 320 on untouched). From byte 8, the first line's first granule (bytes 0 to 7).
  constexpr std::uint64_t base = 0x7f0000100000ULL;
  using Stores = std::vector<std::pair<std::uint64_t, std::uint8_t>>;  // offset from base, bytes a lane
  auto read_bytes = [&](const Stores& stores, std::uint64_t read, std::uint64_t stride,
                        std::uint64_t read_stride = ~std::uint64_t{0}) {
    OneBlock src("strided", 32, [&](BlockTrace& b) {
      REQUIRE(b.compact_strided);
      b.begin_warp();
      std::uint32_t pc = 0;
      for (const auto& [offset, size] : stores) {
        WarpRecord st;
        st.kind = AccessKind::store;
        st.size = size;
        st.pc = pc += 16;
        st.active_mask = 0xFFFFFFFFU;
        b.add_strided(st, 32, base + offset, stride, kLayoutKnown);
      }
      WarpRecord ld;
      ld.pc = pc + 16;
      ld.hint = CacheHint::cg;
      ld.active_mask = 0xFFFFFFFFU;
      b.add_strided(ld, 32, base + read, read_stride == ~std::uint64_t{0} ? stride : read_stride, kLayoutKnown);
      REQUIRE((b.records.back().layout & kLayoutCompact) != 0);
    });
    const auto result = simulate(h100(), src, {});
    REQUIRE(result.size() == 1);
    return result[0].counters.dram_read_bytes;
  };
  Stores words;
  for (std::uint64_t w = 1; w < 16; ++w) words.emplace_back(4 * w, 4);
  CHECK(read_bytes(words, 0, 4096) == 2048);
  words.emplace_back(0, 4);
  CHECK(read_bytes(words, 0, 4096) == 0);
  Stores across{{120, 16}};
  for (std::uint64_t w = 2; w < 16; ++w) across.emplace_back(128 + 4 * w, 4);
  CHECK(read_bytes(across, 128, 4096) == 0);
  across.pop_back();
  CHECK(read_bytes(across, 128, 4096) == 2048);
  Stores fields;
  for (std::uint64_t f = 1; f < 8; ++f) fields.emplace_back(4 * f, 4);
  CHECK(read_bytes(fields, 0, 32) == 1024);
  fields.emplace_back(0, 4);
  CHECK(read_bytes(fields, 0, 32) == 0);
  Stores pairs;
  for (std::uint64_t f = 0; f < 8; ++f) pairs.emplace_back(8 * f, 8);
  CHECK(read_bytes(pairs, 60, 64) == 0);
  pairs.pop_back();
  CHECK(read_bytes(pairs, 60, 64) == 2048);
  for (auto& [offset, size] : fields) offset += 80;
  CHECK(read_bytes(fields, 0, 32) == 128);
  CHECK(read_bytes(fields, 1024, 32, 4) == 64);
  const Stores halves{{40, 4}, {44, 4}};  // both halves of 8-byte structures from byte 40: bytes 40 to 295
  CHECK(read_bytes(halves, 0, 8, 4) == 64);
  CHECK(read_bytes(halves, 256, 8, 4) == 128);
  CHECK(read_bytes({{8, 4}, {12, 4}}, 0, 8, 4) == 64);  // from byte 8: the first sector's first 8 bytes unwritten
  // A local record's stride is of offsets, and thread t's word k lies at (k x threads + t) x 4 of the local window:
  // lanes storing words 0 to 31 (k = lane) write a word each of 32 lines far apart, and a .cg read of them fetches 32
  // granules, as their lanes written out do.
  for (const bool compact : {true, false}) {
    CAPTURE(compact);
    OneBlock src("local", 32, [&](BlockTrace& b) {
      b.begin_warp();
      WarpRecord st;
      st.kind = AccessKind::store;
      st.space = AddressSpace::local;
      st.pc = 16;
      st.active_mask = 0xFFFFFFFFU;
      WarpRecord ld = st;
      ld.kind = AccessKind::load;
      ld.hint = CacheHint::cg;
      ld.pc = 32;
      for (const WarpRecord& r : {st, ld}) {
        if (compact) {
          b.add_strided(r, 32, 0, 4, kLayoutKnown);
          REQUIRE((b.records.back().layout & kLayoutCompact) != 0);
        } else {
          std::array<std::uint64_t, 32> offsets{};
          for (std::uint64_t k = 0; k < 32; ++k) offsets[k] = 4 * k;
          b.add(r, offsets);
        }
      }
    });
    const auto result = simulate(h100(), src, {});
    REQUIRE(result.size() == 1);
    CHECK(result[0].counters.local_st_sectors == 32);
    CHECK(result[0].counters.dram_read_bytes == 2048);
  }
}

TEST_CASE("the two SMs of a TPC reading the same sectors at once reach L2 once; SMs of other TPCs each go") {
  // validate/probe/shared_reads: 264 blocks each read a 64 KiB chunk, 2048 sectors, with no L1 reuse. Blocks b go
  // to SM b mod 132, so blocks 2j and 2j + 1 run on SMs 2t and 2t + 1 (a TPC) in step: one of each pair's requests
  // finds the other's in flight (H100 ncu: 53% of the sectors reach L2 from L1). Blocks j and j + 66 run on SMs of
  // other TPCs: all sectors reach L2 (H100: 100%).
  const auto yaml = std::filesystem::path(MEMHIER_TEST_PROBE_DIR) / "shared_reads" / "shared_reads.yaml";
  const std::uint64_t sectors = 264 * 2048;
  auto counters = [&](const Arch& arch, const std::string& pattern) {
    auto src = load_kernel_description(yaml, {{"pattern", pattern}});
    auto result = simulate(arch, *src);
    REQUIRE(result.size() == 3);
    return result.back().counters;
  };
  // The read sectors L1s send to L2 (ncu lts__t_sectors_srcunit_tex_op_read): each is looked up once in the
  // requester's partition, and once more at home when that is the other partition and its copy there lacked it (far
  // sectors, which count the far stores' too: each of those is looked up twice, so l2_write_sectors has them once
  // more).
  auto from_l1 = [](const SimCounters& c) {
    const std::uint64_t far_writes = c.l2_write_sectors - c.global_st_sectors;
    return c.l2_read_sectors - (c.l2_far_sectors - far_writes);
  };
  const SimCounters distinct = counters(h100(), "0"), pair = counters(h100(), "1"), spread = counters(h100(), "3");
  CHECK(distinct.global_ld_sectors == sectors);
  CHECK(from_l1(distinct) == sectors);
  CHECK(distinct.l2_merged_sectors == 0);
  CHECK(pair.l1_sector_hits == 0);
  CHECK(from_l1(pair) == sectors / 2);
  CHECK(pair.l2_merged_sectors == sectors / 2);
  CHECK(from_l1(spread) == sectors);
  CHECK(spread.l2_merged_sectors == 0);
  // An arch that does not merge (every shipped one but the H100 and H200, where it was not measured).
  Arch plain = h100();
  plain.l1.miss_merge_sms = 0;
  const SimCounters unmerged = counters(plain, "1");
  CHECK(from_l1(unmerged) == sectors);
  CHECK(unmerged.l2_merged_sectors == 0);
}

TEST_CASE("only the first wave's blocks merge their reads with the TPC sibling's; later ones run beside others") {
  // Blocks 2j and 2j + 1 read the same 1024 floats (128 sectors), past L1. 1024 threads a block: 2 blocks an H100 SM,
  // a wave of 264. The GPU places the first wave's pairs on one TPC, and later blocks wherever a place frees
  // (validate/results/h200-2026-11-27-sibling-drift: matmul_tiled n=1024, 556 of its 2,048 pairs on one TPC, about the
  // first wave's 528): the first wave's 132 pairs merge 128 sectors each, the second wave's none.
  const std::string yaml = R"(kernel: pairs
params: {waves: 1}
launch: {grid: 264 * waves, block: 1024, registers: 16}
arrays:
  buf: {element: 4, length: 264 * 512 * waves}
body:
  - load: buf[blockIdx.x / 2 * 1024 + threadIdx.x]
    hint: cg
)";
  const SimCounters one = run(h100(), yaml), two = run(h100(), yaml, {{"waves", "2"}});
  CHECK(one.global_ld_sectors == 264 * 128);
  CHECK(one.l2_merged_sectors == 132 * 128);
  CHECK(two.global_ld_sectors == 2 * 264 * 128);
  CHECK(two.l2_merged_sectors == 132 * 128);
}

TEST_CASE(
    "load waits: a run of loads of distinct instructions waits once; a repeated instruction or work starts another") {
  auto waits = [&](const std::string& body) {
    const std::string yaml =
        "kernel: w\nlaunch: {grid: 1, block: 32, registers: 16}\n"
        "arrays: {x: {element: 4, length: 256}, y: {element: 4, length: 256}, "
        "s: {element: 4, length: 256, space: shared}}\nbody:\n" +
        body;
    const SimCounters c = run(h100(), yaml);
    return std::pair{c.load_waits, c.shared_waits};
  };
  using W = std::pair<std::uint64_t, std::uint64_t>;
  // The same load instruction 8 times (a loop nvcc did not unroll, a pointer chase): 8 waits.
  CHECK(waits("  - for: k\n    to: 8\n    do: [{load: 'x[k * 32 + threadIdx.x]'}]\n") == W{8, 0});
  // Unrolled by 4: copies at distinct pcs, one wait per 4 iterations.
  CHECK(waits("  - for: k\n    to: 8\n    unroll: 4\n    do: [{load: 'x[k * 32 + threadIdx.x]'}]\n") == W{2, 0});
  // Two loads then arithmetic per iteration (matmul_naive's body without unrolling): one wait per iteration.
  CHECK(waits("  - for: k\n    to: 8\n    do: [{load: 'x[k * 32 + threadIdx.x]'}, {load: 'y[k]'}, {work: 1}]\n") ==
        W{8, 0});
  // A store ends the run; shared loads alone wait on shared memory; a global load joining them makes it a memory wait.
  CHECK(waits("  - load: x[threadIdx.x]\n  - store: y[threadIdx.x]\n  - load: x[32 + threadIdx.x]\n") == W{2, 0});
  CHECK(waits("  - for: k\n    to: 4\n    unroll: 4\n    do: [{load: 's[k * 32 + threadIdx.x]'}]\n") == W{0, 1});
  CHECK(waits("  - load: s[threadIdx.x]\n  - load: x[threadIdx.x]\n") == W{1, 0});
}

TEST_CASE("async waits: every warp a barrier releases while its block's copies are in flight waits once") {
  auto waits = [&](const std::string& body) {
    const std::string yaml =
        "kernel: w\nlaunch: {grid: 3, block: 64, registers: 16}\n"
        "arrays: {x: {element: 4, length: 4096}, "
        "s: {element: 4, length: 1024, space: shared}}\nbody:\n" +
        body;
    return run(h100(), yaml).async_waits;
  };
  // One thread (warp 0) issues a 1 KiB bulk copy, both warps wait at the barrier after it, not at the one after
  // that: 2 waits a block, 3 blocks.
  const std::string bulk =
      "  - if: threadIdx.x == 0\n    then: [{bulk_copy: 'x[blockIdx.x * 256]', to: 's[0]', bytes: 1024}]\n"
      "  - barrier\n  - load: s[threadIdx.x]\n  - barrier\n";
  CHECK(waits(bulk) == 3 * 2);
  // A 4-tile loop: one copy and one wait a tile.
  CHECK(waits("  - for: t\n    to: 4\n    do:\n"
              "      - async_copy: x[t * 64 + threadIdx.x]\n        to: s[t * 64 + threadIdx.x]\n"
              "      - barrier\n      - load: s[t * 64 + threadIdx.x]\n      - barrier\n") == 3 * 2 * 4);
  // A copy with every lane off (the last, predicated, iteration of a pipeline) leaves nothing to wait for, nor
  // does a barrier with no copy before it.
  CHECK(waits("  - if: threadIdx.x > 1000\n    predicated: true\n"
              "    then: [{async_copy: 'x[threadIdx.x]', to: 's[threadIdx.x]'}]\n  - barrier\n") == 0);
}

TEST_CASE("L2 persisting window keeps a reused buffer resident while a stream passes, and loses it without") {
  Arch a = h100();
  a.l2.size = 512U << 10U;  // a 512 KiB L2 (4 slices of 64 sets x 16 ways) so a small stream can overrun it
  a.l2.slices = 4;
  a.l2.persisting_max = 256U << 10U;
  // 16384 threads, one wave; each thread runs 16 cycles of {16 streaming loads, 1 load of hot[i]}. Warps issue in
  // lock step (round-robin), so between two reads of a hot line the whole cycle's stream passes: 1 MiB, twice L2.
  const std::string yaml = persisting_kernel("1 << 14", "256KiB");
  // hot: 64 KiB = 2048 sectors read 16 times; with the window every read after the first hits the set-aside.
  SimCounters with = run(a, yaml);
  CHECK(with.l2_persisting_hits == 15 * 2048);
  std::string without_yaml = yaml;
  without_yaml.replace(without_yaml.find("l2:"), without_yaml.find("body:") - without_yaml.find("l2:"), "");
  SimCounters without = run(a, without_yaml);
  CHECK(without.l2_persisting_hits == 0);
  CHECK(without.l2_read_hits < 15 * 2048 / 4);
}

TEST_CASE("L2 residency: a set-aside leaves dirty lines fewer ways, as on the H100, though no line persists") {
  // validate/results/h100-2026-11-27b/probe: a write-only kernel over 16 MiB, run in a loop (no flush), writes 0.56 MB
  // back to DRAM a launch with nothing set aside and 16.12 MB (nearly all of it) with 10 of 16 ways set aside; its
  // footprint kept dirty shrinks from 8 ways' worth to 13 less the ways set aside (l2.clean_ways_min 3).
  const Arch a = h100();
  CHECK(l2_dirty_ways(a, 0) == 8);
  CHECK(l2_dirty_ways(a, 5) == 8);
  CHECK(l2_dirty_ways(a, 6) == 7);
  CHECK(l2_dirty_ways(a, 10) == 3);
  CHECK(l2_dirty_ways(a, 16) == 1);  // never none
  Arch no_margin = a;
  no_margin.l2.clean_ways_min = 0;
  CHECK(l2_dirty_ways(no_margin, 10) == 8);
  no_margin.l2.dirty_fraction_max = 0;
  CHECK(l2_dirty_ways(no_margin, 10) == 0);  // every way
  const std::string yaml = R"(kernel: l2cap_write
params: {n: 1 << 22}
launches: 3
launch: {grid: 'ceil_div(n, 256)', block: 256, registers: 16}
arrays: {out: {element: 4, length: n}}
body:
  - let: {i: blockIdx.x * blockDim.x + threadIdx.x}
  - store: out[i]
)";
  auto steady = [&](std::uint64_t set_aside) {
    SimOptions opt;
    opt.flush_between_launches = false;
    opt.persisting_set_aside = set_aside;
    auto src = load_kernel_description_string(yaml, "sim.yaml");
    return simulate(a, *src, opt).back();
  };
  const KernelSim none = steady(0), ten = steady(32768000);
  CHECK(none.residency.dirty_ways == 8);
  CHECK(ten.residency.dirty_ways == 3);
  CHECK(ten.residency.persisting_ways == 10);
  CHECK(none.counters.dram_write_bytes < 1000000);
  CHECK(ten.counters.dram_write_bytes == doctest::Approx(16.12e6).epsilon(0.05));
  CHECK(ten.counters.dram_read_bytes == 0);
}

TEST_CASE("L2 residency: what the CUDA runtime refuses is refused in options and left out of a trace's launch") {
  // The H100's answers (validate/results/h100-2026-11-27/probe/residency_limits.json): persistingL2CacheMaxSize
  // 32768000 and accessPolicyMaxWindowSize 134217728 are accepted, one byte (a page) more is cudaErrorInvalidValue;
  // 4 MiB asked reads back 6553600 and 32767999 reads back 32768000 (whole ways of 3.125 MiB, rounded up).
  const Arch a = h100();
  CHECK(!set_aside_problem(a, 32768000));
  CHECK(set_aside_problem(a, 32768001).value_or("").find("l2.persisting_max") != std::string::npos);
  CHECK(!window_problem(a, {0x7f0000000000, 134217728, 1.0}));
  CHECK(window_problem(a, {0x7f0000000000, 134221824, 1.0}).value_or("").find("l2.max_window_size") !=
        std::string::npos);
  CHECK(window_problem(a, {0x7f0000000000, 4096, 1.5}).value_or("").find("hit_ratio") != std::string::npos);
  CHECK(window_problem(a, {0x7f0000000000, 4096, 0.5, L2Property::persisting, L2Property::persisting})
            .value_or("")
            .find("miss_prop persisting") != std::string::npos);
  CHECK(!window_problem(a, {0x7f0000000000, 4096, 0.5, L2Property::streaming, L2Property::normal}));
  auto residency = [&](const Arch& arch, const std::string& yaml, SimOptions opt = {}) {
    auto src = load_kernel_description_string(yaml, "sim.yaml");
    return simulate(arch, *src, opt).back();
  };
  const std::string yaml = persisting_kernel("1 << 14", "4MiB");
  const KernelSim four = residency(a, yaml);
  CHECK(four.residency.set_aside_requested == 4194304);
  CHECK(four.residency.set_aside_granted == 6553600);
  CHECK(four.residency.persisting_ways == 2);
  CHECK(four.residency.windows.size() == 1);
  CHECK(four.residency.left_out.empty());
  SimOptions near_max;
  near_max.persisting_set_aside = 32767999;
  CHECK(residency(a, yaml, near_max).residency.set_aside_granted == 32768000);
  SimOptions too_big;
  too_big.persisting_set_aside = 32768001;
  CHECK_THROWS_AS(residency(a, yaml, too_big), InputError);
  SimOptions too_wide;
  too_wide.window = AccessPolicyWindow{0x7f0000000000, 256U << 20U, 1.0};
  CHECK_THROWS_AS(residency(a, yaml, too_wide), InputError);
  // window_hit_ratio replaces the trace's window's: none of its lines persisting at 0 (the hot buffer's persisting
  // hits: 15 x 2048 at 1 in the scaled-down L2 below).
  SimOptions none_persist;
  none_persist.window_hit_ratio = 0.0;
  const KernelSim zero = residency(a, yaml, none_persist);
  REQUIRE(zero.residency.windows.size() == 1);
  CHECK(zero.residency.windows[0].hit_ratio == 0.0);
  CHECK(four.counters.l2_persisting_hits > 0);
  CHECK(zero.counters.l2_persisting_hits == 0);
  SimOptions bad_ratio;
  bad_ratio.window_hit_ratio = 1.5;
  CHECK_THROWS_AS(residency(a, yaml, bad_ratio), InputError);

  // An arch without residency control (v100's 0B limits) runs a trace's launch as the GPU would after the refused
  // calls: no set-aside, no window.
  Arch none = h100();
  none.l2.size = 512U << 10U;  // the scaled-down L2 of the window test above
  none.l2.slices = 4;
  none.l2.persisting_max = 0;
  none.l2.max_window_size = 0;
  const KernelSim left = residency(none, persisting_kernel("1 << 12", "256KiB"));
  CHECK(left.residency.windows.empty());
  CHECK(left.residency.set_aside_granted == 0);
  CHECK(left.residency.left_out.find("set-aside 256KiB left out") != std::string::npos);
  CHECK(left.residency.left_out.find("l2.max_window_size is 0B") != std::string::npos);
  // A hot buffer re-read each cycle after 256 KiB more of the stream: LRU keeps some of it; the window's misses are
  // streaming (first out), so with it no re-read hits and the launch hits only where the stream alone does: each of
  // its 786,432 sectors read (4096 threads x 12 cycles x 16 loads, 4 bytes a thread 64 bytes apart: a sector a lane)
  // but the first of each 64-byte DRAM granule of its 3 MiB (49,152 misses). Left out, the window changes nothing.
  const std::string with_hot = persisting_kernel("4096", "", "0.0", 12);
  std::string plain = with_hot;
  plain.replace(plain.find("l2:"), plain.find("body:") - plain.find("l2:"), "");
  std::string stream_only = plain;
  const std::string hot_load = "      - load: hot[i]\n        hint: cg\n";
  REQUIRE(stream_only.find(hot_load) != std::string::npos);
  stream_only.erase(stream_only.find(hot_load), hot_load.size());
  const SimCounters bare = residency(none, plain).counters;
  const SimCounters stream = residency(none, stream_only).counters;
  CHECK(stream.l2_read_hits == 786432 - 49152);
  CHECK(bare.l2_read_hits > stream.l2_read_hits + 512);  // more than one cycle's hot sectors kept
  const KernelSim ignored = residency(none, with_hot);
  CHECK(ignored.residency.left_out.find("window 0x") != std::string::npos);
  CHECK(ignored.counters.l2_read_hits == bare.l2_read_hits);
  CHECK(ignored.counters.dram_read_bytes == bare.dram_read_bytes);
  Arch windows = none;  // the same L2 with windows: the hot buffer's re-reads miss
  windows.l2.max_window_size = 128U << 20U;
  windows.l2.persisting_max = 256U << 10U;
  const KernelSim applied = residency(windows, with_hot);
  CHECK(applied.residency.left_out.empty());
  CHECK(applied.counters.l2_read_hits == stream.l2_read_hits);
}

TEST_CASE("an arch whose lines or sectors are not 128 and 32 bytes is refused at the key, not simulated wrong") {
  for (const char* key : {"l1.line", "l1.sector", "l2.line", "l2.sector"}) {
    CAPTURE(key);
    Arch arch = h100();
    const std::string k = key;
    std::uint64_t& field = k == "l1.line"     ? arch.l1.line
                           : k == "l1.sector" ? arch.l1.sector
                           : k == "l2.line"   ? arch.l2.line
                                              : arch.l2.sector;
    field *= 2;
    try {
      run(arch,
          "kernel: k\nlaunch: {grid: 1, block: 32, registers: 16}\narrays: {x: {element: 4, length: 32}}\nbody:\n  - "
          "load: x[threadIdx.x]\n");
      FAIL("must throw");
    } catch (const InputError& e) {
      CHECK(e.key() == k);
      CHECK(e.where().file == arch.source_file);
      CHECK(e.message().find("models") != std::string::npos);
    }
  }
}

TEST_CASE("an L2 of more slices a partition than a request can name is refused at l2.slices") {
  // Requests carry their slice group in 16 bits: 2 partitions of 65536 slices fit, of 65537 do not.
  for (const int slices : {2 * 65536, 2 * 65537}) {
    CAPTURE(slices);
    Arch arch = h100();
    arch.l2.slices = slices;
    arch.l2.size = std::uint64_t{128} * 16 * static_cast<std::uint64_t>(slices);  // one 16-way set a slice
    const std::string kernel =
        "kernel: k\nlaunch: {grid: 1, block: 32, registers: 16}\narrays: {x: {element: 4, length: 32}}\nbody:\n"
        "  - load: x[threadIdx.x]\n";
    if (slices == 2 * 65536) {
      CHECK(run(arch, kernel).global_ld_sectors == 4);
      continue;
    }
    try {
      run(arch, kernel);
      FAIL("must throw");
    } catch (const InputError& e) {
      CHECK(e.key() == "l2.slices");
      CHECK(e.message().find("65536") != std::string::npos);
    }
  }
}

TEST_CASE("a memory record with no active lane is counted as an instruction and touches nothing") {
  // A predicated-off instruction (descriptions' `predicated: true`, .mht records with mask 0). Warp 0: a full-warp
  // load and store; warp 1: one empty load, whose (empty) addresses start at the end of the block's pool. Warp 1's
  // record is looked at while warp 0 issues.
  OneBlock src("empty_mask", 64, [](BlockTrace& b) {
    std::array<std::uint64_t, 32> a{};
    for (std::uint64_t l = 0; l < 32; ++l) a[l] = 0x10000 + 4 * l;
    WarpRecord r;
    r.active_mask = 0xFFFFFFFFU;
    b.begin_warp();
    b.add(r, a);
    WarpRecord st = r;
    st.pc = 32;
    st.kind = AccessKind::store;
    b.add(st, a);
    b.begin_warp();
    WarpRecord empty;
    empty.pc = 16;
    empty.active_mask = 0;
    b.add(empty, {});
    b.addresses.shrink_to_fit();
  });
  const auto result = simulate(h100(), src, {});
  REQUIRE(result.size() == 1);
  const SimCounters& c = result[0].counters;
  CHECK(c.warp_instructions == 3);
  // The empty load makes no l1tex request: on the H100, stencil_2d's predicated halo LDGs count only in warps with a
  // lane on (ncu 423680 global load requests, as the model without them).
  CHECK(c.global_ld_requests == 1);
  CHECK(c.load_waits == 1);  // warp 0's store waits on its load; the empty load leaves nothing to wait for
  CHECK(c.global_ld_sectors == 4);
  CHECK(c.global_st_sectors == 4);
}

namespace {

// One block of warps for the scheduler tests: each warp a string of records, 'L' a global load, 'l' another load
// instruction (a different pc), 'S' a store, 'B' a barrier, 'W' a load after 4 non-memory instructions. Each record
// has one lane.
BlockTrace scheduler_block(const std::vector<std::string>& warps) {
  BlockTrace b;
  b.clear();
  const std::array<std::uint64_t, 1> a{0x1000};
  for (const std::string& w : warps) {
    b.begin_warp();
    for (char k : w) {
      WarpRecord r;
      r.active_mask = 1;
      r.pc = k == 'l' ? 0x20 : 0x10;
      r.kind = k == 'S' ? AccessKind::store : AccessKind::load;
      r.work = k == 'W' ? 4 : 0;
      if (k == 'B') r.record = RecordKind::barrier;
      b.add(r, k == 'B' ? std::span<const std::uint64_t>{} : std::span<const std::uint64_t>{a});
    }
  }
  return b;
}

// (warp slot, cycle) of each issue. Loads hold the pipeline `load_pipe` cycles and are back `latency` cycles after
// issue.
std::vector<std::pair<std::uint32_t, std::uint64_t>> issue_order(const std::vector<std::string>& warps,
                                                                 std::uint32_t latency, std::uint32_t load_pipe = 1,
                                                                 std::uint32_t barrier = 5) {
  BlockTrace b = scheduler_block(warps);
  std::vector<std::pair<std::uint32_t, std::uint64_t>> order;
  SimCounters c;
  WarpScheduler s({0}, warps.size(), barrier);  // one place, one sub-partition
  s.push(&b);
  s.run(
      c,
      [&](const BlockTrace&, const WarpRecord& r, std::uint64_t cycle, std::uint32_t slot, std::uint64_t) {
        order.emplace_back(slot, cycle);
        if (!r.is_memory()) return IssueCost{};
        return r.kind == AccessKind::store ? IssueCost{1, 0} : IssueCost{load_pipe, latency};
      },
      true);
  return order;
}

}  // namespace

TEST_CASE("warp issue: oldest first, loads' latency, pipeline occupancy, barriers, work") {
  using O = std::vector<std::pair<std::uint32_t, std::uint64_t>>;
  // Warp 0's second load is the same instruction again: it needs the first's data (back at 10). Warp 1's stores never
  // wait, so it issues them back to back; warp 0 goes on at 10.
  CHECK(issue_order({"LL", "SSS"}, 10) == O{{0, 0}, {1, 1}, {1, 2}, {1, 3}, {0, 10}});
  // Oldest first: warp 0's data are back at 3, so it goes before warp 1's remaining stores (greedy then oldest would
  // let warp 1, which issued last, go on to the end first).
  CHECK(issue_order({"LL", "SSSSS"}, 3) == O{{0, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 4}, {1, 5}, {1, 6}});
  // At 3 warps 0 and 2 can go: warp 0, the older; at 4 warps 1 and 2: warp 1. Warp 2's second load waits for its
  // first (issued at 5, back at 8).
  CHECK(issue_order({"LL", "LL", "SLL"}, 3) == O{{0, 0}, {1, 1}, {2, 2}, {0, 3}, {1, 4}, {2, 5}, {2, 8}});
  // Loads of different instructions do not wait on each other; a load of 3 lines holds the pipeline 3 cycles. The
  // third is the first instruction again: it waits for both loads' data (the second's back at 3 + 10).
  CHECK(issue_order({"LlL"}, 10, 3) == O{{0, 0}, {0, 3}, {0, 13}});
  // A barrier: warp 0 arrives at 1 and waits for warp 1 (arrives at 5); both go on 5 cycles (the barrier's latency)
  // after the last arrival, oldest first.
  CHECK(issue_order({"SBS", "SSSBS"}, 10) == O{{0, 0}, {0, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}, {0, 10}, {1, 11}});
  // Non-memory work before a record: 4 cycles after the previous issue (1) before it can go.
  CHECK(issue_order({"SW"}, 10) == O{{0, 0}, {0, 5}});
}

TEST_CASE("warp issue: waits past the timing wheel's 1024 cycles, across its wrap, and both kinds at once") {
  using O = std::vector<std::pair<std::uint32_t, std::uint64_t>>;
  // Each load needs the one before (the same pc): 1000 cycles apart, the wheel's buckets wrap past cycle 1024 twice.
  CHECK(issue_order({"LLLL"}, 1000) == O{{0, 0}, {0, 1000}, {0, 2000}, {0, 3000}});
  // 1023 cycles ahead of the first cycle not yet woken is the wheel's last bucket, 1024 the heap's first.
  CHECK(issue_order({"LL", "LL"}, 1023) == O{{0, 0}, {1, 1}, {0, 1023}, {1, 1024}});
  CHECK(issue_order({"LL", "LL"}, 1025) == O{{0, 0}, {1, 1}, {0, 1025}, {1, 1026}});
  CHECK(issue_order({"LL"}, 100000) == O{{0, 0}, {0, 100000}});
  // Warp 0's loads take 2000 cycles (in the heap), warp 1's 100 (in the wheel), waiting at the same time.
  BlockTrace b = scheduler_block({"LL", "LLL"});
  O order;
  SimCounters c;
  WarpScheduler s({0}, 2, 5);
  s.push(&b);
  s.run(
      c,
      [&](const BlockTrace&, const WarpRecord&, std::uint64_t cycle, std::uint32_t slot, std::uint64_t) {
        order.emplace_back(slot, cycle);
        return IssueCost{1, slot == 0 ? 2000U : 100U};
      },
      true);
  CHECK(order == O{{0, 0}, {1, 1}, {1, 101}, {1, 201}, {0, 2000}});
}

namespace {

// (warp slot, cycle, thread slot of lane 0) of each issue of a WarpScheduler run over the blocks `batch`, pushed
// first; `last`: the launch's last batch (run to the end). Every record holds the pipeline a cycle and waits on
// nothing; the tests' records are all stores (`store` says that each one issued was).
struct Issued {
  std::uint32_t slot;
  std::uint64_t cycle, thread;
  bool store = true;
  bool operator==(const Issued&) const = default;
};
// Runs `s` (`last`: to the end); issue(block, record, cycle, slot) says what each issue costs.
template <typename F>
void run_issues(WarpScheduler& s, bool last, F&& issue) {
  SimCounters c;
  s.run(
      c,
      [&](const BlockTrace& b, const WarpRecord& r, std::uint64_t cycle, std::uint32_t slot, std::uint64_t) {
        return issue(b, r, cycle, slot);
      },
      last);
}

std::vector<Issued> scheduler_run(WarpScheduler& s, const std::vector<BlockTrace*>& batch, bool last = true) {
  std::vector<Issued> order;
  SimCounters c;
  for (BlockTrace* b : batch) s.push(b);
  s.run(
      c,
      [&](const BlockTrace&, const WarpRecord& r, std::uint64_t cycle, std::uint32_t slot, std::uint64_t thread) {
        order.push_back({slot, cycle, thread, r.kind == AccessKind::store});
        return IssueCost{1, 0};
      },
      last);
  return order;
}

}  // namespace

TEST_CASE("warp issue: sub-partitions take the memory pipeline in turn, each offering its oldest ready warp") {
  // Four warps of two stores on two sub-partitions (slots 0 and 2 on the first, 1 and 3 on the second). One
  // sub-partition: warp 0 issues both its stores before warp 1 starts. Two: the sub-partitions alternate, so warps 0
  // and 1 go together, then 2 and 3.
  BlockTrace b = scheduler_block({"SS", "SS", "SS", "SS"});
  WarpScheduler one({0}, 4, 5, 1), two({0}, 4, 5, 2);
  CHECK(scheduler_run(one, {&b}) ==
        std::vector<Issued>{
            {0, 0, 0}, {0, 1, 0}, {1, 2, 32}, {1, 3, 32}, {2, 4, 64}, {2, 5, 64}, {3, 6, 96}, {3, 7, 96}});
  CHECK(scheduler_run(two, {&b}) ==
        std::vector<Issued>{
            {0, 0, 0}, {1, 1, 32}, {0, 2, 0}, {1, 3, 32}, {2, 4, 64}, {3, 5, 96}, {2, 6, 64}, {3, 7, 96}});
  // A sub-partition with nothing ready lets the next one go: warp 1 (the second sub-partition) has one store.
  BlockTrace c = scheduler_block({"SSS", "S"});
  WarpScheduler two_again({0}, 2, 5, 2);
  CHECK(scheduler_run(two_again, {&c}) == std::vector<Issued>{{0, 0, 0}, {1, 1, 32}, {0, 2, 0}, {0, 3, 0}});
}

TEST_CASE("blocks start as places free up, in the place's thread slots; blocks running on go into the next batch") {
  // Two places of one warp (thread slots 1000 and 2000). A: four stores, B: one, C: two. A and B start at 0; A, the
  // older, issues at 0-3 and is done, so C takes A's place (its thread slots, 1000, and its priority over B's) and
  // issues at 4 and 5, B at 6.
  BlockTrace a = scheduler_block({"SSSS"}), b = scheduler_block({"S"}), c = scheduler_block({"SS"});
  WarpScheduler once({1000, 2000}, 1, 5);
  CHECK(scheduler_run(once, {&a, &b, &c}) ==
        std::vector<Issued>{
            {0, 0, 1000}, {0, 1, 1000}, {0, 2, 1000}, {0, 3, 1000}, {0, 4, 1000}, {0, 5, 1000}, {1, 6, 2000}});
  // The same blocks in two batches, A and B, then C. The first run stops when A is done (cycle 3) with no block to
  // take its place; B, not yet issued, goes on in the second run after its trace has been overwritten in the
  // caller's storage, and the cycles go on from 4.
  std::vector<BlockTrace> storage;
  storage.push_back(scheduler_block({"SSSS"}));
  storage.push_back(scheduler_block({"S"}));
  WarpScheduler batched({1000, 2000}, 1, 5);
  CHECK(scheduler_run(batched, {&storage[0], &storage[1]}, false) ==
        std::vector<Issued>{{0, 0, 1000}, {0, 1, 1000}, {0, 2, 1000}, {0, 3, 1000}});
  for (BlockTrace& t : storage) t = scheduler_block({"LLLLLLLL", "LLLLLLLL"});  // B's trace now lives elsewhere
  CHECK(batched.busy());
  CHECK(scheduler_run(batched, {&c}) == std::vector<Issued>{{0, 4, 1000}, {0, 5, 1000}, {1, 6, 2000}});
  CHECK(!batched.busy());
}

TEST_CASE("a long block running on into the next batch keeps only the records it has left, each with its lanes") {
  // Two places of two warps. A (place 0): a store, 5 non-memory instructions, a store. B (place 1): two warps of
  // records in every form the pool holds: compact strided, runs, written-out lanes, then a predicated-off load, a
  // barrier, a bulk copy. A, the older, issues at cycles 0 and 6; B issues in between; at 6 A is done and, with no
  // block to take its place, the batch ends. B goes on in the next batch, its caller-side trace overwritten; every
  // issue (slot, cycle, lanes) is that of one run of both blocks. The scheduler holds the records B has left where B
  // has kKeepRest records or more, all of them where it has fewer.
  auto make_a = [] {
    BlockTrace a;
    a.compact_strided = true;
    a.clear();
    a.begin_warp();
    WarpRecord st;
    st.kind = AccessKind::store;
    st.active_mask = 0xFFFFFFFFU;
    a.add_strided(st, 32, 0x9000, 4);
    st.work = 5;
    a.add_strided(st, 32, 0x9080, 4);
    return a;
  };
  auto make_b = [](int iterations) {
    BlockTrace b;
    b.compact_strided = true;
    b.clear();
    WarpRecord ld;
    ld.active_mask = 0xFFFFFFFFU;
    std::array<std::uint64_t, kWarpSize> lanes{};
    for (int w = 0; w < 2; ++w) {
      b.begin_warp();
      const std::uint64_t base = 0x1000000 * static_cast<std::uint64_t>(w + 1);
      for (int i = 0; i < iterations; ++i) {
        const auto at = static_cast<std::uint64_t>(i);
        ld.pc = 0x10;
        b.add_strided(ld, 32, base + 0x1000 * at, 4);  // compact: two entries
        for (unsigned l = 0; l < kWarpSize; ++l) lanes[l] = base + 0x400000 + (l % 16) * 4 + (l / 16) * 0x400 + at * 64;
        ld.pc = 0x20;
        b.add(ld, lanes);  // two rows of 16: runs, three entries
        b.compact_last_runs();
        for (unsigned l = 0; l < kWarpSize; ++l) lanes[l] = base + 0x800000 + ((l * 7919 + at * 31) % 4096) * 8;
        ld.pc = 0x30;
        b.add(ld, lanes);  // a gather: 32 entries
      }
      WarpRecord off = ld;
      off.active_mask = 0;
      b.add(off, {});
      WarpRecord bar;
      bar.record = RecordKind::barrier;
      b.add(bar, {});
      WarpRecord bulk;
      bulk.kind = AccessKind::bulk_copy;
      bulk.active_mask = 1;
      bulk.size = 16;
      bulk.bulk_bytes = 1024;
      const std::array<std::uint64_t, 1> from{base + 0xC00000};
      b.add(bulk, from);
    }
    REQUIRE((b.records[0].layout & kLayoutCompact) != 0);
    REQUIRE((b.records[1].layout & kLayoutRuns) != 0);
    return b;
  };
  struct Seen {
    std::uint32_t slot;
    std::uint64_t cycle;
    std::vector<std::uint64_t> lanes;
    bool operator==(const Seen&) const = default;
  };
  auto run = [](WarpScheduler& s, std::vector<Seen>& seen, bool last) {
    run_issues(s, last, [&](const BlockTrace& b, const WarpRecord& r, std::uint64_t cycle, std::uint32_t slot) {
      LaneBuffer buffer;
      const std::span<const std::uint64_t> a = b.lane_addresses(r, buffer);
      seen.push_back({slot, cycle, {a.begin(), a.end()}});
      return IssueCost{1, 0};
    });
  };
  for (const int iterations : {4, 400}) {
    CAPTURE(iterations);
    const auto records = static_cast<std::size_t>(2 * (3 * iterations + 3));
    CHECK((records >= WarpScheduler::kKeepRest) == (iterations == 400));
    std::vector<Seen> whole;
    {
      BlockTrace a = make_a(), b = make_b(iterations);
      WarpScheduler s({0, 1000}, 2, 3);
      s.push(&a);
      s.push(&b);
      run(s, whole, true);
    }
    REQUIRE(whole.size() == 2 + records);
    std::vector<Seen> batched;
    std::vector<BlockTrace> storage;
    storage.push_back(make_a());
    storage.push_back(make_b(iterations));
    WarpScheduler s({0, 1000}, 2, 3);
    s.push(&storage[0]);
    s.push(&storage[1]);
    run(s, batched, false);
    REQUIRE(batched.size() == 7);  // A's two stores, B's first five records
    CHECK(batched.back().cycle == 6);
    CHECK(s.held_records() == (iterations == 400 ? records - 5 : records));
    for (BlockTrace& t : storage) t = scheduler_block({"LLLLLLLL", "LLLLLLLL"});  // the caller's storage reused
    CHECK(s.busy());
    run(s, batched, true);
    CHECK(batched == whole);
    CHECK(!s.busy());
  }
}

namespace {

// A block handed out in parts from a whole one: each warp's first `part` records in the block, then `part` at a time
// (BlockRest), records and pool entries copied as they are.
class PartsOf final : public BlockRest {
 public:
  PartsOf(BlockTrace whole, std::size_t part) : m_whole(std::move(whole)), m_part(part), m_at(m_whole.warp_count()) {
    for (std::size_t w = 0; w < m_at.size(); ++w) m_at[w] = m_whole.warp_begin[w];
  }
  // The block as its source gives it: the first parts, the others in `rest`.
  static BlockTrace first(const std::shared_ptr<PartsOf>& rest) {
    BlockTrace b;
    b.compact_strided = true;
    b.clear();
    for (std::size_t w = 0; w < rest->m_at.size(); ++w) {
      b.begin_warp();
      rest->append(w, b);
    }
    b.rest = rest;
    return b;
  }
  bool next(std::size_t w, BlockTrace& out) override {
    out.clear();
    out.begin_warp();
    append(w, out);
    parts += out.records.empty() ? 0 : 1;
    return !out.records.empty();
  }
  int parts = 0;  // handed out by next()

 private:
  void append(std::size_t w, BlockTrace& out) {
    const std::size_t end = std::min<std::size_t>(m_at[w] + m_part, m_whole.warp_begin[w + 1]);
    for (; m_at[w] < end; ++m_at[w]) {
      WarpRecord r = m_whole.records[m_at[w]];
      const auto from = m_whole.addresses.begin() + r.address_index;
      r.address_index = static_cast<std::uint32_t>(out.addresses.size());
      out.addresses.insert(out.addresses.end(), from, from + static_cast<std::ptrdiff_t>(BlockTrace::pool_entries(r)));
      out.records.push_back(r);
      out.warp_begin.back() = static_cast<std::uint32_t>(out.records.size());
    }
  }
  BlockTrace m_whole;
  std::size_t m_part;
  std::vector<std::size_t> m_at;  // each warp's next record in m_whole
};

}  // namespace

TEST_CASE("a block in parts issues as the whole block does, a warp's next part taken as it issues its last record") {
  // Two places of two warps on two sub-partitions, loads back 7 cycles after issue. A (place 0): short, whole. B
  // (place 1): two warps of loads, stores, non-memory work and barriers (B's records alternate so that a part ends
  // on each kind, a barrier next), in parts of 3 and 600 records (more than a warp has), in one run and in two batches
  // (the first ending when A, 800 records a warp, is done, B's storage then overwritten by the caller). Every issue
  // (slot, cycle, lanes, kind) is that of one run of the whole blocks, and B's parts are the scheduler's: it holds at
  // most B's current parts, two a warp.
  auto make_b = [] {
    BlockTrace b;
    b.compact_strided = true;
    b.clear();
    for (std::uint64_t w = 0; w < 2; ++w) {
      b.begin_warp();
      for (std::uint64_t i = 0; i < 1200; ++i) {
        WarpRecord r;
        r.active_mask = 0xFFFFFFFFU;
        r.pc = 0x10 * static_cast<std::uint32_t>(1 + i % 5);
        r.kind = (i + w) % 3 == 2 ? AccessKind::store : AccessKind::load;
        r.work = (i + w) % 4 == 1 ? 3 : 0;
        b.add_strided(r, 32, 0x100000 * (w + 1) + 0x80 * i, 4);
        if (i % 7 == 6) {
          WarpRecord bar;
          bar.record = RecordKind::barrier;
          b.add(bar, {});
        }
      }
    }
    return b;
  };
  auto make_a = [] {
    std::string loads_stores;
    for (int i = 0; i < 400; ++i) loads_stores += "LS";
    BlockTrace a = scheduler_block({loads_stores, loads_stores});
    a.compact_strided = true;
    return a;
  };
  struct Seen {
    std::uint32_t slot;
    std::uint64_t cycle;
    std::uint64_t first_lane;
    AccessKind kind;
    bool barrier;
    bool operator==(const Seen&) const = default;
  };
  auto run = [](WarpScheduler& s, std::vector<Seen>& seen, bool last) {
    run_issues(s, last, [&](const BlockTrace& b, const WarpRecord& r, std::uint64_t cycle, std::uint32_t slot) {
      LaneBuffer buffer;
      const std::span<const std::uint64_t> a = b.lane_addresses(r, buffer);
      seen.push_back({slot, cycle, a.empty() ? 0 : a[0], r.kind, !r.is_memory()});
      if (!r.is_memory()) return IssueCost{};
      return r.kind == AccessKind::store ? IssueCost{1, 0} : IssueCost{1, 7};
    });
  };
  std::vector<Seen> whole;
  {
    BlockTrace a = make_a(), b = make_b();
    WarpScheduler s({0, 1000}, 2, 3, 2);
    s.push(&a);
    s.push(&b);
    run(s, whole, true);
  }
  constexpr std::size_t kRecordsB = 1200 + 1200 / 7;  // a warp's: its loads and stores, a barrier after every 7th
  REQUIRE(whole.size() == 2 * 800 + 2 * kRecordsB);
  for (const std::size_t part : {std::size_t{3}, std::size_t{600}, std::size_t{2000}}) {
    CAPTURE(part);
    {
      const auto rest = std::make_shared<PartsOf>(make_b(), part);
      BlockTrace a = make_a(), b = PartsOf::first(rest);
      WarpScheduler s({0, 1000}, 2, 3, 2);
      s.push(&a);
      s.push(&b);
      std::vector<Seen> one;
      run(s, one, true);
      CHECK(one == whole);
      CHECK(rest->parts == 2 * static_cast<int>((kRecordsB + part - 1) / part - 1));
    }
    std::vector<BlockTrace> storage;
    storage.push_back(make_a());
    const auto rest = std::make_shared<PartsOf>(make_b(), part);
    storage.push_back(PartsOf::first(rest));
    WarpScheduler s({0, 1000}, 2, 3, 2);
    s.push(&storage[0]);
    s.push(&storage[1]);
    std::vector<Seen> batched;
    run(s, batched, false);
    REQUIRE(batched.size() < whole.size());
    // B's warps are past their first parts (A issues 800 records a warp, B about as many in between); the scheduler
    // holds B's first parts where shorter than kKeepRest records (swapped in whole; else what they have left: none)
    // and its two warps' part buffers (both, with parts of 3; one, with 600), or what B has left (in one part).
    const std::size_t b_issued = batched.size() - 2 * 800;
    REQUIRE(b_issued > 2 * 600);
    const std::size_t held = part == 3 ? 2 * 3 + 4 * 3 : part == 600 ? 2 * 600 : 2 * kRecordsB - b_issued;
    CHECK(s.held_records() == held);
    for (BlockTrace& t : storage) t = scheduler_block({"LLLLLLLL", "LLLLLLLL"});  // the caller's storage reused
    CHECK(s.busy());
    run(s, batched, true);
    CHECK(batched == whole);
    CHECK(!s.busy());
  }
}

TEST_CASE("a run stopped when its SM's requests are full goes on where it stopped: the same issues as one run") {
  // Three blocks on two places of two warps, two sub-partitions: loads waiting 7 cycles, a barrier, non-memory work.
  // Stopped after every k instructions (as simulate() stops an SM whose request list is full), with the blocks pushed
  // once, each run() going on from the instruction it stopped before, the issues (slot, cycle, thread) are those of
  // one whole run, in the same order.
  auto issues = [](std::size_t every) {
    std::vector<BlockTrace> blocks;
    blocks.push_back(scheduler_block({"LSLS", "SBLS"}));
    blocks.push_back(scheduler_block({"WLLS", "LS"}));
    blocks.push_back(scheduler_block({"SBS", "LLBL"}));
    WarpScheduler s({1000, 2000}, 2, 5, 2);
    for (BlockTrace& b : blocks) s.push(&b);
    std::vector<Issued> order;
    std::size_t since = 0, runs = 0;
    SimCounters c;
    for (bool more = true; more; ++runs) {
      since = 0;
      more = s.run(
          c,
          [&](const BlockTrace&, const WarpRecord& r, std::uint64_t cycle, std::uint32_t slot, std::uint64_t thread) {
            ++since;
            order.push_back({slot, cycle, thread, r.kind == AccessKind::store});
            if (!r.is_memory()) return IssueCost{};
            return r.kind == AccessKind::store ? IssueCost{1, 0} : IssueCost{1, 7};
          },
          true, [&] { return since >= every; });
    }
    CHECK(!s.busy());
    return std::pair{order, runs};
  };
  const auto [whole, one] = issues(1000);
  CHECK(one == 1);
  CHECK(whole.size() == 21);  // every record of every warp (8 + 6 + 7), barriers included
  for (const std::size_t every : {1, 2, 3, 5, 7}) {
    CAPTURE(every);
    const auto [order, runs] = issues(every);
    CHECK(order == whole);
    CHECK(runs == (whole.size() + every - 1) / every);
  }
}

TEST_CASE("a scheduler restarted for a launch of another shape gives its slots that shape's places and threads") {
  // Two places of two warps (thread slots 1000 and 2000), then, kept for the next launch, one place of four warps
  // (thread slot 0): the same four warp slots, which the second launch puts 0, 32, 64 and 96 threads into its one
  // place.
  WarpScheduler s({1000, 2000}, 2, 5);
  BlockTrace a = scheduler_block({"S", "S"}), b = scheduler_block({"S", "S"});
  CHECK(scheduler_run(s, {&a, &b}) == std::vector<Issued>{{0, 0, 1000}, {1, 1, 1032}, {2, 2, 2000}, {3, 3, 2032}});
  s.start({0}, 4, 5);
  BlockTrace c = scheduler_block({"S", "S", "S", "S"});
  CHECK(scheduler_run(s, {&c}) == std::vector<Issued>{{0, 0, 0}, {1, 1, 32}, {2, 2, 64}, {3, 3, 96}});
}

TEST_CASE("stores allocate in L1: a load of fully written sectors hits, of partly written ones misses") {
  auto hits = [&](const std::string& store) {
    const std::string yaml =
        "kernel: st\nlaunch: {grid: 1, block: 32, registers: 16}\n"
        "arrays: {x: {element: 4, length: 64}}\nbody:\n" +
        store + "  - load: x[threadIdx.x]\n";
    const SimCounters c = run(h100(), yaml);
    REQUIRE(c.l1_sector_lookups == 4);
    return c.l1_sector_hits;
  };
  CHECK(hits("  - store: x[threadIdx.x]\n") == 4);  // 32 floats: every byte of the line's 4 sectors
  CHECK(hits("") == 0);                             // nothing stored: a cold miss
  // Lanes 0-7 only: sector 0 complete, the rest untouched.
  CHECK(hits("  - if: threadIdx.x < 8\n    then: [{store: 'x[threadIdx.x]'}]\n") == 1);
  // Every other lane: each sector half written, so each is fetched by the load.
  CHECK(hits("  - if: threadIdx.x % 2 == 0\n    then: [{store: 'x[threadIdx.x]'}]\n") == 0);
  // st.cg caches in L2 only: no line allocated. st.cs allocates (evict-first), so the next load still hits.
  CHECK(hits("  - store: x[threadIdx.x]\n    hint: cg\n") == 0);
  CHECK(hits("  - store: x[threadIdx.x]\n    hint: cs\n") == 4);
}

TEST_CASE("shared atomics and cp.async writes count apart from shared loads and stores, as ncu counts them") {
  // Two warps. Lanes alternate between two words in banks 0 and 1: one wavefront an atomic. The copy writes 32
  // consecutive words a warp (one wavefront), the load reads them back.
  const std::string yaml =
      "kernel: s\nlaunch: {grid: 1, block: 64, registers: 16}\n"
      "arrays: {g: {element: 4, length: 64}, s: {element: 4, length: 64, space: shared}}\nbody:\n"
      "  - atomic: s[threadIdx.x % 2]\n"
      "  - async_copy: g[threadIdx.x]\n    to: s[threadIdx.x]\n"
      "  - load: s[threadIdx.x]\n";
  const SimCounters c = run(h100(), yaml);
  CHECK(c.shared_atom_requests == 2);
  CHECK(c.shared_atom_wavefronts == 2);
  CHECK(c.shared_async_requests == 2);
  CHECK(c.shared_async_wavefronts == 2);
  CHECK(c.shared_ld_requests == 2 + 2 * 3);  // the load, and the three never-executed LDS nvcc puts before a cp.async
  CHECK(c.shared_ld_wavefronts == 2);
  CHECK(c.shared_st_requests == 0);
  CHECK(c.shared_st_wavefronts == 0);
  CHECK(c.global_ld_requests == 2);  // the copy's global side
}

TEST_CASE("bank model: every access shape against a direct count of each phase's distinct words per bank") {
  // The direct definition: lanes in phases (32 lanes for accesses of at most a bank word, 16 above), each phase as
  // many wavefronts as its most-loaded bank has distinct words, an access covering every word it touches. Random and
  // gapped lanes take the general count; lanes ascending at most their size apart (a tile's row, a broadcast) the
  // stretch count.
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 4000; ++trial) {
    const unsigned size = std::array<unsigned, 5>{1, 2, 4, 8, 16}[trial % 5];
    const std::uint32_t mask = trial % 7 == 0 ? 0xFFFFFFFFU : static_cast<std::uint32_t>(rng()) | 1U;
    const std::uint64_t span = std::array<std::uint64_t, 3>{64, 1024, 65536}[trial % 3];  // crowded to sparse
    const unsigned banks = trial % 11 == 0 ? 16 : 32;  // an arch file may give fewer banks
    std::vector<std::uint8_t> lanes;
    std::vector<std::uint64_t> scattered, stretch, strided;
    const std::uint64_t step = std::array<std::uint64_t, 4>{0, size, size / 2, size - 1}[trial % 4];
    // Ascending with gaps (a tile's column, padded or not; a stride of 2): the general count.
    const std::uint64_t gap = std::array<std::uint64_t, 4>{2 * size, 128, 132, 260}[trial % 4];
    const std::uint64_t start = (rng() % span) / size * size + (size < 8 ? rng() % 4 : 0);
    for (unsigned l = 0; l < 32; ++l) {
      if ((mask >> l & 1U) == 0) continue;
      lanes.push_back(static_cast<std::uint8_t>(l));
      // Aligned for 8 and 16 bytes (as the hardware requires); any byte offset below that, so 2- and 4-byte
      // accesses may straddle two words.
      const std::uint64_t a = rng() % span;
      scattered.push_back(size >= 8 ? a / size * size : a);
      stretch.push_back(start + stretch.size() * step);
      strided.push_back(start / size * size + strided.size() * (gap / size * size));
    }
    const unsigned per_phase = size <= 4 ? 32 : 16;
    for (const auto* addresses : {&scattered, &stretch, &strided}) {
      std::map<unsigned, std::map<std::uint64_t, std::set<std::uint64_t>>> words;  // phase -> bank -> words
      for (std::size_t i = 0; i < lanes.size(); ++i)
        for (std::uint64_t w = (*addresses)[i] / 4; w <= ((*addresses)[i] + size - 1) / 4; ++w)
          words[lanes[i] / per_phase][w % banks].insert(w);
      std::uint32_t want = 0;
      for (const auto& [phase, per_bank] : words) {
        std::size_t most = 0;
        for (const auto& [bank, set] : per_bank) most = std::max(most, set.size());
        want += static_cast<std::uint32_t>(most);
      }
      CAPTURE(trial);
      CAPTURE(addresses == &stretch);
      CAPTURE(addresses == &strided);
      const BankResult got = shared_wavefronts(lanes, *addresses, size, banks, 4);
      CHECK(got.wavefronts == want);
      // ncu's conflict-free count: a wavefront a phase, or the lanes' bytes at a word per bank a wavefront if more.
      const auto ideal = std::max<std::size_t>(words.size(), (lanes.size() * size + banks * 4 - 1) / (banks * 4));
      CHECK(got.ideal == ideal);
      CHECK(got.conflicts() == (want > ideal ? want - ideal : 0));
    }
  }
  // 4-byte lanes on words 0-29 (banks 0-29) and 63 (bank 31), the last 2 bytes into word 94 (bank 30), reaching
  // into word 95 (bank 31, beside 63): 2 wavefronts, though every other lane starts a word. Starting word 94, the
  // last lane leaves every bank one word: 1. On word 93 (bank 29, beside 29): 2 again.
  std::vector<std::uint8_t> lanes(32);
  std::iota(lanes.begin(), lanes.end(), std::uint8_t{0});
  std::vector<std::uint64_t> addresses;
  for (std::uint64_t w = 0; w < 30; ++w) addresses.push_back(4 * w);
  addresses.push_back(4 * 63);
  addresses.push_back(4 * 94 + 2);
  CHECK(shared_wavefronts(lanes, addresses, 4, 32, 4).wavefronts == 2);
  addresses.back() = 4 * 94;
  CHECK(shared_wavefronts(lanes, addresses, 4, 32, 4).wavefronts == 1);
  addresses.back() = 4 * 93;
  CHECK(shared_wavefronts(lanes, addresses, 4, 32, 4).wavefronts == 2);
}

namespace {
// The first n lanes of a warp.
std::uint32_t low_lanes(unsigned n) { return n >= 32 ? ~0U : (1U << n) - 1U; }
}  // namespace

TEST_CASE("strided shared accesses: the closed form gives what the word-by-word count gives") {
  // Columns of 32 x 33 and 32 x 32 float tiles (strides of 33 and 32 words: 1 and 32 wavefronts), a broadcast, rows,
  // descending lanes, and random strides, starts and lane counts on 16, 32 and 64 banks.
  auto both = [](std::uint64_t first, std::uint64_t stride, unsigned n, unsigned banks) {
    std::vector<std::uint8_t> lanes;
    std::vector<std::uint64_t> addresses;
    for (unsigned i = 0; i < n; ++i) {
      lanes.push_back(static_cast<std::uint8_t>(i));
      addresses.push_back(first + i * stride);
    }
    const BankResult want = shared_wavefronts(lanes, addresses, 4, banks, 4);
    const std::optional<BankResult> got = strided_wavefronts(first, stride, low_lanes(n), 4, banks, 4);
    REQUIRE(got.has_value());
    CHECK(got->wavefronts == want.wavefronts);
    CHECK(got->ideal == want.ideal);
    return got->wavefronts;
  };
  CHECK(both(0, 33 * 4, 32, 32) == 1);
  CHECK(both(0, 32 * 4, 32, 32) == 32);
  CHECK(both(4, 0, 32, 32) == 1);
  CHECK(both(8, 4, 32, 32) == 1);
  CHECK(both(4096, ~std::uint64_t{0} - 63, 32, 32) == 16);  // -16 words: two banks, 16 lanes each
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    CAPTURE(trial);
    const unsigned banks = 16U << (rng() % 3);
    const std::uint64_t first = (rng() % 4096) * 4;
    const auto stride = static_cast<std::uint64_t>(static_cast<std::int64_t>(rng() % 257) - 128) * 4;
    both(first + 128 * 4, stride, 2 + static_cast<unsigned>(rng() % 31), banks);
  }
  // Not closed-form: 8-byte accesses lanes apart (half-warp phases), starts or strides off a bank word more than an
  // access apart, far strides, no lane.
  CHECK(!strided_wavefronts(0, 16, ~0U, 8, 32, 4).has_value());
  CHECK(!strided_wavefronts(2, 8, ~0U, 4, 32, 4).has_value());
  CHECK(!strided_wavefronts(0, 6, ~0U, 4, 32, 4).has_value());
  CHECK(!strided_wavefronts(0, std::uint64_t{1} << 40U, ~0U, 4, 32, 4).has_value());
  CHECK(!strided_wavefronts(0, 4, 0, 4, 32, 4).has_value());
}

TEST_CASE("strided shared accesses: lanes at most an access apart, in closed form, as the lane-by-lane count") {
  // A warp's float4 row takes 4 wavefronts, 2 a half-warp phase (ncu: async_copy_pipeline's LDS.128, 0 conflicts);
  // a float2 row 2; a warp of one float4 chunk 2 (one a phase: matmul_tiled's broadcasts); a byte row 1. Then
  // random masks (the phases count only their active lanes), starts off a word, sizes 1 to 16, gaps 0 to the size,
  // on 16 to 64 banks of 4 or 8 bytes, against shared_wavefronts.
  auto both = [](std::uint64_t first, std::uint64_t stride, std::uint32_t mask, unsigned size, unsigned banks,
                 unsigned bank_bytes) {
    std::vector<std::uint8_t> lanes;
    std::vector<std::uint64_t> addresses;
    for (std::uint32_t m = mask; m != 0; m &= m - 1) {
      lanes.push_back(static_cast<std::uint8_t>(std::countr_zero(m)));
      addresses.push_back(first + (lanes.size() - 1) * stride);
    }
    const BankResult want = shared_wavefronts(lanes, addresses, size, banks, bank_bytes);
    const std::optional<BankResult> got = strided_wavefronts(first, stride, mask, size, banks, bank_bytes);
    REQUIRE(got.has_value());
    CHECK(got->wavefronts == want.wavefronts);
    CHECK(got->ideal == want.ideal);
    return std::pair{got->wavefronts, got->ideal};
  };
  CHECK(both(0, 16, ~0U, 16, 32, 4) == std::pair{4U, 4U});
  CHECK(both(0, 8, ~0U, 8, 32, 4) == std::pair{2U, 2U});
  CHECK(both(64, 0, ~0U, 16, 32, 4) == std::pair{2U, 4U});  // fewer than the bytes over the banks: no conflict
  CHECK(both(3, 1, ~0U, 1, 32, 4) == std::pair{1U, 1U});
  CHECK(both(4, 16, 0xFFFF0000U, 16, 32, 4) == std::pair{2U, 2U});  // one phase of 16 lanes: 256 bytes, 64 words
  CHECK(both(2, 4, ~0U, 4, 32, 4) == std::pair{2U, 1U});            // 32 floats off a word: 33 words, a conflict
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 20000; ++trial) {
    CAPTURE(trial);
    const unsigned size = 1U << (rng() % 5), banks = 16U << (rng() % 3), bank_bytes = 4U << (rng() % 2);
    const std::uint64_t first = rng() % 8192;
    const std::uint64_t stride = rng() % (size + 1);
    std::uint32_t mask = static_cast<std::uint32_t>(rng());
    if (rng() % 4 == 0) mask = ~0U;
    if (mask == 0) mask = 1;
    CAPTURE(size);
    CAPTURE(banks);
    CAPTURE(bank_bytes);
    CAPTURE(first);
    CAPTURE(stride);
    CAPTURE(mask);
    both(first, stride, mask, size, banks, bank_bytes);
  }
}

TEST_CASE("L1 data-stage passes: the most-loaded bank's words for hits, two missed lines a pass") {
  // One warp loads x twice with the pattern given; the second load hits L1. Words are 4 bytes, banks (word % 32).
  auto passes = [&](const std::string& index) {
    const std::string yaml =
        "kernel: l\nlaunch: {grid: 1, block: 32, registers: 16}\n"
        "arrays: {x: {element: 4, length: 65536}}\nbody:\n"
        "  - load: x[" +
        index + "]\n  - load: x[" + index + "]\n";
    const SimCounters c = run(h100(), yaml);
    REQUIRE(c.global_ld_requests == 2);
    CHECK(c.l1_ld_wavefronts == c.l1_wavefronts);
    return std::pair{c.l1_ld_wavefronts, c.l1_sector_hits};
  };
  // Coalesced: one line, one pass each time.
  CHECK(passes("threadIdx.x") == std::pair<std::uint64_t, std::uint64_t>{2, 4});
  // Stride 2 floats: 2 lines, words in 16 banks twice over: 2 passes each time.
  CHECK(passes("2 * threadIdx.x") == std::pair<std::uint64_t, std::uint64_t>{4, 8});
  // A column of 32 rows of 32 floats: 32 lines, every word in bank 0: 32 passes each time.
  CHECK(passes("32 * threadIdx.x") == std::pair<std::uint64_t, std::uint64_t>{64, 32});
  // 32 rows of 33 floats: lane l reads word 33 l, in line floor(132 l / 128) = l and bank l: 32 lines, no two words in
  // one bank. The first load misses all 32 lines (a pass per two: 16), the second hits (one pass); one pass a line
  // would make 64.
  CHECK(passes("33 * threadIdx.x") == std::pair<std::uint64_t, std::uint64_t>{16 + 1, 32});
}

TEST_CASE("local memory belongs to thread slots: later waves write over the lines earlier waves wrote") {
  // 2^22 threads each write their 16 local floats (64 B) and read them back: 15.5 waves of 2048 threads an SM on the
  // H100's 132 SMs. The driver gives local memory to thread slots (MAX_THREADS_PER_SM x SMs of them), so the kernel's
  // local lines are 132 x 2048 x 64 B = 16.5 MiB, which the L2 holds dirty (at most half of its 50 MiB may be): no
  // write-back during the kernel. Were each thread's local memory its own, 256 MiB of dirty lines would pass through
  // the L2 and most of them go to DRAM.
  const SimCounters c = run(h100(), R"(kernel: local_slots
params: {n: 1 << 22}
launch: {grid: 'ceil_div(n, 256)', block: 256, registers: 16}
arrays:
  a: {element: 4, length: 16, space: local}
body:
  - for: k
    to: 16
    do:
      - store: a[k]
  - for: k
    to: 16
    do:
      - load: a[k]
      - work: 1
)");
  CHECK(c.local_st_sectors == (std::uint64_t{1} << 22U) * 64 / 32);
  CHECK(c.dram_write_bytes == 0);
  CHECK(c.dram_read_bytes == 0);  // whole-sector writes allocate without a fetch
}

TEST_CASE("the same stats on 1, 2, 5 and 16 threads, bit for bit") {
  for (const char* name : {"transpose_tiled", "random_gather", "histogram_shared"}) {
    CAPTURE(name);
    std::vector<ParamOverride> sets;
    if (std::string(name) == "transpose_tiled") sets = {{"n", "512"}};
    if (std::string(name) == "random_gather") sets = {{"n", "1 << 16"}, {"m", "1 << 20"}};
    if (std::string(name) == "histogram_shared") sets = {{"n", "1 << 18"}, {"blocks", "264"}};
    const auto single = run_example(name, sets, SimOptions{});
    // More threads than this machine's cores, and a count that divides neither the 132 SMs nor the 50 slice groups.
    for (int threads : {2, 5, 16}) {
      CAPTURE(threads);
      SimOptions many;
      many.threads = threads;
      CHECK(run_example(name, sets, many) == single);
    }
  }
}

TEST_CASE("phase times: every phase of a run is timed, and the phases add up to no more than the whole") {
  SimPhaseTimes t;
  SimOptions opt;
  opt.times = &t;
  run_example("transpose_tiled", {{"n", "512"}}, opt);
  // Each phase ran (the L2 slices alone take a host millisecond to clear); they are laps of one clock, in turn.
  CHECK(t.setup > 0);
  CHECK(t.read > 0);
  CHECK(t.sm > 0);
  CHECK(t.l2 > 0);
  CHECK(t.read + t.sm + t.l2 + t.setup <= t.total);
  const SimPhaseTimes once = t;
  run_example("transpose_tiled", {{"n", "512"}}, opt);  // a second run adds to them
  CHECK(t.setup > once.setup);
  CHECK(t.total > once.total);
}

namespace {
// The launches of several sources, one source after another.
class Chain final : public TraceSource {
 public:
  explicit Chain(std::vector<TraceSource*> parts) : m_parts(std::move(parts)) {}
  bool next_kernel(KernelLaunch& launch) override {
    for (; m_at < m_parts.size(); ++m_at)
      if (m_parts[m_at]->next_kernel(launch)) return true;
    return false;
  }
  bool next_block(BlockTrace& block) override { return m_parts[m_at]->next_block(block); }

 private:
  std::vector<TraceSource*> m_parts;
  std::size_t m_at = 0;
};
}  // namespace

TEST_CASE("a launch that starts cold counts what it counts alone, whatever launch ran before it") {
  // The same copy twice: the first leaves DRAM rows open that the second's first reads would find open. With
  // flush_between_launches (ncu's cold caches) the second finds the L2 empty and every row closed, as when alone.
  const auto copy = std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples" / "coalesced_copy.yaml";
  const std::vector<ParamOverride> sets{{"n", "1 << 18"}};
  auto alone_source = load_kernel_description(copy, sets);
  const auto alone = simulate(h100(), *alone_source, {});
  REQUIRE(alone.size() == 1);
  auto first = load_kernel_description(copy, sets), second = load_kernel_description(copy, sets);
  Chain both({first.get(), second.get()});
  const auto after = simulate(h100(), both, {});
  REQUIRE(after.size() == 2);
  CHECK(after[0].counters == alone[0].counters);
  CHECK(after[1].counters == alone[0].counters);
  CHECK(after[1].dram_channel_read_bytes == alone[0].dram_channel_read_bytes);
  CHECK(alone[0].counters.dram_row_misses > 0);
  // So too after launches of other kinds: a persisting window's (set-aside, persisting lines), a tiled transpose's
  // (shared memory, barriers), before a gather.
  const auto examples = std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples";
  const std::vector<ParamOverride> gather_sets{{"n", "1 << 18"}, {"m", "1 << 22"}};
  auto gather_alone = load_kernel_description(examples / "random_gather.yaml", gather_sets);
  const auto gather = simulate(h100(), *gather_alone, {});
  auto window = load_kernel_description(examples / "persisting_l2_window.yaml", {{"n", "1 << 20"}});
  auto transpose = load_kernel_description(examples / "transpose_tiled.yaml", {{"n", "1024"}});
  auto gather_after = load_kernel_description(examples / "random_gather.yaml", gather_sets);
  Chain mixed({window.get(), transpose.get(), gather_after.get()});
  const auto later = simulate(h100(), mixed, {});
  REQUIRE(later.size() == 4);  // the window's two launches, the transpose, the gather
  CHECK(later[3].counters == gather[0].counters);
  CHECK(later[3].dram_channel_write_bytes == gather[0].dram_channel_write_bytes);
}

TEST_CASE("progress: told after each batch and at each launch's end, rising to each launch's counts") {
  const auto examples = std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples";
  // random_gather over 4096 blocks runs in two batches (3.9 waves; see the .mht test below), the copy in one.
  const std::vector<ParamOverride> gather{{"n", "1 << 20"}, {"m", "1 << 20"}}, copy{{"n", "1 << 16"}};
  auto launches = [&] {
    std::vector<std::unique_ptr<TraceSource>> v;
    v.push_back(load_kernel_description(examples / "random_gather.yaml", gather));
    v.push_back(load_kernel_description(examples / "coalesced_copy.yaml", copy));
    return v;
  };
  auto quiet_parts = launches();
  Chain quiet({quiet_parts[0].get(), quiet_parts[1].get()});
  const auto unwatched = simulate(h100(), quiet, {});
  REQUIRE(unwatched.size() == 2);
  struct Seen {
    SimProgress p;
    std::string kernel;
  };
  std::vector<Seen> seen;
  SimOptions opt;
  opt.threads = 2;
  opt.progress = [&](const SimProgress& p) { seen.push_back({p, std::string(p.kernel)}); };
  auto parts = launches();
  Chain both({parts[0].get(), parts[1].get()});
  const auto watched = simulate(h100(), both, opt);
  REQUIRE(watched.size() == 2);
  CHECK(watched[0].counters == unwatched[0].counters);  // watching changes nothing
  CHECK(watched[1].counters == unwatched[1].counters);
  // Each launch: calls in order, blocks and instructions never falling, its last call the one that says it is done,
  // with the launch's blocks and the instructions of it and the launches before.
  std::uint64_t before = 0;
  std::size_t at = 0;
  for (std::size_t launch = 0; launch < 2; ++launch) {
    CAPTURE(launch);
    const SimCounters& c = watched[launch].counters;
    std::size_t calls = 0;
    std::uint64_t blocks = 0, instructions = before;
    for (; at < seen.size() && seen[at].p.launch == launch; ++at, ++calls) {
      const SimProgress& p = seen[at].p;
      CHECK(seen[at].kernel == watched[launch].launch.name);
      CHECK(p.grid_blocks == watched[launch].launch.grid.count());
      CHECK(p.blocks >= blocks);
      CHECK(p.warp_instructions >= instructions);
      blocks = p.blocks;
      instructions = p.warp_instructions;
      CHECK(p.launch_done == (at + 1 == seen.size() || seen[at + 1].p.launch != launch));
    }
    CHECK(blocks == c.blocks);
    CHECK(blocks == watched[launch].launch.grid.count());
    before += c.warp_instructions;
    CHECK(instructions == before);
    CHECK(calls >= (launch == 0 ? 3U : 2U));  // two batches and the end; one batch and the end
  }
  CHECK(at == seen.size());
  // A batch in rounds (an SM's list full at 4 requests; it makes about 32) is told of after each round too.
  auto rounds_source = load_kernel_description(examples / "coalesced_copy.yaml", copy);
  std::vector<std::uint64_t> rising;
  SimOptions rounds;
  rounds.round_requests = 4;
  rounds.progress = [&](const SimProgress& p) { rising.push_back(p.warp_instructions); };
  const auto in_rounds = simulate(h100(), *rounds_source, rounds);
  REQUIRE(in_rounds.size() == 1);
  CHECK(in_rounds[0].counters == watched[1].counters);
  CHECK(rising.size() > 4);  // one batch (one wave), its rounds, and the end
  CHECK(std::is_sorted(rising.begin(), rising.end()));
  CHECK(std::adjacent_find(rising.begin(), rising.end() - 1) == rising.end() - 1);  // each round issued some
  CHECK(rising.back() == in_rounds[0].counters.warp_instructions);
  // An exception from the callback ends the simulation and leaves simulate().
  auto again = launches();
  Chain stopped({again[0].get(), again[1].get()});
  opt.progress = [](const SimProgress&) { throw std::runtime_error("stopped by the user"); };
  CHECK_THROWS_WITH_AS(simulate(h100(), stopped, opt), "stopped by the user", std::runtime_error);
}

TEST_CASE("a batch holds about 2^19 L2 requests at the rate per lane its predecessor issued, not per lane it read") {
  // The benchmark's gather: 8192 blocks of 8 warps, each warp an index load, a gather and a store (768 lanes a block,
  // 811,008 a wave of 1056 blocks), 2,226,484 L2 requests in all: 0.354 a lane. The first batch is one wave (a lane a
  // request until one has run); it issues only part of it (blocks still running go on), but at 0.354 a lane issued
  // two waves make 574 thousand requests, past 2^19 (524,288): every later batch takes at most two waves. Dividing by
  // the lanes read, as until stop 47, put the first batch's rate at 0.13 and the second batch at five waves (1.4
  // million requests, 147 MB peak for `memhier simulate`).
  const auto examples = std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples";
  auto source = load_kernel_description(examples / "random_gather.yaml", {{"n", "1 << 21"}, {"m", "1 << 24"}});
  std::vector<std::uint64_t> taken{0};  // blocks taken, after each batch
  SimOptions opt;
  opt.threads = 2;
  opt.progress = [&](const SimProgress& p) {
    if (p.blocks != taken.back()) taken.push_back(p.blocks);
  };
  const auto sims = simulate(h100(), *source, opt);
  REQUIRE(sims.size() == 1);
  REQUIRE(sims[0].counters.blocks == 8192);
  CHECK(sims[0].counters.waves == 8);
  REQUIRE(taken.size() >= 2);
  CHECK(taken[1] == 1056);  // the first batch: one wave
  for (std::size_t b = 2; b < taken.size(); ++b) {
    CAPTURE(b);
    CHECK(taken[b] - taken[b - 1] <= 2 * 1056);
  }
  CHECK(taken.size() >= 5);  // 8192 blocks in batches of at most two waves after the first
}

TEST_CASE("a trace read from .mht chunks decoded in parallel gives the stats of its description, on any thread count") {
  // Chunks of 8 KiB: a wave of random_gather's blocks spans hundreds of them, and waves end inside chunks; 4096 blocks
  // make 3.9 waves in two batches (simulate() ends a batch at about 2^19 L2 requests).
  const std::vector<ParamOverride> sets{{"n", "1 << 20"}, {"m", "1 << 20"}};
  const SimCounters described = run_example("random_gather", sets);
  REQUIRE(described.waves == 4);
  const auto path = std::filesystem::temp_directory_path() / "memhier_test_sim_chunks.mht";
  {
    auto src = load_kernel_description(
        std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples" / "random_gather.yaml", sets);
    write_mht(*src, path, {std::size_t{8} << 10U, 3});
  }
  MhtReader info(path);
  REQUIRE(info.kernels()[0].chunks > 100);
  for (int threads : {1, 2, 5, 16}) {
    CAPTURE(threads);
    MhtReader r(path);
    SimOptions opt;
    opt.threads = threads;
    const auto result = simulate(h100(), r, opt);
    REQUIRE(result.size() == 1);
    CHECK(result[0].counters == described);
  }
}

TEST_CASE("waves of very different sizes: the blocks read ahead of a batch are simulated in the next, none lost") {
  // simulate() reads the waves a batch will probably take at the last whole wave's size; here each wave has 1, 17 or
  // 33 loads a thread in turn (1056 blocks a wave on the H100), so it reads too many or too few, and batches end
  // where 2^22 addresses or about 2^19 L2 requests are reached.
  const std::string yaml = R"(kernel: uneven
params: {n: 6336 * 256}
launch: {grid: 'ceil_div(n, 256)', block: 256, registers: 16}
arrays: {x: {element: 4, length: n * 4}}
body:
  - let: {i: blockIdx.x * 256 + threadIdx.x}
  - for: k
    to: 1 + blockIdx.x / 1056 % 3 * 16
    do:
      - load: x[(i * 3 + k) % (n * 4)]
)";
  const SimCounters one = run(h100(), yaml);
  CHECK(one.blocks == 6336);
  CHECK(one.waves == 6);
  CHECK(one.global_ld_requests == 1056 * 8 * (1 + 17 + 33) * 2);
  const auto path = std::filesystem::temp_directory_path() / "memhier_test_sim_uneven.mht";
  {
    auto src = load_kernel_description_string(yaml, "uneven.yaml");
    write_mht(*src, path, {std::size_t{16} << 10U, 3});
  }
  for (int threads : {2, 5, 16}) {
    CAPTURE(threads);
    SimOptions opt;
    opt.threads = threads;
    CHECK(run(h100(), yaml, {}, opt) == one);
    MhtReader r(path);
    const auto result = simulate(h100(), r, opt);
    REQUIRE(result.size() == 1);
    CHECK(result[0].counters == one);
  }
}

TEST_CASE("an SM whose requests fill a round stops and goes on in the next: the same stats as in one round") {
  // One thread a row, each warp's loads and stores 32 lines apart (every block reading the same 128 rows, an odd one
  // 100 cycles after its even sibling, writing its own): 16 blocks of 4 warps (one wave), block b looping
  // 16 + 8b times (1216 iterations in all), so SMs stop at different cycles and finish in different rounds. With the
  // rounds' limit at 1, 100 or 1000 requests, the SMs stop up to thousands of times mid-block; with it past the batch,
  // never. The L2 is cut to 512 KiB, a fifth of the 2.2 MiB the kernel touches, so the order in which the slices see
  // the SMs' requests decides hits, write-backs and DRAM rows: any difference is a request replayed out of cycle order
  // (an SM's requests issued after another SM stopped, replayed before that SM's of the same cycles), lost or replayed
  // twice, a TPC's reads in flight forgotten at a round's end, an instruction lost or issued twice at a stop, or the
  // batch's waves, blocks or resident warps counted again.
  Arch a = h100();
  a.l2.size = 512U << 10U;
  a.l2.slices = 4;
  a.l2.persisting_max = 384U << 10U;
  const std::string yaml = R"(kernel: rows
params: {rows: 2048, cols: 136}
launch: {grid: 'ceil_div(rows, 128)', block: 128, registers: 24}
arrays: {x: {element: 4, length: rows * cols}, y: {element: 4, length: rows * cols}}
body:
  - let: {r: blockIdx.x * blockDim.x + threadIdx.x}
  - if: blockIdx.x % 2 == 1
    then:
      - work: 100
  - for: c
    to: 16 + blockIdx.x * 8
    do:
      - load: x[r % 128 * cols + c]
      - store: y[r * cols + c]
)";
  SimOptions whole;
  whole.round_requests = std::uint64_t{1} << 40U;
  const SimCounters one = run(a, yaml, {}, whole);
  CHECK(one.warp_instructions == 1216 * 4 * 2);
  CHECK(one.global_st_requests == 1216 * 4);
  CHECK(one.global_st_sectors == 1216 * 4 * 32);  // each store's 32 lanes write a word of their own sector
  CHECK(one.blocks == 16);
  CHECK(one.waves == 1);
  CHECK(one.dram_write_bytes > 0);      // the L2 overflows
  CHECK(one.l2_merged_sectors > 1000);  // every block reads rows 0-127: the SMs of a TPC merge their misses
  for (const std::uint64_t round : {std::uint64_t{100}, std::uint64_t{1000}, std::uint64_t{1}}) {
    for (const int threads : {1, 5}) {
      CAPTURE(round);
      CAPTURE(threads);
      SimOptions opt;
      opt.round_requests = round;
      opt.threads = threads;
      const auto src = load_kernel_description_string(yaml, "sim.yaml");
      const auto result = simulate(a, *src, opt);
      REQUIRE(result.size() == 1);
      CHECK(result[0].counters == one);
      CHECK(result[0].achieved_warps_per_sm == doctest::Approx(16.0 * 4 / 132));
    }
  }
}

namespace {

// A source that gives its blocks whole, whatever part_records the consumer asks for.
class WholeBlocks final : public TraceSource {
 public:
  explicit WholeBlocks(TraceSource& inner) : m_inner(inner) {}
  bool next_kernel(KernelLaunch& launch) override { return m_inner.next_kernel(launch); }
  bool next_block(BlockTrace& block) override {
    const std::size_t part = block.part_records;
    block.part_records = 0;
    const bool got = m_inner.next_block(block);
    block.part_records = part;
    return got;
  }

 private:
  TraceSource& m_inner;
};

}  // namespace

namespace {

// A launch of 264 blocks of 4 warps (two waves on the H100), each warp 64 records made by add(); `compact`: each record
// as a decoder gives it (first lane and stride, or runs), else every lane written out (no form known).
class ShapesSource : public TraceSource {
 public:
  explicit ShapesSource(bool compact) : m_compact(compact) {}
  bool next_kernel(KernelLaunch& k) override {
    if (m_kernel) return false;
    m_kernel = true;
    k = {};
    k.name = "shapes";
    k.grid = {264, 1, 1};
    k.block = {128, 1, 1};
    k.registers_per_thread = 32;
    k.static_shared_bytes = 49152;
    return true;
  }
  bool next_block(BlockTrace& b) override {
    if (m_next == 264) return false;
    const std::uint64_t bx = m_next++;
    b.clear();
    b.index = {static_cast<std::uint32_t>(bx), 0, 0};
    for (std::uint64_t w = 0; w < 4; ++w) {
      b.begin_warp();
      for (std::uint64_t i = 0; i < 64; ++i) {
        add(b, bx, w, i);
        m_compact_records += (b.records.back().layout & kLayoutCompact) != 0 ? 1 : 0;
      }
    }
    return true;
  }
  std::uint64_t m_compact_records = 0;  // records the blocks hold compact

 protected:
  // Lanes `stride` apart, in runs of `length` lanes `step` apart where length is not 0; `at`: the region's first
  // address.
  struct Shape {
    AddressSpace space;
    AccessKind kind;
    CacheHint hint;
    std::uint8_t size;
    std::uint64_t stride;
    unsigned length = 0;
    std::uint64_t step = 0, at = 0;
  };
  static WarpRecord record(const Shape& s, std::uint64_t pc, std::uint32_t mask) {
    WarpRecord r;
    r.pc = static_cast<std::uint32_t>(pc);
    r.active_mask = mask;
    r.space = s.space;
    r.kind = s.kind;
    r.hint = s.hint;
    r.size = s.size;
    return r;
  }
  virtual void add(BlockTrace& b, std::uint64_t bx, std::uint64_t w, std::uint64_t i) = 0;
  bool m_compact;

 private:
  bool m_kernel = false;
  std::uint64_t m_next = 0;
};

// Records whose 32 lanes form runs (a two-dimensional block's thread rows): loads (through L1, .cg, atomics), stores
// and shared accesses of 1 to 16 bytes, rows of 2 to 16 lanes at strides 0 to 132 bytes, at first addresses all over
// a line and a bank row, some misaligned, with negative steps and from 2^62 (which the simulator takes lane by lane)
// among them; compact: in runs form (compact_last_runs).
class RunsSource final : public ShapesSource {
 public:
  using ShapesSource::ShapesSource;

 private:
  void add(BlockTrace& b, std::uint64_t bx, std::uint64_t w, std::uint64_t i) override {
    constexpr std::uint64_t g = 0x7f0000000000ULL;
    const std::array<Shape, 17> shapes{{
        {AddressSpace::global, AccessKind::load, CacheHint::none, 4, 0, 16, 1024, g},          // A[row][k]
        {AddressSpace::global, AccessKind::load, CacheHint::none, 4, 4, 16, 0, g + 0x100000},  // B[k][col]
        {AddressSpace::global, AccessKind::store, CacheHint::none, 4, 4, 16, 2048, g + 0x200000},
        {AddressSpace::global, AccessKind::load, CacheHint::cg, 8, 8, 8, 4096, g + 0x300000},
        {AddressSpace::global, AccessKind::load, CacheHint::none, 16, 16, 4, 256, g + 0x400000},
        {AddressSpace::global, AccessKind::store, CacheHint::none, 4, 4, 2, 132, g + 0x500000},
        {AddressSpace::global, AccessKind::load, CacheHint::none, 4, 4, 16, 68, g + 0x600000},  // dense rows
        {AddressSpace::global, AccessKind::load, CacheHint::none, 2, 2, 16, 256, g + 0x700000},
        {AddressSpace::global, AccessKind::load, CacheHint::none, 1, 1, 16, 512, g + 0x800000},
        {AddressSpace::global, AccessKind::atomic, CacheHint::none, 4, 4, 16, 0, g + 0x900000},
        {AddressSpace::global, AccessKind::load, CacheHint::none, 8, 4, 16, 0, g + 0x980000},  // B's runs, 8 bytes
        {AddressSpace::global, AccessKind::load, CacheHint::none, 4, 16, 4, ~std::uint64_t{1023}, g + 0xA00000},
        {AddressSpace::global, AccessKind::load, CacheHint::none, 4, 16, 4, 1024, std::uint64_t{1} << 62U},
        {AddressSpace::shared, AccessKind::load, CacheHint::none, 4, 0, 16, 132, 0},  // As[ty][k], padded
        {AddressSpace::shared, AccessKind::store, CacheHint::none, 4, 4, 16, 128, 4096},
        {AddressSpace::shared, AccessKind::load, CacheHint::none, 8, 8, 8, 520, 8192},
        {AddressSpace::shared, AccessKind::load, CacheHint::none, 4, 128, 8, 4, 0},  // columns
    }};
    const Shape& s = shapes[(bx * 5 + w * 3 + i) % shapes.size()];
    const WarpRecord r = record(s, 16 * ((bx + w + i) % shapes.size()), 0xFFFFFFFFU);
    // Places within 64 KiB (L1 and L2 hits), a size apart, a third of the 4-byte ones 2 bytes off.
    std::uint64_t first = s.at + (bx * 37 + w * 11 + i * 5) % (s.space == AddressSpace::shared ? 64 : 4096) * s.size;
    if (s.size == 4 && s.space == AddressSpace::global && i % 3 == 0) first += 2;
    std::array<std::uint64_t, kWarpSize> a{};
    for (unsigned l = 0; l < kWarpSize; ++l) a[l] = first + (l % s.length) * s.stride + (l / s.length) * s.step;
    b.add(r, a);
    if (m_compact) b.compact_last_runs();
  }
};

// Records of lanes a stride apart, full and partial warps: columns (strides of whole lines, 128 bytes to 64 KiB, each
// lane in a line of its own at any place, some across a line's or a sector's end), loads (through L1, .cg), stores,
// atomics, shared loads, sizes 1 to 16, a negative stride, a stride of 136 bytes; compact: first lane and stride
// (add_strided).
class StridedSource final : public ShapesSource {
 public:
  using ShapesSource::ShapesSource;

 private:
  void add(BlockTrace& b, std::uint64_t bx, std::uint64_t w, std::uint64_t i) override {
    const std::array<Shape, 22> shapes{{
        {AddressSpace::global, AccessKind::load, CacheHint::none, 4, 4096},  // softmax_naive's column
        {AddressSpace::global, AccessKind::store, CacheHint::none, 4, 8192},
        {AddressSpace::global, AccessKind::store, CacheHint::none, 16, 4096},                // a column of float4
        {AddressSpace::global, AccessKind::store, CacheHint::none, 8, ~std::uint64_t{127}},  // up, a line a lane
        {AddressSpace::global, AccessKind::load, CacheHint::none, 16, 16},                   // a row of float4
        {AddressSpace::shared, AccessKind::load, CacheHint::none, 16, 16},                   // LDS.128 of a row
        {AddressSpace::global, AccessKind::store, CacheHint::none, 4, 32},  // a field of 32-byte structures
        {AddressSpace::global, AccessKind::store, CacheHint::none, 8, 64},  // of 64-byte ones
        {AddressSpace::global, AccessKind::store, CacheHint::none, 4, 12},  // of 12-byte ones: no divisor of a line
        {AddressSpace::local, AccessKind::store, CacheHint::none, 4, 0},    // a spill slot: one offset
        {AddressSpace::local, AccessKind::load, CacheHint::none, 4, 0},
        {AddressSpace::local, AccessKind::load, CacheHint::none, 8, 0},
        {AddressSpace::local, AccessKind::store, CacheHint::none, 2, 0},
        {AddressSpace::local, AccessKind::load, CacheHint::none, 4, 4},  // a local array at the lane's index
        {AddressSpace::global, AccessKind::load, CacheHint::cg, 8, 128},
        {AddressSpace::global, AccessKind::load, CacheHint::none, 16, 256},
        {AddressSpace::global, AccessKind::store, CacheHint::none, 2, 384},
        {AddressSpace::global, AccessKind::atomic, CacheHint::none, 4, 65536},
        {AddressSpace::global, AccessKind::load, CacheHint::none, 1, 1152},
        {AddressSpace::global, AccessKind::load, CacheHint::none, 4, ~std::uint64_t{4095}},  // up the column
        {AddressSpace::shared, AccessKind::load, CacheHint::none, 4, 128},
        {AddressSpace::global, AccessKind::load, CacheHint::none, 4, 136},  // not whole lines: 2 words a bank
    }};
    const std::uint64_t pick = bx * 7 + w * 3 + i;
    const Shape& s = shapes[pick % shapes.size()];
    const WarpRecord r = record(s, 16 * (pick % shapes.size()),
                                pick % 5 == 0   ? 0x00FF00FFU
                                : pick % 7 == 0 ? 0x7FFFFFFEU
                                                : 0xFFFFFFFFU);
    const std::uint64_t at = s.space == AddressSpace::shared || s.space == AddressSpace::local
                                 ? 0
                                 : 0x7f0000000000ULL + 0x4000000 * (pick % 4);
    // Any place in a line, a size apart; every ninth half a size before a line's end, running across it, and every
    // ninth after them half a size before a sector's end, running into the next sector.
    std::uint64_t first = at + 0x20000 + (bx * 13 + w * 5 + i) * 4 % 8192 / s.size * s.size;
    if (i % 9 == 0 && s.size > 1) first = first / 128 * 128 + 128 - s.size / 2;
    if (i % 9 == 4 && s.size > 1) first = first / 128 * 128 + 64 - s.size / 2;
    const auto n = static_cast<std::size_t>(std::popcount(r.active_mask));
    std::array<std::uint64_t, kWarpSize> a{};
    for (std::size_t l = 0; l < n; ++l) a[l] = first + l * s.stride;
    const auto layout = static_cast<std::uint8_t>(kLayoutKnown | (s.stride <= 32 ? kLayoutDense : 0) |
                                                  (n == 1 || s.stride == s.size ? kLayoutGapless : 0));
    if (m_compact) {
      b.add_strided(r, n, first, s.stride, layout);
    } else {
      b.add(r, {a.data(), n});
    }
  }
};

// Every counter of `got` is `want`'s, and so are the DRAM bytes of every channel.
void check_same_counts(const KernelSim& got, const KernelSim& want) {
  for (const SimCounterInfo& i : sim_counter_table()) {
    CAPTURE(i.name);
    CHECK(got.counters.*i.field == want.counters.*i.field);
  }
  CHECK(got.dram_channel_read_bytes == want.dram_channel_read_bytes);
  CHECK(got.dram_channel_write_bytes == want.dram_channel_write_bytes);
}

// Simulates Source's records with their lanes written out, then compact on 1 and 3 threads: every counter and every
// DRAM channel's bytes the same. Returns the counters.
template <typename Source>
SimCounters same_compact_as_written() {
  Source written(false);
  const std::vector<KernelSim> want = simulate(h100(), written, {});
  CHECK(written.m_compact_records == 0);
  REQUIRE(want.size() == 1);
  for (const int threads : {1, 3}) {
    CAPTURE(threads);
    Source compact(true);
    SimOptions opt;
    opt.threads = threads;
    const std::vector<KernelSim> got = simulate(h100(), compact, opt);
    CHECK(compact.m_compact_records == 264 * 4 * 64);
    REQUIRE(got.size() == 1);
    check_same_counts(got[0], want[0]);
  }
  return want[0].counters;
}

}  // namespace

TEST_CASE("records in runs form count what their lanes written out count") {
  // The simulator takes a runs-form record's lines and banks from the last record of the same runs at the same place
  // in a line and a bank row (SmFront::RunsShape): every counter must be what the lanes give one by one.
  const SimCounters c = same_compact_as_written<RunsSource>();
  CHECK(c.global_ld_requests > 0);
  CHECK(c.shared_ld_bank_conflicts > 0);
  CHECK(c.l1_sector_hits > 0);
}

TEST_CASE("records of lanes a stride apart count what their lanes written out count") {
  // The simulator takes a compact record whose stride is whole lines as lines directly (coalesce_column), a store's
  // words without its lanes where they are each line's same words (strided_words), and a compact record's
  // banks in closed form first, and a whole warp's local access of one offset from that offset alone: every counter
  // must be what the lanes give one by one.
  const SimCounters c = same_compact_as_written<StridedSource>();
  CHECK(c.global_ld_requests > 0);
  CHECK(c.l1_sector_hits > 0);
  CHECK(c.l1_ld_wavefronts > 0);
  CHECK(c.local_ld_sectors > c.local_ld_requests);
  CHECK(c.local_st_requests > 0);
}

TEST_CASE("a description's long blocks simulated in parts count what they count whole, on any number of threads") {
  // matmul_naive at n=256: 256 blocks (one wave on the H100) of 8 warps of 2 x 256 loads and a store, which the
  // simulator takes 256 records a warp at a time.
  const std::vector<ParamOverride> sets{{"n", "256"}};
  const auto path = std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples" / "matmul_naive.yaml";
  auto whole_source = load_kernel_description(path, sets);
  WholeBlocks whole_blocks(*whole_source);
  const std::vector<KernelSim> whole = simulate(h100(), whole_blocks, {});
  REQUIRE(whole.size() == 1);
  CHECK(whole[0].counters.global_ld_requests == 256 * 8 * 2 * 256);
  for (const int threads : {1, 3}) {
    CAPTURE(threads);
    auto src = load_kernel_description(path, sets);
    SimOptions opt;
    opt.threads = threads;
    const std::vector<KernelSim> parts = simulate(h100(), *src, opt);
    REQUIRE(parts.size() == 1);
    check_same_counts(parts[0], whole[0]);
    CHECK(parts[0].achieved_warps_per_sm == whole[0].achieved_warps_per_sm);
  }
}

TEST_CASE("a .mht trace's long blocks simulated in parts count what they count whole, on any number of threads") {
  // matmul_naive at n=256 written to a .mht file: 8 warps a block of 513 records, read 256 a warp at a time.
  const auto path = std::filesystem::temp_directory_path() / "memhier_test_parts_matmul.mht";
  {
    auto src = load_kernel_description(
        std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples" / "matmul_naive.yaml", {{"n", "256"}});
    REQUIRE(write_mht(*src, path) == 1);
  }
  MhtReader whole_reader(path);
  WholeBlocks whole_blocks(whole_reader);
  const std::vector<KernelSim> whole = simulate(h100(), whole_blocks, {});
  REQUIRE(whole.size() == 1);
  CHECK(whole[0].counters.global_ld_requests == 256 * 8 * 2 * 256);
  for (const int threads : {1, 3}) {
    CAPTURE(threads);
    MhtReader reader(path);
    SimOptions opt;
    opt.threads = threads;
    const std::vector<KernelSim> parts = simulate(h100(), reader, opt);
    REQUIRE(parts.size() == 1);
    check_same_counts(parts[0], whole[0]);
  }
}

TEST_CASE("a part buffer holds about what its parts need, from a description and from a .mht trace") {
  // matmul_naive at n=256 (warps of 513 records, runs of three pool entries): warp 0's later parts, 256 records a
  // part, into one reused buffer as the scheduler refills its own. Grown by doubling, a pool of 768 entries would hold
  // 1024; given back, at most a quarter over what it holds (the counts parts give are checked above).
  const auto yaml = std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples" / "matmul_naive.yaml";
  const auto mht = std::filesystem::temp_directory_path() / "memhier_test_part_buffer.mht";
  {
    auto src = load_kernel_description(yaml, {{"n", "256"}});
    REQUIRE(write_mht(*src, mht) == 1);
  }
  MhtReader reader(mht);
  auto description = load_kernel_description(yaml, {{"n", "256"}});
  for (TraceSource* src : {static_cast<TraceSource*>(description.get()), static_cast<TraceSource*>(&reader)}) {
    KernelLaunch k;
    REQUIRE(src->next_kernel(k));
    BlockTrace first;
    first.compact_strided = true;
    first.part_records = 256;
    REQUIRE(src->next_block(first));
    REQUIRE(first.rest != nullptr);
    BlockTrace part;
    part.compact_strided = true;
    int parts = 0;
    while (first.rest->next(0, part)) {
      ++parts;
      CAPTURE(parts);
      REQUIRE(!part.addresses.empty());
      CHECK(part.addresses.capacity() <= part.addresses.size() + part.addresses.size() / 4);
    }
    CHECK(parts >= 1);
  }
}

TEST_CASE("a bad record in a later part of a block fails the simulation with the description's error") {
  // Warp 1's loads index past x from its 301st on: past the first part the simulator takes.
  const std::string yaml = test::kLateOutOfBounds;
  for (const int threads : {1, 3}) {
    CAPTURE(threads);
    SimOptions opt;
    opt.threads = threads;
    std::string error;
    try {
      run(h100(), yaml, {}, opt);
    } catch (const InputError& e) {
      error = e.what();
    }
    CHECK(error ==
          "sim.yaml:8:15: 'load': block (0,0,0) thread (32,0,0): x[2300] is outside the array (1000 elements of 4 "
          "bytes)");
  }
}

TEST_CASE("a negative work count is refused, naming the statement and the lane") {
  // Lanes 16-31 of the one warp would issue -8 instructions: no warp issues fewer than none.
  const std::string yaml =
      "kernel: k\nlaunch: {grid: 1, block: 32, registers: 16}\narrays:\n  x: {element: 4, length: 32}\nbody:\n"
      "  - work: 'threadIdx.x < 16 ? 2 : -8'\n  - load: x[threadIdx.x]\n";
  std::string error;
  try {
    run(h100(), yaml, {}, {});
  } catch (const InputError& e) {
    error = e.what();
  }
  CHECK(error == "sim.yaml:6:5: 'work': block (0,0,0) thread (16,0,0): negative work (-8)");
}

TEST_CASE("README's counter table is the simulator's counter table") {
  // Each counter's row: | `name` | `ncu metric` (or -) | meaning |, in the table's order.
  std::ifstream in(MEMHIER_TEST_README);
  REQUIRE(in);
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("| `")) rows.push_back(line);
  std::vector<std::string> want;
  for (const SimCounterInfo& i : sim_counter_table())
    want.push_back("| `" + std::string(i.name) + "` | " +
                   (i.ncu_metric.empty() ? std::string("-") : "`" + std::string(i.ncu_metric) + "`") + " | " +
                   std::string(i.description) + " |");
  // The README's other tables start their rows the same way; the counter rows must appear in order, none missing.
  auto it = rows.begin();
  for (const std::string& w : want) {
    CAPTURE(w);
    it = std::find(it, rows.end(), w);
    CHECK(it != rows.end());
    if (it == rows.end()) break;
  }
}

TEST_CASE(
    "L2 set-aside: whole ways rounded up, a window's lines held once at home; a buffer fits or thrashes by ways") {
  // The H100 probe (validate/results/h100-2026-11-22f/probe) scaled down: a 512 KiB L2 of 4 slices x 64 sets x 16
  // ways (a way: 32 KiB) and a persisting buffer of 5.5 ways (176 KiB, 5.5 lines a set) re-read 15 times while 2.75
  // MiB stream past each time. 4 set-aside ways hold no set's share, so the buffer thrashes its own lines (LRU over a
  // cycle longer than the ways); 5.2 ways asked are 6 granted, which hold every set's 5 or 6 lines, and hold them only
  // because copies that far SMs keep in their own partition stay out of the set-aside (they would make it 8 a set).
  Arch a = h100();
  a.l2.size = 512U << 10U;
  a.l2.slices = 4;
  a.l2.persisting_max = 384U << 10U;
  auto with = [&](const std::string& set_aside) {
    return run(a, persisting_kernel("45056", set_aside)).l2_persisting_hits;
  };
  const std::uint64_t rereads = 15 * 45056 * 4 / 32;  // sectors read again after the first cycle
  const std::uint64_t four_ways = with("128KiB"), six_ways = with("166KiB");
  MESSAGE("persisting hits: 4 ways ", four_ways, ", 5.2 ways asked ", six_ways, " of ", rereads);
  CHECK(four_ways < rereads / 20);
  CHECK(six_ways > rereads * 95 / 100);
  CHECK(with("192KiB") == six_ways);  // 6 ways asked: the same set-aside
}

TEST_CASE("shared-memory instruction counts include predicated-off instructions, as ncu counts them on the H100") {
  // reduction_shared's SASS (validate/results/h100-2026-11-22g): the eight halving steps are unrolled and predicated,
  // so each of a block's 8 warps issues 2 LDS per step (16) and 1 STS per step plus the first (9); warp 0 also reads
  // the block sum (1 LDS). ncu: 4227072 LDS and 2359296 STS for 32768 blocks = 129 and 72 a block.
  const SimCounters r = run_example("reduction_shared", {{"n", "2048"}});  // 4 blocks
  CHECK(r.shared_ld_requests == 4 * 129);
  CHECK(r.shared_st_requests == 4 * 72);
  // Wavefronts only from instructions with a lane on, one each (no conflicts): 2 loads in the 4, 2, 1, 1, 1, 1, 1, 1
  // warps with a thread below s = 128 ... 1, and warp 0's block-sum load: 2 * 12 + 1 = 25 a block.
  CHECK(r.shared_ld_wavefronts == 4 * 25);
  CHECK(r.global_ld_requests == 4 * 16);

  // async_copy_pipeline: every cp.async comes after three never-executed LDS (h100.yaml async_copy_predicated_loads);
  // per warp 1 + tiles cp.async (the last predicated off) and tiles LDS.128: ncu 259 LDS a warp for tiles = 64.
  const SimCounters a = run_example("async_copy_pipeline", {{"blocks", "2"}, {"tiles", "4"}});
  CHECK(a.shared_ld_requests == 2 * 8 * (4 + 3 * 5));
  CHECK(a.shared_ld_wavefronts == 2 * 8 * 4 * 4);  // LDS.128: 512 bytes a warp, 4 wavefronts
  CHECK(a.shared_async_requests == 2 * 8 * 4);     // the predicated-off copy writes nothing
}

TEST_CASE(
    "accesses reaching the last line below 2^64 and local offsets past 4 GiB are input errors; bulk copies move their "
    "bytes' sectors") {
  // One warp's record, simulated on the H100: its counters, or the error's text.
  auto run = [](const std::function<void(BlockTrace&)>& add) -> std::variant<SimCounters, std::string> {
    OneBlock src("past_top", 32, [&](BlockTrace& b) {
      b.begin_warp();
      add(b);
    });
    try {
      return simulate(h100(), src)[0].counters;
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  };
  WarpRecord one;
  one.active_mask = 1;
  one.size = 16;
  // The simulator takes addresses below the last line (kAddressEnd, 2^64 - 128). The 16 bytes below that line are a
  // sector's last half: one sector.
  const auto top = run([&](BlockTrace& b) { b.add(one, std::array<std::uint64_t, 1>{0xFFFFFFFFFFFFFF70ULL}); });
  REQUIRE(std::holds_alternative<SimCounters>(top));
  CHECK(std::get<SimCounters>(top).global_ld_sectors == 1);
  // 8 bytes further, half the access lies in the last line.
  const auto past = run([&](BlockTrace& b) { b.add(one, std::array<std::uint64_t, 1>{0xFFFFFFFFFFFFFF78ULL}); });
  REQUIRE(std::holds_alternative<std::string>(past));
  CHECK(std::get<std::string>(past) ==
        "'past_top': an access of 16 bytes at 0xffffffffffffff78 reaches the last 128 bytes of the 64-bit "
        "address space or past them, which the simulator leaves out (a damaged trace: no GPU address comes near "
        "them)");
  // A store across the two 64-byte halves of the last line: its written bytes' loop took the line's end, 2^64, for 0
  // and never ended (found by sim_fuzz).
  WarpRecord store = one;
  store.kind = AccessKind::store;
  store.size = 8;
  const auto last_line = run([&](BlockTrace& b) { b.add(store, std::array<std::uint64_t, 1>{0xFFFFFFFFFFFFFFBCULL}); });
  REQUIRE(std::holds_alternative<std::string>(last_line));
  CHECK(std::get<std::string>(last_line).find("an access of 8 bytes at 0xffffffffffffffbc reaches the last 128") !=
        std::string::npos);
  // A warp's lanes 8 bytes apart from 2^64 - 4 (they wrap to 4: a small stride, the dense path) and a gather whose
  // lane 5 lies in the last line and lane 9 runs past 2^64 (the scattered path).
  WarpRecord warp;
  warp.active_mask = 0xFFFFFFFFU;
  warp.size = 8;
  const auto wrap = run([&](BlockTrace& b) {
    std::array<std::uint64_t, 32> lanes{};
    for (std::size_t i = 0; i < lanes.size(); ++i) lanes[i] = 0xFFFFFFFFFFFFFFFCULL + 8 * i;
    b.add(warp, lanes);
  });
  REQUIRE(std::holds_alternative<std::string>(wrap));
  CHECK(std::get<std::string>(wrap).find("accesses of 8 bytes from 0xfffffffffffffffc to 0xf4 reach the last") !=
        std::string::npos);
  const auto gather = run([&](BlockTrace& b) {
    std::array<std::uint64_t, 32> lanes{};
    for (std::size_t i = 0; i < lanes.size(); ++i) lanes[i] = 0x1000 * (32 - i);
    lanes[5] = 0xFFFFFFFFFFFFFF90ULL;  // in the last line
    lanes[9] = 0xFFFFFFFFFFFFFFFCULL;  // and past 2^64
    b.add(warp, lanes);
  });
  REQUIRE(std::holds_alternative<std::string>(gather));
  CHECK(std::get<std::string>(gather).find("an access of 8 bytes at 0xffffffffffffff90 reaches the last") !=
        std::string::npos);
  const auto in_last_line = run([&](BlockTrace& b) {  // that lane alone, no lane wrapping
    std::array<std::uint64_t, 32> lanes{};
    for (std::size_t i = 0; i < lanes.size(); ++i) lanes[i] = 0x1000 * (32 - i);
    lanes[5] = 0xFFFFFFFFFFFFFF90ULL;
    b.add(warp, lanes);
  });
  CHECK(std::holds_alternative<std::string>(in_last_line));
  // Lanes 4 bytes apart from 2^64 - 64, said dense as a decoder says a small stride's (the first 16 end at 2^64 - 1,
  // the rest wrap to 0): the dense path, which took the first lane's to the last lane's sectors, refuses them.
  warp.size = 4;
  const auto dense = run([&](BlockTrace& b) {
    b.add_strided(warp, 32, 0xFFFFFFFFFFFFFFC0ULL, 4, kLayoutKnown | kLayoutDense | kLayoutGapless);
  });
  REQUIRE(std::holds_alternative<std::string>(dense));
  CHECK(std::get<std::string>(dense).find("accesses of 4 bytes from 0xffffffffffffffc0 to 0x3c reach the last") !=
        std::string::npos);
  // Local offsets: a thread's local window spans 4 GiB (Accel-Sim's); past it, an offset is not one (a global address
  // left in a local access mapped past 2^64 onto other memory).
  WarpRecord local;
  local.space = AddressSpace::local;
  local.kind = AccessKind::store;
  local.active_mask = 0xFFFFFFFFU;
  local.size = 4;
  auto local_at = [&](std::uint64_t offset) {
    return run([&](BlockTrace& b) {
      std::array<std::uint64_t, 32> lanes{};
      lanes.fill(offset);
      lanes[3] = 0;  // not one offset across the warp: lane by lane
      b.add(local, lanes);
    });
  };
  REQUIRE(std::holds_alternative<SimCounters>(local_at(0xFFFFFFFCULL)));
  const auto far_local = local_at(0x100000000ULL);
  REQUIRE(std::holds_alternative<std::string>(far_local));
  CHECK(std::get<std::string>(far_local) ==
        "'past_top': a local-memory offset of 0x100000000: past the 4 GiB a thread's local window spans "
        "(local accesses are offsets in that window)");
  const auto far_slot = run([&](BlockTrace& b) {  // one offset across the warp: a spill slot's path
    b.add_strided(local, 32, 0x7F0000000000ULL, 0, kLayoutKnown | kLayoutDense);
  });
  REQUIRE(std::holds_alternative<std::string>(far_slot));
  CHECK(std::get<std::string>(far_slot).find("a local-memory offset of 0x7f0000000000") != std::string::npos);
  // Bulk copies: 96 bytes from 0x1060 are sectors 0x83 to 0x85, the last of line 0x20 and the first two of 0x21; 0
  // bytes move nothing (from address 0 the loop ran to line 2^62); past 2^64, or past a block's shared memory
  // (H100: 227 KiB), an error.
  WarpRecord bulk;
  bulk.kind = AccessKind::bulk_copy;
  bulk.active_mask = 1;
  bulk.size = 16;
  auto copy = [&](std::uint32_t bytes, std::uint64_t at) {
    bulk.bulk_bytes = bytes;
    return run([&](BlockTrace& b) { b.add(bulk, std::array<std::uint64_t, 1>{at}); });
  };
  const auto three = copy(96, 0x1060);
  REQUIRE(std::holds_alternative<SimCounters>(three));
  CHECK(std::get<SimCounters>(three).l1_bypass_sectors == 3);
  CHECK(std::get<SimCounters>(three).dram_read_bytes == 2 * 64);  // a 64-byte granule of each line, cold
  const auto none = copy(0, 0);
  REQUIRE(std::holds_alternative<SimCounters>(none));
  CHECK(std::get<SimCounters>(none).l1_bypass_sectors == 0);
  const auto over = copy(32, 0xFFFFFFFFFFFFFFF0ULL);
  REQUIRE(std::holds_alternative<std::string>(over));
  CHECK(std::get<std::string>(over).find("an access of 32 bytes at 0xfffffffffffffff0 reaches the last") !=
        std::string::npos);
  const auto below = copy(32, 0xFFFFFFFFFFFFFF60ULL);  // the last sector below the last line: moved
  REQUIRE(std::holds_alternative<SimCounters>(below));
  CHECK(std::get<SimCounters>(below).l1_bypass_sectors == 1);
  CHECK(std::holds_alternative<std::string>(copy(33, 0xFFFFFFFFFFFFFF60ULL)));  // a byte into it: refused
  const auto large = copy(300000, 0x1000);
  REQUIRE(std::holds_alternative<std::string>(large));
  CHECK(std::get<std::string>(large) ==
        "'past_top': a bulk copy of 300000 bytes: more than a block's shared memory (232448 bytes)");
}

TEST_CASE("a .mht launch that cannot run names the .mht file, not the description the trace was made from") {
  const auto path = std::filesystem::temp_directory_path() / "memhier_test_cannot_run.mht";
  KernelLaunch launch;
  launch.name = "fat";
  launch.grid = {2, 1, 1};
  launch.block = {1024, 1, 1};
  launch.registers_per_thread = 255;  // 261,120 a block: past any SM's 65,536
  launch.source = "elsewhere/fat.yaml";
  BlockTrace block;
  block.clear();
  for (int w = 0; w < 32; ++w) {
    block.begin_warp();
    WarpRecord r;
    r.active_mask = 1;
    const std::array<std::uint64_t, 1> lane{std::uint64_t{4096} * static_cast<std::uint64_t>(w)};
    block.add(r, lane);
  }
  {
    MhtWriter writer(path);
    writer.begin_kernel(launch);
    for (std::uint32_t x = 0; x < 2; ++x) {
      block.index = {x, 0, 0};
      writer.add_block(block);
    }
    writer.end_kernel();
    writer.close();
  }
  MhtReader reader(path);
  CHECK(reader.kernels()[0].launch.source == "elsewhere/fat.yaml");  // where it was made, kept in the index
  try {
    simulate(h100(), reader, {});
    FAIL("a launch of 261,120 registers a block ran");
  } catch (const InputError& e) {
    CHECK(e.where().file == path.string());
    CHECK(std::string(e.what()).find("registers per block") != std::string::npos);
  }
  std::filesystem::remove(path);
}
