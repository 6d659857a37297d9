// Kernel descriptions: generated addresses equal what the CUDA kernel computes (hand-computed here for small grids),
// and bad descriptions fail with file:line and key.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <span>

#include "../traces/desc/expr.h"
#include "memhier/error.h"
#include "memhier/kernel_desc.h"
#include "memhier/urand.h"
#include "test_support.h"

namespace {

using namespace memhier;

struct Generated {
  KernelLaunch launch;
  std::vector<BlockTrace> blocks;
  DescriptionInfo info;
};

Generated generate(const std::string& yaml, const std::vector<ParamOverride>& sets = {}) {
  auto src = load_kernel_description_string(yaml, "test.yaml", sets);
  Generated g;
  g.info = src->info();
  REQUIRE(src->next_kernel(g.launch));
  BlockTrace b;
  while (src->next_block(b)) g.blocks.push_back(b);
  return g;
}

InputError gen_error(const std::string& yaml, const std::vector<ParamOverride>& sets = {}) {
  try {
    generate(yaml, sets);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected an InputError");
  return InputError({}, "", "");
}

std::uint64_t base_of(const Generated& g, const std::string& name) {
  for (const auto& a : g.info.arrays)
    if (a.name == name) return a.base;
  FAIL("no array " << name);
  return 0;
}

const std::string kCopy = R"(kernel: copy
params: {n: 100}
launch: {grid: 'ceil_div(n, 128)', block: 128, registers: 16}
arrays:
  x: {element: 4, length: n}
  y: {element: 4, length: n}
body:
  - let: {i: blockIdx.x * blockDim.x + threadIdx.x}
  - if: i < n
    then:
      - load: x[i]
      - store: y[i]
)";

}  // namespace

TEST_CASE("copy with a guard: partial last warp, addresses base + 4*i") {
  Generated g = generate(kCopy);
  CHECK(g.launch.grid == Dim3{1, 1, 1});
  CHECK(g.launch.block == Dim3{128, 1, 1});
  REQUIRE(g.blocks.size() == 1);
  const BlockTrace& b = g.blocks[0];
  REQUIRE(b.warp_count() == 4);
  const std::uint64_t x = base_of(g, "x");
  const std::uint64_t y = base_of(g, "y");
  CHECK(x % (2U << 20U) == 0);  // placed like cudaMalloc: 2 MiB aligned
  CHECK(y >= x + 400);
  // warp 3 holds threads 96..127; only 96..99 pass i < 100
  auto w3 = b.warp(3);
  REQUIRE(w3.size() == 2);
  CHECK(w3[0].active_mask == 0xFU);
  CHECK(w3[0].kind == AccessKind::load);
  CHECK(w3[1].kind == AccessKind::store);
  auto a = b.lane_addresses(w3[0]);
  REQUIRE(a.size() == 4);
  for (int l = 0; l < 4; ++l) CHECK(a[static_cast<std::size_t>(l)] == x + 4 * (96 + static_cast<std::uint64_t>(l)));
  CHECK(b.lane_addresses(w3[1])[0] == y + 4 * 96);
  CHECK(b.warp(0)[0].active_mask == 0xFFFFFFFFU);
  CHECK(b.warp(0)[0].pc != b.warp(0)[1].pc);
}

TEST_CASE("--set overrides a parameter; unknown parameters are refused with a suggestion") {
  Generated g = generate(kCopy, {{"n", "300"}});
  CHECK(g.launch.grid.x == 3);
  InputError e = gen_error(kCopy, {{"nn", "3"}});
  CHECK(std::string(e.what()).find("did you mean 'n'") != std::string::npos);
  InputError twice = gen_error(kCopy, {{"n", "300"}, {"n", "600"}});  // neither wins silently
  CHECK(std::string(twice.what()) == "--set n: 'n': given twice: '300', then '600'");
}

TEST_CASE("2D block: warps take threads x-fastest; transposed tile reads on a padded tile") {
  const std::string yaml = R"(kernel: t
launch: {grid: [2, 1], block: [32, 8], registers: 16}
arrays:
  tile: {element: 4, length: 32 * 33, space: shared}
body:
  - for: j
    to: 32
    step: 8
    do:
      - load: tile[threadIdx.x * 33 + threadIdx.y + j]
)";
  Generated g = generate(yaml);
  REQUIRE(g.blocks.size() == 2);
  CHECK(g.blocks[1].index.x == 1);
  CHECK(g.launch.static_shared_bytes == 32 * 33 * 4);
  // warp 2 = threadIdx.y 2, j = 8 (second iteration): lane l reads word l*33 + 10
  const BlockTrace& b = g.blocks[0];
  auto rec = b.warp(2)[1];
  CHECK(rec.space == AddressSpace::shared);
  auto a = b.lane_addresses(rec);
  for (std::uint64_t l = 0; l < 32; ++l) CHECK(a[l] == 4 * (l * 33 + 10));
}

TEST_CASE("SIMT if/else splits the mask; divergent loop bounds retire lanes") {
  const std::string yaml = R"(kernel: d
launch: {grid: 1, block: 32, registers: 16}
arrays:
  a: {element: 8, length: 1024}
body:
  - if: threadIdx.x % 2 == 0
    then:
      - load: a[threadIdx.x]
    else:
      - store: a[threadIdx.x]
  - for: k
    to: threadIdx.x / 8 + 1
    do:
      - load: a[100 + k]
)";
  Generated g = generate(yaml);
  auto w = g.blocks[0].warp(0);
  REQUIRE(w.size() == 2 + 4);
  CHECK(w[0].active_mask == 0x55555555U);
  CHECK(w[1].active_mask == 0xAAAAAAAAU);
  CHECK(w[1].kind == AccessKind::store);
  CHECK(w[0].size == 8);
  CHECK(w[2].active_mask == 0xFFFFFFFFU);  // k = 0: all lanes
  CHECK(w[3].active_mask == 0xFFFFFF00U);  // k = 1: lanes 8..31
  CHECK(w[5].active_mask == 0xFF000000U);  // k = 3: lanes 24..31
  const std::uint64_t base = g.info.arrays[0].base;
  CHECK(g.blocks[0].lane_addresses(w[5])[0] == base + 8 * 103);
}

TEST_CASE("integer arithmetic follows C: truncating division, remainder, shifts, comparisons, ternary") {
  const std::string yaml = R"(kernel: c
params: {a: -7 / 2, b: -7 % 3, c: (1 << 4) | 3, d: '5 > 3 && 2 >= 3', e: 0x10 ^ 1, f: 'min(3, max(1, 2))', g: '3 > 2 ? 10 : 20'}
launch: {grid: 1, block: 32, registers: 16}
arrays: {x: {element: 4, length: 1}}
body: [{load: 'x[0]'}]
)";
  Generated g = generate(yaml);
  std::map<std::string, std::int64_t> p(g.info.params.begin(), g.info.params.end());
  CHECK(p["a"] == -3);
  CHECK(p["b"] == -1);
  CHECK(p["c"] == 19);
  CHECK(p["d"] == 0);
  CHECK(p["e"] == 17);
  CHECK(p["f"] == 2);
  CHECK(p["g"] == 10);
}

