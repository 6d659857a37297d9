#include <doctest/doctest.h>
#include <fmt/format.h>

#include "test_support.h"

using namespace memhier;
using test::h100_with;
using test::load_error;

SCENARIO("3.x bad architecture files are rejected with file, line, column and key") {
  WHEN("a key is unknown") {
    auto e = load_error("extends: h100\nname: x\nl2:\n  sise: 5MiB\n");
    THEN("the error names the key, where it is, and the likely intended key") {
      CHECK(e.key() == "l2.sise");
      CHECK(e.where().file == "bad.yaml");
      CHECK(e.where().line == 4);
      CHECK(e.where().column == 3);
      CHECK(e.message().find("did you mean 'l2.size'") != std::string::npos);
    }
  }
  WHEN("a top-level section is unknown") {
    auto e = load_error("extends: h100\nname: x\nl3:\n  size: 5MiB\n");
    CHECK(e.key() == "l3");
    CHECK(e.where().line == 3);
  }
  WHEN("a list of numbers is not one") {
    const std::string list = "  setaside_write_cost: [";
    auto scalar = load_error(h100_with(list, "  setaside_write_cost: 2.5  #"));
    CHECK(scalar.key() == "l2.setaside_write_cost");
    CHECK(scalar.message().find("expected a list of numbers such as [0, 0.5]") != std::string::npos);
    auto word = load_error(h100_with(list, "  setaside_write_cost: [0, slow]  #"));
    CHECK(word.key() == "l2.setaside_write_cost");
    CHECK(word.where().line > 0);
    auto negative = load_error(h100_with(list, "  setaside_write_cost: [0, -1]  #"));
    CHECK(negative.key() == "l2.setaside_write_cost");
    CHECK(negative.message().find("expected a non-negative number, got '-1'") != std::string::npos);
  }
  WHEN("a required key is missing") {
    auto e = load_error(h100_with("  latency_cycles: 38 ", ""));
    CHECK(e.key() == "l1.latency_cycles");
    CHECK(e.message().find("missing required key") != std::string::npos);
  }
  WHEN("an SM would hold more warps than the simulator numbers (4096)") {
    std::string text = h100_with("  max_threads_per_sm: 2048 ", "  max_threads_per_sm: 262144");
    const std::string warps = "  max_warps_per_sm: 64 ";
    REQUIRE(text.find(warps) != std::string::npos);
    text.replace(text.find(warps), warps.size() - 1, "  max_warps_per_sm: 8192");
    auto e = load_error(text);
    CHECK(e.key() == "sm.max_warps_per_sm");
    CHECK(e.message().find("at most 4096") != std::string::npos);
  }
  WHEN("shared memory has more banks than the bank model's tables (64)") {
    auto e = load_error(h100_with("  banks: 32 ", "  banks: 128"));
    CHECK(e.key() == "shared_memory.banks");
    CHECK(e.message().find("at most 64") != std::string::npos);
  }
  WHEN("shared-memory banks are narrower than 4 bytes or wider than 64") {
    // Before: 4 GiB banks ended the simulation of any shared access in a division by zero (SIGFPE), and 1-byte banks
    // overflowed the bank model's table of a phase's words on 16-byte accesses.
    for (const char* width : {"  bank_width: 1B", "  bank_width: 2B", "  bank_width: 128B", "  bank_width: 4GiB"}) {
      CAPTURE(width);
      auto e = load_error(h100_with("  bank_width: 4B ", width));
      CHECK(e.key() == "shared_memory.bank_width");
      CHECK(e.message().find("from 4B to 64B") != std::string::npos);
    }
  }
  WHEN("the L1's shape is given both ways, neither way, or as a PLRU without ways") {
    CHECK(load_error(h100_with("  ways: 16 ", "  ways: 16\n  sets: 4")).key() == "l1.ways");
    auto none = load_error(h100_with("  ways: 16 ", ""));
    CHECK(none.key() == "l1.sets");
    CHECK(none.message().find("either l1.sets") != std::string::npos);
    auto plru = load_error(h100_with("  ways: 16 ", "  sets: 4"));
    CHECK(plru.key() == "l1.replacement");
    CHECK(plru.message().find("plru needs l1.ways") != std::string::npos);
    CHECK(load_error(h100_with("  ways: 16 ", "  ways: 12")).key() == "l1.ways");  // a tree needs a power of two
    CHECK(load_error(h100_with("  ways: 16 ", "  ways: 64")).key() == "l1.ways");  // more than 32
  }
  WHEN("a count has the wrong type") {
    auto e = load_error(h100_with("  count: 132", "  count: many"));
    CHECK(e.key() == "sm.count");
    CHECK(e.where().line == 14);
    CHECK(e.where().column == 10);
  }
  WHEN("a size has no unit") {
    auto e = load_error(h100_with("  size: 50MiB", "  size: 52428800"));
    CHECK(e.key() == "l2.size");
    CHECK(e.message().find("units") != std::string::npos);
  }
  WHEN("extends names what no file can be called (found by fuzzing: the file system's own error escaped)") {
    auto e = load_error("extends: " + std::string(5000, 'b') + "\nname: x\n");
    CHECK(e.key() == "extends");
    CHECK(e.where().file == "bad.yaml");
    CHECK(e.where().line == 1);
    CHECK(e.message().find("unknown architecture 'bbbb") == 0);
  }
  WHEN("a list is given where a value is expected, or a value where a mapping is expected") {
    CHECK(load_error(h100_with("  line: 128B   ", "  line: [128B]")).key() == "l1.line");
    CHECK(load_error("extends: h100\nname: x\nl2: 5MiB\n").key() == "l2");
    CHECK(load_error("extends: h100\nname: x\nl2:\n  size:\n    a: 1\n").key() == "l2.size");
  }
  WHEN("the L2 slice width lies outside a sector to a line") {
    auto e = load_error("extends: h100\nname: x\nl2:\n  slice_width: 256B\n");
    CHECK(e.key() == "l2.slice_width");
    CHECK(e.message().find("between l2.sector and l2.line") != std::string::npos);
  }
  WHEN("an L2 write beat costs nothing") {
    auto e = load_error("extends: h100\nname: x\nl2:\n  write_beat_cost: 0\n");
    CHECK(e.key() == "l2.write_beat_cost");
    CHECK(e.message().find("greater than zero") != std::string::npos);
  }
  WHEN("an L2 atomic beat costs nothing") {
    auto e = load_error("extends: h100\nname: x\nl2:\n  atom_beat_cost: 0\n");
    CHECK(e.key() == "l2.atom_beat_cost");
    CHECK(e.message().find("greater than zero") != std::string::npos);
  }
  WHEN("the constant replay cost is not positive") {
    auto e = load_error("extends: h100\nname: x\nconstant_cache:\n  replay_cycles: 0\n");
    CHECK(e.key() == "constant_cache.replay_cycles");
    CHECK(e.message().find("greater than zero") != std::string::npos);
  }
  WHEN("the constant cache's ways do not split it into a power-of-two number of sets, or misses have no cache") {
    auto e = load_error("extends: h100\nname: x\nconstant_cache:\n  associativity: 3\n");
    CHECK(e.key() == "constant_cache.associativity");
    CHECK(e.message().find("power-of-two number of sets") != std::string::npos);
    const std::string cache = "extends: h100\nname: x\nconstant_cache:\n";
    // The file turns the cache off and inherits miss_replays: the key it set is blamed (3.z).
    auto off = load_error(cache + "  associativity: 0\n");
    CHECK(off.key() == "constant_cache.associativity");
    CHECK(off.message().find("constant_cache.miss_replays needs constant_cache.associativity") == 0);
    CHECK(load_error(cache + "  miss_replays: -1\n").key() == "constant_cache.miss_replays");
  }
  WHEN("the launch and overlap constants are implausible") {
    auto idle = load_error("extends: h100\nname: x\nlaunch:\n  idle_overhead: 1us\n");
    CHECK(idle.key() == "launch.idle_overhead");
    CHECK(idle.message().find("cannot be less than launch.overhead") != std::string::npos);
    CHECK(load_error("extends: h100\nname: x\nlaunch:\n  block_cycles: 0\n").key() == "launch.block_cycles");
    auto k = load_error("extends: h100\nname: x\ntiming:\n  overlap_exponent: 0.5\n");
    CHECK(k.key() == "timing.overlap_exponent");
    CHECK(k.message().find("at least 1") != std::string::npos);
    auto text = load_error("extends: h100\nname: x\ntiming:\n  overlap_exponent: max\n");
    CHECK(text.key() == "timing.overlap_exponent");
    CHECK(text.message().find("expected a non-negative number, got 'max'") != std::string::npos);
    CHECK(text.where().line == 4);
  }
  WHEN("a key is duplicated") {
    auto e = load_error("extends: h100\nname: x\nname: y\n");
    CHECK(e.key() == "name");
    CHECK(e.where().line == 3);
    CHECK(e.message() == "duplicate key");
  }
  WHEN("the YAML itself is malformed") {
    auto e = load_error("name: [unclosed\n");
    CHECK(e.where().line >= 1);
    CHECK(e.message().find("YAML syntax error") != std::string::npos);
  }
  WHEN("the file is empty or not a mapping") {
    CHECK(load_error("").message().find("must be a YAML mapping") != std::string::npos);
    CHECK(load_error("- a\n- b\n").message().find("must be a YAML mapping") != std::string::npos);
  }
  WHEN("extends names an unknown architecture or itself") {
    CHECK(load_error("extends: nosuchgpu\nname: x\n").key() == "extends");
    auto dir = std::filesystem::temp_directory_path() / "memhier_cycle_test";
    std::filesystem::create_directories(dir);
    { std::ofstream(dir / "loop.yaml") << "extends: loop\nname: loop\n"; }
    try {
      load_arch_file(dir / "loop.yaml");
      FAIL("a cycle must be rejected");
    } catch (const InputError& e) {
      CHECK(e.message().find("too deep") != std::string::npos);
    }
    std::filesystem::remove_all(dir);
  }
  WHEN("a file that extends another does not set its own name") {
    CHECK(load_error("extends: h100\nl2:\n  size: 40MiB\n").key() == "name");
  }
  WHEN("the file does not exist") {
    try {
      load_arch_file("/nonexistent/arch.yaml");
      FAIL("must throw");
    } catch (const InputError& e) {
      CHECK(e.where().file == "/nonexistent/arch.yaml");
    }
  }
}

