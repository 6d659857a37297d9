#include <doctest/doctest.h>

#include <cstdlib>

#include "memhier/arch_schema.h"
#include "test_support.h"

using namespace memhier;

TEST_CASE("2.1 every shipped architecture file loads and validates") {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::arch_dir())) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path());
    Arch a = load_arch_file(entry.path());
    CHECK(a.name == entry.path().stem().string());
    // Every schema key has a value with a recorded origin, so every number is traceable to a file and line.
    for (const ArchField& f : arch_fields()) {
      if (f.required) CHECK_MESSAGE(a.key_origin.contains(std::string(f.key)), f.key);
    }
    ++loaded;
  }
  CHECK(loaded == 7);
}

TEST_CASE("2.2 h100 values come through with their units") {
  Arch a = load_arch("h100");
  CHECK(a.compute_capability.major == 9);
  CHECK(a.compute_capability.minor == 0);
  CHECK(a.sm.count == 132);
  CHECK(a.l2.size == 50ULL * 1024 * 1024);
  CHECK(a.l2.persisting_max == 32768000);  // the lent H100's persistingL2CacheMaxSize
  CHECK(a.shared_memory.max_per_sm == 233472);
  CHECK(a.unified_l1.carveouts.size() == 10);
  CHECK(a.unified_l1.carveouts.back() == 228 * 1024);
  CHECK(a.dram.peak_bandwidth == test::exactly(3.35e12));
  CHECK(a.sm_clock_hz == test::exactly(1.98e9));
  CHECK(a.launch_overhead_seconds == test::exactly(3.02e-6));
  CHECK(a.launch_idle_overhead_seconds == test::exactly(5.82e-6));
  CHECK(a.overlap_exponent == 3);
  CHECK(a.l1.replacement == Replacement::plru);
  CHECK(a.l1.ways == 16);
  CHECK(a.l1.sets == 0);  // the sets follow the carveout
  CHECK(a.l2.replacement == Replacement::lru);
}

TEST_CASE("2.3 extends inherits what it does not override and records where each value came from") {
  Arch h200 = load_arch("h200");
  Arch h100 = load_arch("h100");
  CHECK(h200.name == "h200");
  CHECK(h200.l2.size == 62914560);        // overridden: the H200's l2CacheSize
  CHECK(h200.sm.count == h100.sm.count);  // inherited
  CHECK(h200.l2.line == h100.l2.line);
  CHECK(h200.key_origin.at("l2.size").file.ends_with("h200.yaml"));
  CHECK(h200.key_origin.at("sm.count").file.ends_with("h100.yaml"));
  Arch l40s = load_arch("l40s");
  CHECK(l40s.sm.max_warps_per_sm == 48);  // from rtx4090
  CHECK(l40s.sm.count == 142);
}

TEST_CASE("2.4 architectures are found by case-insensitive name, by path, and through MEMHIER_ARCH_PATH") {
  CHECK(find_arch_file("H100").filename() == "h100.yaml");
  CHECK(find_arch_file((test::arch_dir() / "a100.yaml").string()).filename() == "a100.yaml");
  auto dir = std::filesystem::temp_directory_path() / "memhier_arch_path_test";
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "myh100.yaml") << "extends: h100\nname: myh100\nfull_name: custom\nl2:\n  size: 100MiB\n"; }
  setenv("MEMHIER_ARCH_PATH", dir.c_str(), 1);
  Arch custom = load_arch("myh100");
  unsetenv("MEMHIER_ARCH_PATH");
  CHECK(custom.l2.size == 100ULL << 20);
  CHECK(custom.sm.count == 132);
  std::filesystem::remove_all(dir);
}

TEST_CASE("2.6 an accuracy record belongs to the GPU whose file sets it; a what-if inherits it as its base's") {
  const Arch h100 = load_arch("h100");
  // archs/h100.yaml: the eleventh suite run (validate/results/h100-2026-11-28b-suite), which CI re-predicts and
  // compares (tests/CMakeLists.txt accuracy_record_h100).
  CHECK(h100.accuracy.run == "validate/results/h100-2026-11-28b-suite");
  CHECK(h100.accuracy.time_mape_pct == 6.0);
  CHECK(h100.accuracy.cases == 46);
  CHECK(h100.accuracy.within_25pct == 46);
  CHECK(h100.accuracy.worst == "histogram_shared n=1<<24 seed=7 blocks=1024: -19.9%");
  CHECK(h100.accuracy.measured_on == "h100");
  const Arch h200 = load_arch("h200");  // extends h100 and sets its own
  CHECK(h200.accuracy.run == "validate/results/h200-2026-11-28-suite");
  CHECK(h200.accuracy.within_25pct == 45);
  CHECK(h200.accuracy.measured_on == "h200");
  const Arch whatif =
      load_arch_string("extends: h100\nname: h100-2xl2\nl2:\n  size: 100MiB\n  slices: 160\n", "w.yaml");
  CHECK(whatif.accuracy.run == h100.accuracy.run);
  CHECK(whatif.accuracy.measured_on == "h100");  // not "h100-2xl2": nobody measured the what-if
  CHECK(own_accuracy_record(h100));
  CHECK(own_accuracy_record(h200));
  CHECK_FALSE(own_accuracy_record(whatif));
  // By file, not by name: a what-if that keeps its base's name is not the GPU that was measured either.
  const Arch same_name = load_arch_string("extends: h100\nname: h100\nclocks:\n  sm: 1500MHz\n", "slow.yaml");
  CHECK(same_name.accuracy.run == h100.accuracy.run);
  CHECK_FALSE(own_accuracy_record(same_name));
  // Each accuracy.by_bound key sets the entry of its name in AccuracyRecord::kBoundNames (the schema lists them one by
  // one).
  for (std::size_t b = 0; b < AccuracyRecord::kBoundNames.size(); ++b) {
    CAPTURE(b);
    Arch a;
    const ArchField* f = find_arch_field(std::string("accuracy.by_bound.") + AccuracyRecord::kBoundNames[b]);
    REQUIRE(f != nullptr);
    set_arch_field(a, *f, "marked");
    for (std::size_t o = 0; o < a.accuracy.by_bound.size(); ++o)
      CHECK((a.accuracy.by_bound[o] == "marked") == (o == b));
  }
  CHECK(load_arch("b200").accuracy.run.empty());
  CHECK(load_arch("b200").accuracy.measured_on.empty());
}

TEST_CASE("2.5 fields round-trip through their textual form (what sweeps and archs show use)") {
  Arch a = load_arch("b200");
  for (const ArchField& f : arch_fields()) {
    CAPTURE(f.key);
    Arch copy = a;
    set_arch_field(copy, f, format_arch_field(a, f));
    CHECK(format_arch_field(copy, f) == format_arch_field(a, f));
  }
  set_arch_field(a, *find_arch_field("l2.size"), "25MiB");
  CHECK(a.l2.size == 25ULL << 20);
  CHECK(find_arch_field("l2.nonsense") == nullptr);
}