TEST_CASE("urand is SplitMix64: known outputs for seed 0") {
  // SplitMix64 from state 0 yields 0xe220a8397b1dcdaf, then 0x6e789e6aa1b965f4 (Steele, Lea, Flood 2014).
  CHECK(urand_bits(0, 0) == 0xe220a8397b1dcdafULL);
  CHECK(urand_bits(0, 1) == 0x6e789e6aa1b965f4ULL);
  CHECK(urand(0, 0, 0, 1000) == static_cast<std::int64_t>(0xe220a8397b1dcdafULL % 1000));
  const std::string yaml = R"(kernel: r
launch: {grid: 1, block: 32, registers: 16}
arrays: {t: {element: 4, length: 1000}}
body:
  - load: t[urand(0, threadIdx.x, 0, 1000)]
)";
  Generated g = generate(yaml);
  auto a = g.blocks[0].lane_addresses(g.blocks[0].warp(0)[0]);
  CHECK(a[1] == g.info.arrays[0].base + 4 * static_cast<std::uint64_t>(urand(0, 1, 0, 1000)));
}

TEST_CASE("vector width, async copies (two records), bulk copies, work and barriers") {
  const std::string yaml = R"(kernel: v
launch: {grid: 1, block: 64, registers: 32}
arrays:
  x: {element: 4, length: 4096}
  s: {element: 4, length: 1024, space: shared}
body:
  - work: 3
  - load: x[4 * threadIdx.x]
    vector: 4
    hint: nc
  - async_copy: x[4 * threadIdx.x]
    to: s[4 * threadIdx.x]
    vector: 4
    hint: cg
  - barrier
  - if: threadIdx.x == 0
    then:
      - bulk_copy: x[1024]
        to: s[0]
        bytes: 4096
)";
  Generated g = generate(yaml);
  auto w0 = g.blocks[0].warp(0);
  REQUIRE(w0.size() == 5);
  CHECK(w0[0].size == 16);
  CHECK(w0[0].hint == CacheHint::nc);
  CHECK(w0[0].work == 3);
  CHECK(g.blocks[0].lane_addresses(w0[0])[1] == g.info.arrays[0].base + 16);
  CHECK(w0[1].kind == AccessKind::async_copy);
  CHECK(w0[1].space == AddressSpace::global);
  CHECK(w0[2].kind == AccessKind::async_copy);
  CHECK(w0[2].space == AddressSpace::shared);
  CHECK(w0[2].pc == w0[1].pc);
  CHECK(g.blocks[0].lane_addresses(w0[2])[31] == 16 * 31);
  CHECK(w0[3].record == RecordKind::barrier);
  CHECK(w0[4].kind == AccessKind::bulk_copy);
  CHECK(w0[4].active_mask == 1U);
  CHECK(w0[4].bulk_bytes == 4096);
  CHECK(g.blocks[0].lane_addresses(w0[4])[0] == g.info.arrays[0].base + 4096);
  CHECK(g.blocks[0].warp(1).size() == 4);  // warp 1 skips the bulk copy
}

TEST_CASE("shared, dynamic shared, local and constant arrays get offsets in their own windows") {
  const std::string yaml = R"(kernel: w
launch: {grid: 1, block: 32, registers: 16}
arrays:
  a: {element: 4, length: 3, space: shared}
  b: {element: 8, length: 2, space: shared}
  d: {element: 4, length: 10, space: shared, dynamic: true}
  l: {element: 4, length: 16, space: local}
  c: {element: 4, length: 8, space: constant}
body:
  - load: l[threadIdx.x % 16]
)";
  Generated g = generate(yaml);
  CHECK(g.info.arrays[0].base == 0);
  CHECK(g.info.arrays[1].base == 16);  // 12 rounded up to 8-byte alignment
  CHECK(g.launch.static_shared_bytes == 32);
  CHECK(g.launch.dynamic_shared_bytes == 40);
  CHECK(g.info.arrays[4].base == 32);  // dynamic part starts 16-byte aligned after the static part
  CHECK(g.launch.local_bytes_per_thread == 64);
  auto a = g.blocks[0].lane_addresses(g.blocks[0].warp(0)[0]);
  CHECK(a[17] == 4);  // per-thread local offset, not a global address
}

TEST_CASE("L2 windows and set-aside come from the l2 section") {
  const std::string yaml = R"(kernel: p
launch: {grid: 1, block: 32, registers: 16}
arrays: {hot: {element: 4, length: 1024}}
l2:
  persisting_set_aside: 1MiB
  windows: [{array: hot, bytes: 2KiB, hit_ratio: 0.5}]
launches: 3
body: [{load: 'hot[threadIdx.x]'}]
)";
  auto src = load_kernel_description_string(yaml, "p.yaml");
  KernelLaunch k;
  int launches = 0;
  while (src->next_kernel(k)) ++launches;
  CHECK(launches == 3);
  REQUIRE(k.windows.size() == 1);
  CHECK(k.persisting_set_aside_bytes == 1U << 20U);
  CHECK(k.windows[0].bytes == 2048);
  CHECK(k.windows[0].hit_ratio == 0.5);
  CHECK(k.windows[0].base == src->info().arrays[0].base);
  CHECK(k.windows[0].hit_prop == L2Property::persisting);
  // A miss's property is normal or streaming: the H100's runtime refuses persisting (cudaErrorInvalidValue,
  // validate/results/h100-2026-11-27/probe/residency_limits.json).
  std::string miss = yaml;
  miss.replace(miss.find("hit_ratio: 0.5}"), 15, "hit_ratio: 0.5, miss_prop: persisting}");
  try {
    load_kernel_description_string(miss, "p.yaml");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).starts_with("p.yaml:6:"));
    CHECK(std::string(e.what()).find("'miss_prop': expected normal or streaming") != std::string::npos);
  }
}