SCENARIO("3.y physically impossible values are rejected at the key that sets them") {
  auto key_of = [](const std::string& from, const std::string& to) { return load_error(h100_with(from, to)).key(); };
  CHECK(key_of("  carveouts: [0KiB", "  carveouts: [0KiB, 300KiB]  #") == "unified_l1.carveouts");
  CHECK(key_of("  carveouts: [0KiB", "  carveouts: [8KiB, 0KiB, 228KiB]  #") == "unified_l1.carveouts");
  CHECK(key_of("  line: 128B   ", "  line: 96B") == "l1.line");
  CHECK(key_of("  sector: 32B   ", "  sector: 256B") == "l1.sector");
  CHECK(key_of("  persisting_max: 31.25MiB", "  persisting_max: 60MiB") == "l2.persisting_max");
  CHECK(key_of("  dirty_fraction_max: 0.5 ", "  dirty_fraction_max: 1.5 ") == "l2.dirty_fraction_max");
  CHECK(key_of("  dirty_fraction_max: 0.5 ", "  dirty_fraction_max: -0.5 ") == "l2.dirty_fraction_max");
  CHECK(key_of("  partial_sectors_max: 102400 ", "  partial_sectors_max: -1 ") == "l2.partial_sectors_max");
  CHECK(key_of("  clean_ways_min: 3 ", "  clean_ways_min: 16 ") == "l2.clean_ways_min");  // every way of 16
  CHECK(key_of("  clean_ways_min: 3 ", "  clean_ways_min: -1 ") == "l2.clean_ways_min");
  CHECK(key_of("  miss_merge_sms: 2 ", "  miss_merge_sms: 4 ") == "l1.miss_merge_sms");
  CHECK(key_of("  effective_bandwidth: 2.78TB/s", "  effective_bandwidth: 4TB/s") == "dram.effective_bandwidth");
  CHECK(key_of("  row_bytes: 1KiB", "  row_bytes: 64B") == "dram.row_bytes");
  CHECK(key_of("  row_bytes: 1KiB", "  row_bytes: 3KiB") == "dram.row_bytes");
  CHECK(key_of("  row_bytes: 1KiB", "  row_bytes: 1TiB") == "dram.row_bytes");
  CHECK(key_of("  banks: 2560", "  banks: 100000000") == "dram.banks");
  CHECK(key_of("  channels: 80", "  channels: 100000000") == "dram.channels");
  CHECK(key_of("  read_activation_rate: 35.2e9", "  read_activation_rate: -1") == "dram.read_activation_rate");
  CHECK(key_of("  write_activation_rate: 24.0e9", "  write_activation_rate: -1") == "dram.write_activation_rate");
  CHECK(key_of("  max_threads_per_sm: 2048", "  max_threads_per_sm: 2000") == "sm.max_threads_per_sm");
  CHECK(key_of("  far_latency_cycles: 305", "  far_latency_cycles: 100") == "l2.far_latency_cycles");
  CHECK(key_of("  dram_fetch_granularity: 64B", "  dram_fetch_granularity: 256B") == "l2.dram_fetch_granularity");
  CHECK(key_of("  slices: 100", "  slices: 3") == "l2.partitions");
  CHECK(key_of("  warp_size: 32", "  warp_size: 64") == "sm.warp_size");
  CHECK(key_of("  replacement: plru", "  replacement: mru") == "l1.replacement");
  // Policies the simulator does not model are refused, not ignored: fifo and random anywhere, plru for the L2.
  CHECK(key_of("  replacement: plru", "  replacement: fifo") == "l1.replacement");
  CHECK(key_of("  replacement: lru ", "  replacement: random") == "l2.replacement");
  CHECK(key_of("  replacement: lru ", "  replacement: plru") == "l2.replacement");
  CHECK(key_of("compute_capability: \"9.0\"", "compute_capability: \"6.1\"") == "compute_capability");
  CHECK(key_of("compute_capability: \"9.0\"", "compute_capability: nine") == "compute_capability");

  // An override in a derived file is blamed on the derived file, not the base.
  auto e = load_error("extends: h100\nname: x\nl1:\n  line: 100B\n", "derived.yaml");
  CHECK(e.key() == "l1.line");
  CHECK(e.where().file == "derived.yaml");
  CHECK(e.where().line == 4);
}

