// memhier-suite: runs the validation kernels. Default: per case, set up inputs, run once and check the output against
// the CPU reference, warm up, then time `--runs` runs with CUDA events (L2 flushed before each run unless the case is
// about reuse) and write one JSON record per case. `--once` runs each case once without timing, for ncu and the tracer.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "suite.h"

namespace {

struct Options {
  std::string filter = ".*";
  std::string exact;  // one case by its full id
  std::string only;   // "", "cold" or "warm"
  std::string out;
  int runs = 20;
  int warmup = 3;
  bool once = false;
  bool flush = false;  // with once: flush L2 before each cold case's launch (ncu --cache-control none)
  bool list = false;
};

const char* kUsage =
    "usage: memhier-suite [--list] [--filter REGEX] [--case ID] [--only cold|warm] [--runs N] [--warmup N] [--once]\n"
    "                     [--flush] [--out FILE]\n"
    "  --filter REGEX  cases whose id (kernel and parameters, as --list prints them) matches\n"
    "  --case ID       the one case with exactly this id\n"
    "  --only          cold: cases timed with L2 flushed between runs; warm: cases about cache reuse\n"
    "  --once          run each selected case once (twice for warm cases: warm-up, then the run that counts), no\n"
    "                  timing; records say how many launches each case made (for ncu and trace capture)\n"
    "  --flush         with --once: evict L2 (a read of 4x its size) before each cold case's launch, as before each\n"
    "                  timed run, for ncu --cache-control none (whose own flush and replay leave other L2 contents)\n"
    "  --out FILE      JSON lines (default: standard output)\n";

int int_arg(const std::string& flag, const char* value) {
  try {
    std::size_t used = 0;
    const int v = std::stoi(value, &used);
    if (used == std::string(value).size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(flag + " expects a non-negative integer, got '" + value + "'");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--filter")
      o.filter = value();
    else if (a == "--case")
      o.exact = value();
    else if (a == "--only")
      o.only = value();
    else if (a == "--out")
      o.out = value();
    else if (a == "--runs")
      o.runs = int_arg(a, value());
    else if (a == "--warmup")
      o.warmup = int_arg(a, value());
    else if (a == "--once")
      o.once = true;
    else if (a == "--flush")
      o.flush = true;
    else if (a == "--list")
      o.list = true;
    else if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else
      throw std::invalid_argument("unknown option '" + a + "'");
  }
  if (!o.only.empty() && o.only != "cold" && o.only != "warm")
    throw std::invalid_argument("--only expects cold or warm, got '" + o.only + "'");
  if (o.runs < 1) throw std::invalid_argument("--runs must be at least 1");
  if (o.flush && !o.once) throw std::invalid_argument("--flush goes with --once (timed runs always flush cold cases)");
  return o;
}

nlohmann::json environment() {
  int device = 0, driver = 0, runtime = 0, clock_khz = 0, mem_khz = 0;
  cudaDeviceProp prop{};
  SUITE_CHECK(cudaGetDevice(&device));
  SUITE_CHECK(cudaGetDeviceProperties(&prop, device));
  SUITE_CHECK(cudaDriverGetVersion(&driver));
  SUITE_CHECK(cudaRuntimeGetVersion(&runtime));
  SUITE_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  SUITE_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device));
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {{"gpu", prop.name},
          {"sm_count", prop.multiProcessorCount},
          {"l2_bytes", prop.l2CacheSize},
          {"sm_clock_max_mhz", clock_khz / 1000},
          {"memory_clock_max_mhz", mem_khz / 1000},
          {"cuda_driver_api", std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10)},  // not the
          // kernel driver's version (580.x): nvidia-smi gives that, in the scripts' environment.txt
          {"cuda_runtime", std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10)},
          {"date", date}};
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::size_t persisting_set_aside() {
  std::size_t bytes = 0;
  SUITE_CHECK(cudaDeviceGetLimit(&bytes, cudaLimitPersistingL2CacheSize));
  return bytes;
}