TEST_CASE("bad descriptions name the line, column and key") {
  auto msg = [](const std::string& yaml) { return std::string(gen_error(yaml).what()); };
  const std::string head =
      "kernel: k\nlaunch: {grid: 1, block: 32, registers: 16}\narrays: {x: {element: 4, length: 8}}\n";
  CHECK(msg(head + "body: [{load: 'x[threadIdx.x]'}]\n").find("test.yaml:4:") != std::string::npos);  // out of bounds
  CHECK(msg(head + "body: [{load: 'x[threadIdx.x]'}]\n").find("x[8] is outside the array") != std::string::npos);
  CHECK(msg(head + "body: [{load: 'y[0]'}]\n").find("unknown array 'y'") != std::string::npos);
  CHECK(msg(head + "body: [{load: 'x[idx]'}]\n").find("unknown name 'idx'") != std::string::npos);
  CHECK(msg(head + "body: [{lod: 'x[0]'}]\n").find("did you mean 'load'") != std::string::npos);
  CHECK(msg(head + "body: [{load: 'x[1 / (threadIdx.x - 3)]'}]\n").find("thread (3,0,0): division by zero") !=
        std::string::npos);
  CHECK(msg(head + "body: [{load: 'x[1]', vector: 2}]\n").find("not aligned") != std::string::npos);
  // The first lane that fails is named, whichever check it fails (all lanes are checked at once first).
  CHECK(msg(head + "body: [{load: 'x[threadIdx.x - 2]'}]\n").find("thread (0,0,0): x[-2] is outside the array") !=
        std::string::npos);
  CHECK(msg(head + "body: [{load: 'x[(threadIdx.x % 4) * 2 + (threadIdx.x == 5) + (threadIdx.x == 6) * 99]', "
                   "vector: 2}]\n")
            .find("thread (5,0,0): x[3] at 0x") != std::string::npos);
  CHECK(msg(head + "body: [{load: 'x[0]'}]\nextra: 1\n").find("test.yaml:5:1: 'extra': unknown key") !=
        std::string::npos);
  CHECK(msg(head + "body: [{load: x[0}]\n").find("YAML syntax error") != std::string::npos);
  CHECK(msg("kernel: k\nlaunch: {grid: [ceil_div(1, 2)], block: 32, registers: 16}\n").find("unbalanced parentheses") !=
        std::string::npos);
  CHECK(msg("kernel: k\nlaunch: {grid: 1, block: 2048, registers: 16}\n").find("outside 1..1024") != std::string::npos);
  CHECK(msg("kernel: k\nlaunch: {grid: 1, block: 32}\n").find("registers") != std::string::npos);
  CHECK(msg(head + "body: [{for: k, to: 4, step: 0, do: [{load: 'x[0]'}]}]\n").find("loop step is 0") !=
        std::string::npos);
  CHECK(msg(head + "body: [{let: {threadIdx.x: 1}}]\n").find("cannot be assigned") != std::string::npos);
  CHECK(msg(head + "body: [{for: k, to: 4, unroll: 0, do: [{load: 'x[0]'}]}]\n")
            .find("'unroll': unroll 0: expected 1 to 256") != std::string::npos);
  CHECK(msg(head + "body: [{load: 'x[1.5]'}]\n").find("'1.5' in '1.5' is not an integer") != std::string::npos);
  // muparser reads a comma list as several results and returns the last: x[1, 2] would read x[2].
  CHECK(msg(head + "body: [{load: 'x[1, 2]'}]\n").find("'1, 2' gives 2 values") != std::string::npos);
  // A list or mapping where a name goes, a word where true or false goes (once yaml-cpp's "bad conversion", without
  // the file: found by fuzzing).
  CHECK(msg(head + "[a, b]: 1\nbody: [{load: 'x[0]'}]\n") ==
        "test.yaml:4:1: 'kernel description': a key must be a name, not a list or mapping");
  CHECK(msg(head + "body: [{let: {[i]: 1}}]\n").find("test.yaml:4:15: 'let': a key must be a name") !=
        std::string::npos);
  CHECK(msg(head + "body: [{[load]: 'x[0]'}]\n").find("test.yaml:4:9: 'body': a key must be a name") !=
        std::string::npos);
  CHECK(msg("kernel: k\nparams: {[n]: 1}\n").find("test.yaml:2:10: 'params': a key must be a name") !=
        std::string::npos);
  CHECK(msg("kernel: k\nlaunch: {grid: 1, block: 32, registers: 16}\narrays: {[x]: {element: 4, length: 8}}\n")
            .find("test.yaml:3:10: 'arrays': a key must be a name") != std::string::npos);
  CHECK(msg("kernel: k\nlaunch: {grid: 1, block: 32, registers: 16}\n"
            "arrays: {s: {element: 4, length: 8, space: shared, dynamic: maybe}}\n")
            .find("'dynamic': expected true or false") != std::string::npos);
  CHECK(msg(head + "l2: {reset_persisting: perhaps}\nbody: [{load: 'x[0]'}]\n")
            .find("test.yaml:4:24: 'reset_persisting': expected true or false") != std::string::npos);
}

TEST_CASE("unroll: iteration i of a loop runs copy i % N of its body, at the copy's own pcs") {
  const std::string yaml = R"(kernel: k
launch: {grid: 1, block: 32, registers: 16}
arrays: {x: {element: 4, length: 96}}
body:
  - for: i
    to: 2
    do:
      - for: k
        to: 3
        unroll: 2
        do:
          - load: x[k * 32 + threadIdx.x % 32]
      - barrier
)";
  Generated g = generate(yaml);
  REQUIRE(g.blocks.size() == 1);
  std::vector<std::uint32_t> pcs;
  for (const WarpRecord& r : g.blocks[0].records) pcs.push_back(r.pc);
  // load pc 16 and barrier pc 32; copy 1 of the inner loop's body sits 2^20 above copy 0; the outer loop is not
  // unrolled.
  const std::uint32_t c1 = 1U << 20U;
  CHECK(pcs == std::vector<std::uint32_t>{16, 16 + c1, 16, 32, 16, 16 + c1, 16, 32});
}

TEST_CASE("every shipped example loads and generates its first blocks") {
  const std::filesystem::path dir = std::filesystem::path(MEMHIER_TEST_TRACES_DIR) / "examples";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path().string());
    auto src = load_kernel_description(entry.path());
    KernelLaunch k;
    REQUIRE(src->next_kernel(k));
    CHECK(k.name == entry.path().stem().string());  // kernel names match file names (and kernels/ in the suite)
    BlockTrace b;
    TraceCounts c;
    for (int i = 0; i < 16 && src->next_block(b); ++i) c.add(b);
    CHECK(c.memory_instructions > 0);
    ++count;
  }
  CHECK(count >= 22);
}

TEST_CASE("predicated if: every warp that reaches it issues the body, with the lanes whose condition fails off") {
  const std::string yaml = R"(kernel: p
launch: {grid: 1, block: 64, registers: 16}
arrays:
  s: {element: 4, length: 64, space: shared}
body:
  - if: threadIdx.x < 16
    predicated: true
    then:
      - load: s[threadIdx.x]
      - if: threadIdx.x < 4
        then:
          - store: s[threadIdx.x]
      - work: 2
  - if: threadIdx.x < 16
    then:
      - load: s[threadIdx.x + 16]
)";
  Generated g = generate(yaml);
  auto w0 = g.blocks[0].warp(0);
  auto w1 = g.blocks[0].warp(1);
  REQUIRE(w0.size() == 3);
  CHECK(w0[0].active_mask == 0xFFFFU);
  CHECK(w0[1].active_mask == 0xFU);  // a nested if inside a predicated one is predicated too
  CHECK(w0[2].active_mask == 0xFFFFU);
  CHECK(w0[2].work == 2);
  REQUIRE(w1.size() == 2);  // warp 1 (threads 32-63) issues the load and the store with no lane on, skips the last if
  CHECK(w1[0].active_mask == 0U);
  CHECK(w1[0].kind == AccessKind::load);
  CHECK(w1[1].active_mask == 0U);
  CHECK(w1[1].kind == AccessKind::store);
  CHECK(g.blocks[0].lane_addresses(w1[0]).empty());
  CHECK(g.blocks[0].addresses.size() == 16 + 4 + 16);

  const std::string loop = R"(kernel: p
launch: {grid: 1, block: 32, registers: 16}
arrays: {s: {element: 4, length: 64, space: shared}}
body:
  - if: threadIdx.x < 16
    predicated: true
    then:
      - for: k
        to: 2
        do:
          - load: s[k]
)";
  InputError e = gen_error(loop);
  CHECK(e.where().line == 8);
  CHECK(e.message().find("predicated if cannot hold a loop") != std::string::npos);
  std::string bad = yaml;
  bad.replace(bad.find("predicated: true"), 16, "predicated: often");
  e = gen_error(bad);
  CHECK(e.key() == "predicated");
  CHECK(e.where().line == 7);
}