SCENARIO("3.v an accuracy record is set whole, and its counts hold together") {
  std::string whole =
      "accuracy:\n  run: validate/results/x\n  time_mape: 9.5\n  cases: 10\n  within_25pct: 9\n"
      "  worst: \"k: -30.0%\"\n  by_bound:\n";
  for (const char* b : {"dram", "l2", "l1", "shared", "constant", "issue", "blocks", "latency"})
    whole += fmt::format("    {}: \"{}\"\n", b,
                         b == std::string("dram") ? "10 cases, MAPE 9.5%, from -30.0% to +5.0%" : "0 cases");
  REQUIRE(load_arch_string("extends: h100\nname: mine\n" + whole, "mine.yaml").accuracy.measured_on == "mine");
  WHEN("a what-if sets one of its keys") {
    // Before the rule, a changed time_mape would have passed for the what-if's own measurement beside h100's run.
    auto e = load_error("extends: h100\nname: x\naccuracy:\n  time_mape: 3\n", "whatif.yaml");
    CHECK(e.key() == "accuracy.time_mape");
    CHECK(e.where().line == 4);
    CHECK(e.message() ==
          "the accuracy record is one measurement: set all of its keys or none (missing: accuracy.run, "
          "accuracy.cases, accuracy.within_25pct, accuracy.worst, accuracy.by_bound.dram, accuracy.by_bound.l2, "
          "accuracy.by_bound.l1, accuracy.by_bound.shared, accuracy.by_bound.constant, accuracy.by_bound.issue, "
          "accuracy.by_bound.blocks, accuracy.by_bound.latency)");
  }
  WHEN("its counts or its MAPE cannot be") {
    auto replaced = [&](const std::string& from, const std::string& to) {
      std::string text = "extends: h100\nname: mine\n" + whole;
      text.replace(text.find(from), from.size(), to);
      return text;
    };
    CHECK(load_error(replaced("within_25pct: 9", "within_25pct: 11")).key() == "accuracy.within_25pct");
    CHECK(load_error(replaced("cases: 10", "cases: 0")).key() == "accuracy.cases");
    CHECK(load_error(replaced("time_mape: 9.5", "time_mape: inf")).key() == "accuracy.time_mape");
    CHECK(load_error(replaced("time_mape: 9.5", "time_mape: -1")).key() == "accuracy.time_mape");
    CHECK(load_error(replaced("run: validate/results/x", "run: \"\"")).key() == "accuracy.run");
    CHECK(load_error(replaced("worst: \"k: -30.0%\"", "worst: \"\"")).key() == "accuracy.worst");
    CHECK(load_error(replaced("l2: \"0 cases\"", "l2: \"\"")).key() == "accuracy.by_bound.l2");
  }
}