nlohmann::json time_case(suite::Case& c, const Options& o, suite::L2Flusher& flusher, cudaStream_t stream) {
  cudaEvent_t start = nullptr, stop = nullptr;
  SUITE_CHECK(cudaEventCreate(&start));
  SUITE_CHECK(cudaEventCreate(&stop));
  for (int w = 0; w < o.warmup; ++w) c.run(stream);
  std::vector<double> seconds;
  for (int r = 0; r < o.runs; ++r) {
    if (!c.warm) flusher.flush(stream);
    SUITE_CHECK(cudaEventRecord(start, stream));
    c.run(stream);
    SUITE_CHECK(cudaEventRecord(stop, stream));
    SUITE_CHECK(cudaEventSynchronize(stop));
    SUITE_CHECK(cudaGetLastError());
    float ms = 0;
    SUITE_CHECK(cudaEventElapsedTime(&ms, start, stop));
    seconds.push_back(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  const double median = percentile(seconds, 0.5);
  return {{"median_s", median},
          {"min_s", *std::min_element(seconds.begin(), seconds.end())},
          {"max_s", *std::max_element(seconds.begin(), seconds.end())},
          {"p10_s", percentile(seconds, 0.1)},
          {"p90_s", percentile(seconds, 0.9)},
          {"spread", (percentile(seconds, 0.9) - percentile(seconds, 0.1)) / median},
          {"runs", o.runs},
          {"warmup", o.warmup},
          {"seconds", seconds}};
}

int run(const Options& o) {
  std::vector<suite::Case> cases = suite::make_cases();
  const std::regex filter(o.filter);
  std::ofstream file;
  if (!o.out.empty()) {
    file.open(o.out);
    if (!file) throw std::runtime_error("cannot write " + o.out);
  }
  std::ostream& out = o.out.empty() ? std::cout : file;
  if (o.list) {
    for (const suite::Case& c : cases)
      std::cout << c.id() << "\t" << c.regime << (c.warm ? "\twarm" : "\tcold") << "\n";
    return 0;
  }
  const nlohmann::json env = environment();
  cudaStream_t stream = nullptr;
  SUITE_CHECK(cudaStreamCreate(&stream));
  suite::L2Flusher flusher;
  int failures = 0, selected = 0;
  for (suite::Case& c : cases) {
    if (!std::regex_search(c.id(), filter) || (!o.exact.empty() && c.id() != o.exact)) continue;
    if ((o.only == "cold" && c.warm) || (o.only == "warm" && !c.warm)) continue;
    ++selected;
    nlohmann::json rec = {{"case", c.id()},     {"kernel", c.kernel}, {"params", c.params},
                          {"regime", c.regime}, {"warm", c.warm},     {"launches_per_run", c.launches}};
    const std::size_t set_aside = persisting_set_aside();
    c.setup();
    // The L2 set aside for persisting lines while the case runs: persisting_l2_window's own, or what the device had
    // before (not 0: 3 ways on the lent H100 and H200). A case that leaves its own behind would slow the cases after
    // it (transpose_padded by 25% on the H100): refused below.
    rec["persisting_set_aside_bytes"] = persisting_set_aside();
    // Under ncu and the tracer, they control caches and kernels, unless asked (--flush).
    if (!c.warm && (!o.once || o.flush)) flusher.flush(stream);
    c.run(stream);
    SUITE_CHECK(cudaStreamSynchronize(stream));
    SUITE_CHECK(cudaGetLastError());
    const std::string problem = c.check();
    rec["check"] = problem.empty() ? "pass" : problem;
    if (!problem.empty()) ++failures;
    if (o.once) {
      if (c.warm) c.run(stream);  // the launch that counts runs on caches the first one warmed
      SUITE_CHECK(cudaStreamSynchronize(stream));
      rec["launches"] = c.launches * (c.warm ? 2 : 1);
    } else {
      rec.update(time_case(c, o, flusher, stream));
    }
    c.teardown();
    if (persisting_set_aside() != set_aside)
      throw std::runtime_error(c.id() + " left the persisting L2 set-aside at " +
                               std::to_string(persisting_set_aside()) + " bytes (it was " + std::to_string(set_aside) +
                               ")");
    rec.update(env);
    out << rec.dump() << "\n" << std::flush;
    std::cerr << c.id() << ": " << rec["check"].get<std::string>()
              << (o.once ? "" : ", median " + std::to_string(rec["median_s"].get<double>() * 1e6) + " us") << "\n";
  }
  cudaStreamDestroy(stream);
  if (selected == 0) throw std::invalid_argument("no case matches the selection (see --list)");
  if (failures > 0) std::cerr << failures << " case(s) failed the output check\n";
  return failures > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::invalid_argument& e) {
    std::cerr << "memhier-suite: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "memhier-suite: " << e.what() << "\n";
    return 1;
  }
}