TEST_CASE("next_blocks on several threads gives next_block's blocks, and the first failing block's error") {
  // A gather with a data-dependent branch and loop: each block's records differ in count and addresses.
  const std::string yaml = R"(kernel: mixed
params: {n: 40 * 96}
launch: {grid: 'ceil_div(n, 96)', block: 96, registers: 16}
arrays:
  x: {element: 4, length: n}
  y: {element: 8, length: n}
body:
  - let: {i: blockIdx.x * blockDim.x + threadIdx.x}
  - for: k
    to: 1 + blockIdx.x % 3
    do:
      - load: 'x[urand(7, i * 4 + k, 0, n)]'
  - if: 'i % 5 < blockIdx.x % 4'
    then:
      - store: y[i]
)";
  const Generated serial = generate(yaml);
  REQUIRE(serial.blocks.size() == 40);
  for (const int threads : {2, 3, 7}) {
    for (const std::size_t request : {std::size_t{1}, std::size_t{6}, std::size_t{40}}) {
      CAPTURE(threads);
      CAPTURE(request);
      auto src = load_kernel_description_string(yaml, "test.yaml", {});
      KernelLaunch k;
      REQUIRE(src->next_kernel(k));
      std::vector<BlockTrace> got;
      for (std::vector<BlockTrace> part(request); const std::size_t n = src->next_blocks(part, threads);)
        got.insert(got.end(), part.begin(), part.begin() + static_cast<std::ptrdiff_t>(n));
      REQUIRE(got.size() == serial.blocks.size());
      for (std::size_t b = 0; b < got.size(); ++b) {
        CAPTURE(b);
        const BlockTrace& x = got[b];
        const BlockTrace& y = serial.blocks[b];
        CHECK(x.index == y.index);
        CHECK(x.warp_begin == y.warp_begin);
        REQUIRE(x.records.size() == y.records.size());
        for (std::size_t r = 0; r < x.records.size(); ++r) {
          CHECK(x.records[r].pc == y.records[r].pc);
          CHECK(x.records[r].active_mask == y.records[r].active_mask);
          const auto a = x.lane_addresses(x.records[r]);
          const auto e = y.lane_addresses(y.records[r]);
          CHECK(std::equal(a.begin(), a.end(), e.begin(), e.end()));
        }
      }
    }
  }
  // Blocks 13 and 29 divide by zero; on any thread count the error is block 13's, as reading block by block gives.
  const std::string bad = R"(kernel: bad
launch: {grid: 40, block: 32, registers: 16}
arrays: {x: {element: 4, length: 32}}
body:
  - load: 'x[threadIdx.x + 1 / ((blockIdx.x - 13) * (blockIdx.x - 29))]'
)";
  const std::string want = gen_error(bad).what();
  CHECK(want.find("block (13,0,0) thread (0,0,0): division by zero") != std::string::npos);
  for (const int threads : {2, 4, 16}) {
    CAPTURE(threads);
    auto src = load_kernel_description_string(bad, "test.yaml", {});
    KernelLaunch k;
    REQUIRE(src->next_kernel(k));
    std::vector<BlockTrace> part(40);
    std::string got;
    try {
      src->next_blocks(part, threads);
    } catch (const InputError& e) {
      got = e.what();
    }
    CHECK(got == want);
  }
}

TEST_CASE("an index that is a variable alone gives what evaluating it gives") {
  // `x[i]` and `x[ j ]` are read straight from the variables; `x[(i)]` and `x[i + 0]` go through muparser.
  const std::string yaml = R"(kernel: same
params: {n: 200}
launch: {grid: 2, block: 100, registers: 16}
arrays: {x: {element: 4, length: n}}
body:
  - let: {i: blockIdx.x * blockDim.x + threadIdx.x, j: n - 1 - i}
  - if: i % 3 != 1
    then:
      - load: x[i]
      - load: x[(i)]
      - load: x[ j ]
      - load: x[j + 0]
)";
  const Generated g = generate(yaml);
  REQUIRE(g.blocks.size() == 2);
  for (const BlockTrace& b : g.blocks)
    for (std::size_t w = 0; w < b.warp_count(); ++w) {
      const auto recs = b.warp(w);
      REQUIRE(recs.size() == 4);
      for (std::size_t pair = 0; pair < 4; pair += 2) {
        const auto direct = b.lane_addresses(recs[pair]);
        const auto evaluated = b.lane_addresses(recs[pair + 1]);
        CHECK(recs[pair].active_mask == recs[pair + 1].active_mask);
        CHECK(std::equal(direct.begin(), direct.end(), evaluated.begin(), evaluated.end()));
      }
    }
  // Block 1's warp 0: lane 0 (i = 100, 100 % 3 == 1) is off, so its first address is lane 1's: x[101] and
  // x[200 - 1 - 101] = x[98].
  const std::uint64_t base = base_of(g, "x");
  const BlockTrace& b1 = g.blocks[1];
  CHECK((b1.warp(0)[0].active_mask & 1U) == 0);
  CHECK(b1.lane_addresses(b1.warp(0)[0])[0] == base + 4 * 101);
  CHECK(b1.lane_addresses(b1.warp(0)[2])[0] == base + 4 * 98);
}

namespace {

// Runs `f` and returns the EvalError it throws.
template <typename F>
desc::EvalError eval_error(F&& f) {
  try {
    f();
  } catch (const desc::EvalError& e) {
    return e;
  }
  FAIL("expected an EvalError");
  return {};
}

}  // namespace