TEST_CASE("3.w a folder given for an architecture file is named as one") {
  // Before: "an architecture file must be a YAML mapping" (the folder read as an empty file).
  try {
    load_arch_file(test::arch_dir());
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.message() == "a folder, not an architecture file");
  }
}

SCENARIO("3.z a rule over several keys is blamed on the one a what-if file changed, with every key's value") {
  // Before: an arch that extends h100 and sets l2.slices: 48 was told "h100.yaml:83:9: 'l2.size': must be a whole
  // number of sets", the shipped file's line of a key the user never touched.
  WHEN("the slices no longer divide the inherited size into sets") {
    auto e = load_error("extends: h100\nname: x\nl2:\n  slices: 48\n", "whatif.yaml");
    CHECK(e.key() == "l2.slices");
    CHECK(e.where().file == "whatif.yaml");
    CHECK(e.where().line == 4);
    // 128 B x 16 ways x 48 slices = 96 KiB a set in every slice; 50 MiB = 533.33 of them: 533 x 96 KiB = 51168 KiB.
    CHECK(e.message().find("= 96KiB; the nearest sizes are 51168KiB and 51264KiB") != std::string::npos);
    CHECK(e.message().find("l2.slices = 48;") != std::string::npos);  // set here: no file named
    CHECK(e.message().find("l2.size = 50MiB from " + (test::arch_dir() / "h100.yaml").string() + ":83") !=
          std::string::npos);
  }
  WHEN("a smaller L2 falls below the inherited persisting set-aside") {
    auto e = load_error("extends: h100\nname: x\nl2:\n  size: 12.5MiB\n", "whatif.yaml");
    CHECK(e.key() == "l2.size");  // not l2.persisting_max, which the file does not set
    CHECK(e.where().line == 4);
    CHECK(e.message().find("l2.persisting_max cannot exceed l2.size (l2.persisting_max = 32000KiB from ") == 0);
  }
  WHEN("a smaller unified L1 falls below the inherited shared memory") {
    auto e = load_error("extends: h100\nname: x\nunified_l1:\n  size: 128KiB\n", "whatif.yaml");
    CHECK(e.key() == "unified_l1.size");
    CHECK(e.message().find("shared_memory.max_per_sm = 228KiB from ") != std::string::npos);
  }
  WHEN("every key of the rule is in one file") {
    auto e = load_error(h100_with("  slices: 100", "  slices: 48"));
    CHECK(e.key() == "l2.size");  // the rule's first key
    CHECK(e.message().find(" from ") == std::string::npos);
  }
  WHEN("a set in every slice is larger than the L2, or its bytes pass 2^64") {
    auto big = load_error("extends: h100\nname: x\nl2:\n  slices: 100000\n", "whatif.yaml");
    CHECK(big.key() == "l2.slices");
    CHECK(big.message().find("must hold a set in every slice") != std::string::npos);
    // 2^62 B lines x 16 ways x 100 slices is 0 modulo 2^64: the divisibility test divided by zero.
    auto wrapped = load_error("extends: h100\nname: x\nl2:\n  line: 4194304TiB\n", "whatif.yaml");
    CHECK(wrapped.key() == "l2.line");
    CHECK(wrapped.message().find("must hold a set in every slice") != std::string::npos);
  }
}