TEST_CASE("an expression over a warp's lanes at once gives each lane's own evaluation, errors included") {
  desc::Scope scope;
  const int a = scope.declare("a"), b = scope.declare("b"), c = scope.declare("c"), k = scope.declare("k");
  for (std::size_t l = 0; l < kWarpSize; ++l) {
    const auto x = static_cast<double>(l);
    scope.lanes(a)[l] = (x - 13) * 37;                   // negative, zero (lane 13) and positive
    scope.lanes(b)[l] = static_cast<double>(l % 7) - 2;  // -2..4, zero in lanes 2, 9, ...
    scope.lanes(c)[l] = static_cast<double>(l % 5) + 1;  // 1..5
    scope.lanes(k)[l] = static_cast<double>((l * 2654435761U) % 1000);
  }
  const std::vector<std::string> texts = {"a + b",
                                          "a - b",
                                          "a * b",
                                          "a / c",
                                          "a % c",
                                          "a << (c & 7)",
                                          "a >> c",
                                          "a & b",
                                          "a | b",
                                          "a ^ b",
                                          "a && b",
                                          "a || b",
                                          "a < b",
                                          "a > b",
                                          "a <= b",
                                          "a >= b",
                                          "a == b * 37",
                                          "a != b",
                                          "-a",
                                          "!b",
                                          "min(a, b)",
                                          "max(a, b)",
                                          "abs(a)",
                                          "ceil_div(a, c)",
                                          "urand(k, abs(a), 0, 1000)",
                                          "((a + 3) * b - c) % 7 + (a < b) * 100 - (k >> 2)"};
  // eval_lanes() over `mask` against eval_lane() lane by lane; the values, for hand checks.
  auto lanes_agree = [&](const desc::Expression& e, std::uint32_t mask) {
    std::array<std::int64_t, kWarpSize> out{};
    e.eval_lanes(scope, mask, out);
    for (std::uint32_t left = mask; left != 0; left &= left - 1) {
      const int lane = std::countr_zero(left);
      CHECK_MESSAGE(out[static_cast<std::size_t>(lane)] == e.eval_lane(scope, lane), e.text() << " lane " << lane);
    }
    return out;
  };
  const std::vector<std::uint32_t> masks = {0xFFFFFFFFU, 0x0F0F0F0FU, 0x80000001U, 0x00002000U, 0x5A5A5A5AU};
  for (const std::string& text : texts) {
    const desc::Expression e(text, scope, {"test.yaml"}, "index");
    CHECK_MESSAGE(e.vectorized(), text);
    for (const std::uint32_t mask : masks) (void)lanes_agree(e, mask);
  }
  // By hand, lane 2 (a = -407, b = 0, c = 3) and lane 20 (a = 259, b = 4, c = 1): C truncates and takes the sign
  // of the dividend.
  const auto quotient = lanes_agree(desc::Expression("a / c + a % c", scope, {"test.yaml"}, "index"), 0xFFFFFFFFU);
  CHECK(quotient[2] == -407 / 3 + -407 % 3);
  CHECK(quotient[2] == -135 - 2);
  CHECK(quotient[20] == 259 + 0);
  const auto mixed =
      lanes_agree(desc::Expression("((a + 3) * b - c) % 7 + (a < b) * 100", scope, {"test.yaml"}, "index"), ~0U);
  CHECK(mixed[2] == ((-407 + 3) * 0 - 3) % 7 + 100);  // -3 + 100
  CHECK(mixed[20] == (262 * 4 - 1) % 7);              // 1047 % 7 = 4

  // a / b: b is 0 in lanes 2, 9, 16, 23, 30. The lowest active one fails, with evaluation's message; lanes where b
  // is 0 but that are off fail nothing.
  const desc::Expression divide("a / b", scope, {"test.yaml"}, "index");
  CHECK(divide.vectorized());
  std::array<std::int64_t, kWarpSize> out{};
  const desc::EvalError full = eval_error([&] { divide.eval_lanes(scope, 0xFFFFFFFFU, out); });
  CHECK(full.lane == 2);
  CHECK(full.message == eval_error([&] { (void)divide.eval_lane(scope, 2); }).message);
  CHECK(eval_error([&] { divide.eval_lanes(scope, 0xFFFFFFF8U, out); }).lane == 9);
  divide.eval_lanes(scope, 0x00000003U, out);  // lanes 0 and 1 only
  CHECK(out[0] == (0 - 13) * 37 / -2);
  CHECK(out[1] == (1 - 13) * 37 / -1);

  // |a|^6 passes 2^53 in the lanes far from 13 (481^6 = 1.2e16 in lane 0): the lowest such lane is named.
  const desc::Expression huge("a * a * a * a * a * a", scope, {"test.yaml"}, "index");
  const desc::EvalError past = eval_error([&] { huge.eval_lanes(scope, 0xFFFFFFFFU, out); });
  int first_past = -1;
  for (int lane = 0; lane < kWarpSize && first_past < 0; ++lane)
    if (std::pow(std::fabs(scope.lanes(a)[static_cast<std::size_t>(lane)]), 6) > desc::kMaxExactValue)
      first_past = lane;
  REQUIRE(first_past >= 0);
  CHECK(past.lane == first_past);
  CHECK(past.message.find("outside +-2^53") != std::string::npos);

  // A value past 2^53 on the way is an error, not a rounded result: 2^52 * 4 in lane 5 only. With lane 5 off the
  // others are right (the warp-wide check falls back to lane by lane); with it on, lane 5 is named.
  const int big = scope.declare("big");
  for (std::size_t l = 0; l < kWarpSize; ++l)
    scope.lanes(big)[l] = l == 5 ? 4503599627370496.0 : static_cast<double>(l);
  const desc::Expression times4("big * 4 + 1", scope, {"test.yaml"}, "index");
  CHECK(times4.vectorized());
  times4.eval_lanes(scope, ~(1U << 5), out);
  CHECK(out[4] == 17);
  CHECK(out[6] == 25);
  const desc::EvalError over = eval_error([&] { times4.eval_lanes(scope, 0xFFFFFFFFU, out); });
  CHECK(over.lane == 5);
  CHECK(over.message.find("outside +-2^53 on the way") != std::string::npos);
  // (2^30 * 2^30 + 1) & 3 is 1 in C; rounded through doubles it would be 0.
  const desc::Expression rounded("(big * big + 1) & 3", scope, {"test.yaml"}, "index");
  for (std::size_t l = 0; l < kWarpSize; ++l) scope.lanes(big)[l] = 1073741824.0;
  CHECK(eval_error([&] { rounded.eval_lanes(scope, 0xFFFFFFFFU, out); }).lane == 0);
  CHECK(eval_error([&] { (void)rounded.eval_lane(scope, 3); }).message.find("on the way") != std::string::npos);
  // Literals past 2^53 are refused when the expression is read, naming them; 2^53 itself and leading zeros are fine.
  CHECK(desc::Expression("9007199254740992 - big", scope, {"test.yaml"}, "index").eval_lane(scope, 0) ==
        9007199254740992 - 1073741824);
  CHECK(desc::Expression("0x000000000000000000001 + 0000000000000000000002", scope, {"test.yaml"}, "index")
            .eval_lane(scope, 0) == 3);
  for (const char* text : {"9007199254740993 + big", "0x20000000000001", "99999999999999999999 & 1"}) {
    CAPTURE(text);
    try {
      (void)desc::Expression(text, scope, {"test.yaml"}, "index");
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("is past 2^53") != std::string::npos);
    }
  }

  // ceil_div of constants fails when evaluated, not silently when compiled (muparser folds constant functions).
  const desc::Expression zero_divisor("ceil_div(8, 0) + a", scope, {"test.yaml"}, "index");
  CHECK(eval_error([&] { (void)zero_divisor.eval_lane(scope, 0); }).message.find("ceil_div") != std::string::npos);
  CHECK(eval_error([&] { zero_divisor.eval_lanes(scope, 0xFFFFFFFFU, out); }).lane == 0);

  // More than 16 operands waiting at once: lane by lane, with the same values.
  std::string nested = "a";
  for (int i = 0; i < 17; ++i) nested = "b + (" + nested + ")";
  const desc::Expression deep(nested, scope, {"test.yaml"}, "index");
  CHECK_FALSE(deep.vectorized());
  (void)lanes_agree(deep, 0xFFFFFFFFU);

  // The ternary's jumps are left to evaluation lane by lane, with the same values.
  const desc::Expression pick("a > b ? a : b * 3", scope, {"test.yaml"}, "index");
  CHECK_FALSE(pick.vectorized());
  const auto picked = lanes_agree(pick, 0xFFFFFFFFU);
  CHECK(picked[2] == 0);     // a = -407 < b = 0: b * 3
  CHECK(picked[20] == 259);  // a > b: a
}

TEST_CASE("a warp's values come out exact at the edges of the fast conversion and up to 2^53") {
  // Lanes within +-(2^51 - 1) convert on their bits; past that (up to 2^53) each lane is converted as it is. Every
  // value below is written out by hand; lane 31 moves between the two ways.
  desc::Scope scope;
  const int wide = scope.declare("wide"), zero = scope.declare("zero");
  constexpr std::int64_t kEdge = (std::int64_t{1} << 51) - 1;
  const std::array<std::int64_t, 10> edges = {
      kEdge,           -kEdge, kEdge - 1, -kEdge + 1, 0, -1, 1, std::int64_t{1} << 40, -(std::int64_t{1} << 40) - 3,
      2251799813685246};
  std::array<std::int64_t, kWarpSize> want{};
  for (std::size_t l = 0; l < kWarpSize; ++l)
    want[l] = l < edges.size() ? edges[l] : static_cast<std::int64_t>(l) * 1000 - 7;
  const desc::Expression plus_zero("wide + zero", scope, {"test.yaml"}, "index");
  REQUIRE(plus_zero.vectorized());
  scope.set_uniform(zero, 0);
  for (const std::int64_t last :
       {std::int64_t{24993}, kEdge + 1, -kEdge - 1, kEdge + 2, -kEdge - 2, (std::int64_t{1} << 52) - 1,
        std::int64_t{1} << 52, (std::int64_t{1} << 53) - 1, std::int64_t{1} << 53, -(std::int64_t{1} << 53)}) {
    CAPTURE(last);
    want[31] = last;
    for (std::size_t l = 0; l < kWarpSize; ++l) scope.lanes(wide)[l] = static_cast<double>(want[l]);
    std::array<std::int64_t, kWarpSize> out{};
    plus_zero.eval_lanes(scope, 0xFFFFFFFFU, out);
    CHECK(out == want);
  }
  // Past 2^53 in one lane: that lane is named, whether an operator or the result finds it.
  scope.lanes(wide)[7] = 9007199254740994.0;
  std::array<std::int64_t, kWarpSize> out{};
  CHECK(eval_error([&] { plus_zero.eval_lanes(scope, 0xFFFFFFFFU, out); }).lane == 7);
  const desc::Expression alone("wide", scope, {"test.yaml"}, "index");
  REQUIRE(alone.vectorized());
  CHECK(eval_error([&] { alone.eval_lanes(scope, 0xFFFFFFFFU, out); }).lane == 7);
}

TEST_CASE("a let's whole warp of values and an if's taken lanes come out exact on both sides of +-2^51") {
  // A let converts a whole warp on the values' bits within [-2^51, 2^51) and lane by lane past it; an if takes the
  // lanes whose condition is not 0. big = 2^51 - 16 + lane (lanes 16 on past 2^51), neg = lane - 16 (the bits' way,
  // negative in lanes 0-15), low = -2^51 - 17 + lane (lanes 0-16 below -2^51): the ifs take lane 16, every lane but
  // 16 (neg itself as the condition) and lane 17, and a[big - (2^51 - 16) + neg + 16] is a[2 x lane].
  const std::string yaml = R"(kernel: conv
launch: {grid: 1, block: 32, registers: 16}
arrays:
  a: {element: 4, length: 64}
body:
  - let: {big: threadIdx.x + 2251799813685232}
  - let: {neg: threadIdx.x - 16}
  - let: {low: threadIdx.x - 2251799813685265}
  - if: big == 2251799813685248
    then:
      - load: a[0]
  - if: neg
    then:
      - load: a[1]
  - if: low == -2251799813685248
    then:
      - load: a[2]
  - load: a[big - 2251799813685232 + neg + 16]
)";
  const Generated g = generate(yaml);
  const auto w = g.blocks[0].warp(0);
  REQUIRE(w.size() == 4);
  CHECK(w[0].active_mask == 1U << 16U);
  CHECK(w[1].active_mask == 0xFFFEFFFFU);  // neg is 0 in lane 16 alone
  CHECK(w[2].active_mask == 1U << 17U);
  const auto lanes = g.blocks[0].lane_addresses(w[3]);
  REQUIRE(lanes.size() == 32);
  const std::uint64_t base = g.info.arrays[0].base;
  for (std::size_t l = 0; l < 32; ++l) CHECK(lanes[l] == base + 8 * l);
}

TEST_CASE("a loop with the same bounds in every lane runs its lanes together and leaves other lanes' variable alone") {
  // Lanes 0..15 run k = 2, 5, 8 (ending at 11); lanes 16..31 never reach the loop and keep k = 40 + lane. Counting
  // down with the same bounds gives k = 9, 6, 3 (ending at 0). A step of 0 is refused naming the lane.
  const std::string yaml = R"(kernel: u
launch: {grid: 1, block: 32, registers: 16}
arrays:
  a: {element: 4, length: 1024}
body:
  - let: {k: 40 + threadIdx.x}
  - if: threadIdx.x < 16
    then:
      - for: k
        from: 2
        to: 10
        step: 3
        do:
          - load: a[k]
  - load: a[k]
  - for: j
    from: 9
    to: 0
    step: -3
    do:
      - store: a[j]
)";
  const Generated g = generate(yaml);
  const auto w = g.blocks[0].warp(0);
  REQUIRE(w.size() == 3 + 1 + 3);
  const std::uint64_t base = g.info.arrays[0].base;
  for (int it = 0; it < 3; ++it) {
    CHECK(w[static_cast<std::size_t>(it)].active_mask == 0x0000FFFFU);
    const auto lanes = g.blocks[0].lane_addresses(w[static_cast<std::size_t>(it)]);
    CHECK(std::all_of(lanes.begin(), lanes.end(),
                      [&](std::uint64_t x) { return x == base + 4 * static_cast<std::uint64_t>(2 + 3 * it); }));
  }
  const auto after = g.blocks[0].lane_addresses(w[3]);
  REQUIRE(after.size() == 32);
  for (std::size_t l = 0; l < 32; ++l) CHECK(after[l] == base + 4 * (l < 16 ? 11 : 40 + l));
  for (int it = 0; it < 3; ++it) {
    CHECK(w[static_cast<std::size_t>(4 + it)].active_mask == 0xFFFFFFFFU);
    CHECK(g.blocks[0].lane_addresses(w[static_cast<std::size_t>(4 + it)])[31] ==
          base + 4 * static_cast<std::uint64_t>(9 - 3 * it));
  }
  std::string zero = yaml;
  zero.replace(zero.find("step: -3"), 8, "step: 0");
  const InputError e = gen_error(zero);
  CHECK(std::string(e.what()).find("loop step is 0") != std::string::npos);
  CHECK(std::string(e.what()).find("thread (0,0,0)") != std::string::npos);
}

namespace {

// Generates the description's blocks twice, written out and as the simulator asks (BlockTrace::compact_strided), checks
// that each record's lanes are the same and the written-out one is not compact, and calls per_record(full record,
// compact record, its lanes) for each record and per_block(full block, compact block) after each block.
template <typename PerRecord, typename PerBlock>
void full_and_compact(const std::string& yaml, PerRecord&& per_record, PerBlock&& per_block) {
  auto full_src = load_kernel_description_string(yaml, "test.yaml", {});
  auto compact_src = load_kernel_description_string(yaml, "test.yaml", {});
  KernelLaunch k;
  REQUIRE(full_src->next_kernel(k));
  REQUIRE(compact_src->next_kernel(k));
  BlockTrace full, compact;
  compact.compact_strided = true;
  while (full_src->next_block(full)) {
    REQUIRE(compact_src->next_block(compact));
    REQUIRE(full.records.size() == compact.records.size());
    CHECK(compact.lanes == full.lanes);
    LaneBuffer buffer;
    for (std::size_t i = 0; i < full.records.size(); ++i) {
      const WarpRecord& f = full.records[i];
      const WarpRecord& c = compact.records[i];
      const auto want = full.lane_addresses(f);
      const auto got = compact.lane_addresses(c, buffer);
      CHECK(std::equal(want.begin(), want.end(), got.begin(), got.end()));
      CHECK((f.layout & kLayoutFormBits) == 0);
      per_record(f, c, want);
    }
    per_block(full, compact);
  }
}

}  // namespace

TEST_CASE("strided lanes go into a simulator's block compact, with the addresses and layout of the full form") {
  // x[i] (stride 4, gapless), x[2 * i] (stride 8), x[0] (stride 0), a partial warp (lanes 0..3), a gather that is
  // not strided, and x[i] with a whole warp's last lane 5 elements on (not strided there; warp 1's 4 lanes are).
  const std::string yaml = R"(kernel: s
params: {n: 100}
launch: {grid: 2, block: 36, registers: 16}
arrays: {x: {element: 4, length: 1000}}
body:
  - let: {i: blockIdx.x * blockDim.x + threadIdx.x}
  - load: x[i]
  - load: x[2 * i]
  - load: x[0]
  - load: x[(i * i) % 997]
  - load: x[i + (threadIdx.x == 31) * 5]
)";
  int compact_records = 0;
  full_and_compact(
      yaml,
      [&](const WarpRecord& f, const WarpRecord& c, std::span<const std::uint64_t> want) {
        CHECK((f.layout & ~kLayoutFormBits) == (c.layout & ~kLayoutFormBits));
        if ((f.layout & kLayoutKnown) != 0) CHECK(f.layout == lane_layout(want, f.size));
        compact_records += (c.layout & kLayoutCompact) != 0 ? 1 : 0;
      },
      [](const BlockTrace& full, const BlockTrace& compact) {
        CHECK(compact.addresses.size() < full.addresses.size());
      });
  // Per block: warp 0's three strided loads (32 lanes), warp 1's (4 lanes) too, and warp 1's last; the gather never.
  CHECK(compact_records == 2 * 7);
}

TEST_CASE("a two-dimensional block's rows go into a simulator's block as runs, with the lanes of the full form") {
  // A 16 x 16 block: a warp is two thread rows of 16. A[row][k] is one address a row (runs of 16, stride 0, the second
  // row 64 floats on), B[k][col] the same 16 columns in both rows (stride 4, step 0), C[row][col] two rows of 16
  // columns (stride 4, step 256: runs of 16), x in pairs 8 bytes apart, each pair 256 on (runs of 2); a gather and a
  // warp with a lane off are kept whole.
  const std::string yaml = R"(kernel: rows
launch: {grid: 2, block: [16, 16], registers: 16}
arrays: {A: {element: 4, length: 4096}, B: {element: 4, length: 4096}, C: {element: 4, length: 4096},
         x: {element: 4, length: 4096}}
body:
  - let: {row: threadIdx.y + blockIdx.x * 16, col: threadIdx.x}
  - load: A[row * 64 + 3]
  - load: B[5 * 64 + col]
  - load: C[row * 64 + col]
  - load: x[col % 2 * 2 + (col / 2 + 8 * (row % 2)) * 64]
  - load: x[(row * 37 + col * col) % 4096]
  - if: col != 5
    then:
      - load: C[row * 64 + col]
)";
  std::map<unsigned, int> runs;  // records in runs form, by run length
  std::size_t pool = 0;
  full_and_compact(
      yaml,
      [&](const WarpRecord&, const WarpRecord& c, std::span<const std::uint64_t> want) {
        if ((c.layout & kLayoutRuns) != 0) {
          CHECK((c.layout & ~kLayoutFormBits) == lane_layout(want, c.size));  // what the lanes are, worked out
          pool += 3;
        } else {
          pool += (c.layout & kLayoutCompact) != 0 ? 2 : want.size();
        }
      },
      [&](const BlockTrace& full, const BlockTrace& compact) {
        for (std::size_t i = 0; i < compact.records.size(); ++i) {
          const WarpRecord& c = compact.records[i];
          if ((c.layout & kLayoutRuns) == 0) continue;
          const auto want = full.lane_addresses(full.records[i]);
          CHECK(compact.first_last(c) == std::pair{want.front(), want.back()});
          ++runs[compact.runs(c).length];
        }
        CHECK(compact.addresses.size() == pool);
        pool = 0;
      });
  // Each block's 8 warps: A, B and C as runs of 16, x as runs of 2; the gather never, the masked C load never.
  CHECK(runs == std::map<unsigned, int>{{16, 2 * 8 * 3}, {2, 2 * 8}});
}

TEST_CASE("lane runs: the longest length that fits, none for one stride, a gather or a lane off the pattern") {
  auto lanes = [](unsigned length, std::uint64_t stride, std::uint64_t step) {
    std::array<std::uint64_t, kWarpSize> a{};
    for (unsigned l = 0; l < kWarpSize; ++l) a[l] = 0x1000 + (l % length) * stride + (l / length) * step;
    return a;
  };
  for (const unsigned length : {2U, 4U, 8U, 16U}) {
    CAPTURE(length);
    const auto a = lanes(length, 8, 1000);
    const auto x = find_lane_runs(a);
    REQUIRE(x);
    CHECK(x->length == length);
    CHECK(x->first == 0x1000);
    CHECK(x->stride == 8);
    CHECK(x->step == 1000);
    std::array<std::uint64_t, kWarpSize> back{};
    fill_runs(back, *x);
    CHECK(back == a);
    auto off = a;
    off[31] += 4;  // the last lane out of its run
    CHECK(!find_lane_runs(off));
  }
  // Runs of 8 that are also runs of 16 with another step? No: runs of 16 need lane 8 one stride on, so 8 it is; a
  // negative step (rows going down) wraps as the addresses do.
  CHECK(find_lane_runs(lanes(8, 4, static_cast<std::uint64_t>(-256)))->length == 8);
  CHECK(!find_lane_runs(lanes(32, 4, 0)));   // one stride: add_strided's form
  CHECK(!find_lane_runs(lanes(16, 4, 64)));  // the same: runs of 16 lanes 4 apart, 64 on
  std::array<std::uint64_t, kWarpSize> gather{};
  for (unsigned l = 0; l < kWarpSize; ++l) gather[l] = 0x1000 + (l * l * 37) % 4096 * 4;
  CHECK(!find_lane_runs(gather));
  CHECK(!find_lane_runs(std::span<const std::uint64_t>(gather.data(), 16)));  // a partial warp
  // A lane off its run anywhere (each lane in turn, in each run length): no runs of that length.
  for (const unsigned length : {2U, 4U, 8U, 16U})
    for (unsigned l = 1; l < kWarpSize; ++l) {
      auto off = lanes(length, 8, 1000);
      off[l] += 4;
      const auto x = find_lane_runs(off);
      CHECK((!x || x->length != length));
    }
}

TEST_CASE("runs_layout gives what lane_layout finds in the lanes written out") {
  // Dense (every lane at most 32 bytes above the one before) and gapless (exactly a size above) from the distances
  // within a run and across runs, for every run length, strides and steps on both sides of each edge, negative ones
  // included, and every size.
  const std::uint64_t down = static_cast<std::uint64_t>(-64);
  for (const unsigned length : {2U, 4U, 8U, 16U})
    for (const std::uint64_t stride : std::array<std::uint64_t, 9>{0, 1, 2, 4, 8, 16, 32, 33, 128})
      for (const std::uint64_t across : std::array<std::uint64_t, 9>{0, 1, 4, 8, 16, 32, 33, 1000, down})
        for (const unsigned size : {1U, 2U, 4U, 8U, 16U}) {
          CAPTURE(length);
          CAPTURE(stride);
          CAPTURE(across);
          CAPTURE(size);
          const LaneRuns x{0x7f0000001000ULL, stride, across + (length - 1) * stride, length};
          std::array<std::uint64_t, kWarpSize> a{};
          fill_runs(a, x);
          CHECK(runs_layout(x, size) == lane_layout(a, size));
        }
}

namespace {

// A warp's records as the simulator sees them: every field, and the lanes (a compact record's written out).
struct SeenRecord {
  WarpRecord r;
  std::vector<std::uint64_t> lanes;
  bool operator==(const SeenRecord& o) const {
    return r.pc == o.r.pc && r.active_mask == o.r.active_mask && r.work == o.r.work && r.bulk_bytes == o.r.bulk_bytes &&
           r.record == o.r.record && r.space == o.r.space && r.kind == o.r.kind && r.hint == o.r.hint &&
           r.size == o.r.size && r.layout == o.r.layout && lanes == o.lanes;
  }
};
void append_seen(const BlockTrace& b, std::size_t w, std::vector<SeenRecord>& out) {
  for (const WarpRecord& r : b.warp(w)) {
    LaneBuffer buffer;
    const std::span<const std::uint64_t> a = b.lane_addresses(r, buffer);
    out.push_back({r, {a.begin(), a.end()}});
  }
}

}  // namespace

TEST_CASE("a block in parts: each warp's first records, then the rest part by part, are the records of the whole") {
  // Loops whose variables, unrolled copy and pending work must carry across a part's end: a counted loop unrolled 3
  // times around a loop whose bounds differ by lane, an if/else, a predicated if, async copies (two records), barriers.
  const std::string yaml = R"(kernel: parts
params: {n: 64 * 96}
launch: {grid: 5, block: 96, registers: 32}
arrays:
  x: {element: 4, length: n}
  y: {element: 8, length: n}
  s: {element: 4, length: 96, space: shared}
body:
  - let: {i: blockIdx.x * blockDim.x + threadIdx.x, acc: 0}
  - for: k
    to: 40 + blockIdx.x
    unroll: 3
    do:
      - let: {acc: acc + k}
      - work: 1 + k % 4
      - for: j
        to: threadIdx.x % 3 + k % 2
        do:
          - load: 'x[(i * 7 + j * 33 + acc) % n]'
      - if: (i + k) % 4 == 0
        then:
          - store: 'y[(i + k * 96) % n]'
        else:
          - load: 'y[(i * 3 + k) % n]'
      - if: threadIdx.x % 2 == 0
        predicated: true
        then:
          - load: s[threadIdx.x]
          - work: 2
      - async_copy: 'x[(i + k) % n]'
        to: s[threadIdx.x]
      - barrier
  - store: 'x[(i + acc) % n]'
)";
  auto whole_source = load_kernel_description_string(yaml, "parts.yaml", {});
  KernelLaunch k;
  REQUIRE(whole_source->next_kernel(k));
  std::vector<std::vector<std::vector<SeenRecord>>> whole;  // block, warp, records
  BlockTrace b;
  b.compact_strided = true;
  while (whole_source->next_block(b)) {
    CHECK(!b.rest);  // no part asked for: whole
    whole.emplace_back(b.warp_count());
    for (std::size_t w = 0; w < b.warp_count(); ++w) append_seen(b, w, whole.back()[w]);
  }
  REQUIRE(whole.size() == 5);
  REQUIRE(whole[0][0].size() > 200);
  for (const std::size_t part : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{100000}}) {
    for (const int threads : {1, 3}) {
      CAPTURE(part);
      CAPTURE(threads);
      auto src = load_kernel_description_string(yaml, "parts.yaml", {});
      REQUIRE(src->next_kernel(k));
      std::vector<BlockTrace> blocks(5);
      for (BlockTrace& t : blocks) {
        t.compact_strided = true;
        t.part_records = part;
      }
      REQUIRE(src->next_blocks(blocks, threads) == 5);
      for (std::size_t i = 0; i < blocks.size(); ++i) {
        const BlockTrace& first = blocks[i];
        CHECK(static_cast<bool>(first.rest) == (part < whole[i][0].size()));
        REQUIRE(first.warp_count() == whole[i].size());
        for (std::size_t w = 0; w < first.warp_count(); ++w) {
          std::vector<SeenRecord> got;
          append_seen(first, w, got);
          // A part: `part` records, or one more where its last access is an async copy's pair.
          if (got.size() < whole[i][w].size()) CHECK((got.size() == part || got.size() == part + 1));
          BlockTrace more;
          more.compact_strided = true;
          while (first.rest && first.rest->next(w, more)) {
            const std::size_t before = got.size();
            append_seen(more, 0, got);
            if (got.size() < whole[i][w].size())
              CHECK((got.size() - before == part || got.size() - before == part + 1));
          }
          CHECK(more.records.empty());  // the warp's end: an empty part
          CHECK(got == whole[i][w]);
        }
      }
    }
  }
}

TEST_CASE("a block in parts raises a bad record's error when its part is made, as the whole block does") {
  // Warp 1's lanes index past x from k = 300 on (its 301st record; warp 0 stays within): its first part (100 records)
  // and next two are fine, the fourth fails.
  const std::string yaml = test::kLateOutOfBounds;
  const InputError whole = gen_error(yaml);
  CHECK(std::string(whole.what()).find("thread (32,0,0): x[2300] is outside the array") != std::string::npos);
  auto src = load_kernel_description_string(yaml, "test.yaml", {});
  KernelLaunch k;
  REQUIRE(src->next_kernel(k));
  BlockTrace b;
  b.part_records = 100;
  REQUIRE(src->next_block(b));
  REQUIRE(b.rest);
  BlockTrace more;
  while (b.rest->next(0, more)) {
  }
  std::string error;
  int parts = 0;
  try {
    while (b.rest->next(1, more)) ++parts;
  } catch (const InputError& e) {
    error = e.what();
  }
  CHECK(parts == 2);
  CHECK(error == std::string(whole.what()));
}
