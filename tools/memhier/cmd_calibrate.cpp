// `memhier calibrate --arch NAME --measurements REPORT.json -o FITTED.yaml`: refits the launch overhead and the
// throughput constants of an architecture from a `memhier validate` report (measured times + the model's terms), and
// writes a copy of the arch file with the fitted values, each marked with the fit it came from, and the residuals.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <type_traits>

#include "cli_common.h"
#include "commands.h"
#include "memhier/arch_loader.h"
#include "memhier/calibrate.h"
#include "memhier/error.h"

namespace memhier::cli {
namespace fs = std::filesystem;
namespace {

// Each case's measured time and predicted time less launch overheads. The fit has one overhead per launch, so a case
// whose first launch found the GPU idle (launch.idle_overhead) has the surplus over launch.overhead taken off its
// measured time first.
std::vector<TimingMeasurement> read_measurements(const fs::path& file, double launch_overhead) {
  if (fs::is_directory(file))
    throw InputError({file.string()}, "", "a folder: give the report.json that memhier validate wrote in it");
  std::ifstream in(file);
  if (!in) throw InputError({file.string(), 0, 0, -1}, "", "cannot open");
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw InputError({file.string()}, "", "not JSON (a memhier validate report.json is)");
  if (!j.is_object() || !j.contains("cases"))
    throw InputError({file.string(), 0, 0, -1}, "cases", "not a memhier validate report (report.json with \"cases\")");
  std::vector<TimingMeasurement> m;
  const auto& cases = j["cases"];
  if (!cases.is_array()) throw InputError({file.string(), 0, 0, -1}, "cases", "expected a list of cases");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    if (!c.is_object() || !c.contains("described") || !c["described"].is_object() ||
        !c["described"].contains("bound_seconds"))
      continue;
    const auto& d = c["described"];
    // A field of the wrong type names its place in the report, e.g. cases[3].described.launch_seconds.
    const auto field = [&](const nlohmann::json& obj, const std::string& path, const char* key, auto fallback) {
      if (!obj.contains(key)) return fallback;
      const auto& v = obj[key];
      using T = decltype(fallback);
      const bool ok = std::is_same_v<T, std::string> ? v.is_string() : v.is_number();
      if (!ok)
        throw InputError({file.string(), 0, 0, -1}, fmt::format("cases[{}].{}{}", i, path, key),
                         std::is_same_v<T, std::string> ? "expected text" : "expected a number");
      return v.get<T>();
    };
    const int launches = field(d, "described.", "launches", 1);
    const double launch_s = field(d, "described.", "launch_seconds", launches * launch_overhead);
    const double surplus = launch_s - launches * launch_overhead;
    m.push_back({field(c, "", "case", std::string()), field(c, "", "measured_s", 0.0) - surplus, launches,
                 field(d, "described.", "bound", std::string()), field(d, "described.", "bound_seconds", 0.0)});
  }
  return m;
}

}  // namespace

int run_calibrate(const std::vector<std::string>& args) {
  po::options_description options("options");
  options.add_options()                                                                                              //
      ("arch", po::value<std::string>()->required(), "architecture whose constants are refitted")                    //
      ("measurements", po::value<std::string>()->required(), "report.json written by memhier validate")              //
      ("output,o", po::value<std::string>()->required(), "fitted architecture file to write")                        //
      ("min-cases", po::value<int>()->default_value(2), "fit a resource only when this many cases are bound by it")  //
      ("force", "replace the output if it exists");
  po::variables_map vm;
  if (!parse("calibrate", "--arch NAME --measurements REPORT.json -o FITTED.yaml", args, options, {}, vm))
    return kExitOk;
  const int min_cases = vm["min-cases"].as<int>();
  if (min_cases < 1)
    throw UsageError(fmt::format("memhier calibrate: --min-cases {}: a fit needs at least 1 case", min_cases));
  const fs::path out = vm["output"].as<std::string>();
  if (fs::exists(out) && vm.count("force") == 0U)
    throw UsageError(fmt::format("memhier calibrate: {} exists; pass --force to replace it", out.string()));
  const fs::path arch_file = find_arch_file(vm["arch"].as<std::string>());
  const Arch arch = load_arch_file(arch_file);
  const std::string source = vm["measurements"].as<std::string>();
  const auto measurements = read_measurements(source, arch.launch_overhead_seconds);
  const CalibrationFit fit = fit_timing(measurements, arch.launch_overhead_seconds, min_cases);

  std::ifstream in(arch_file);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  const std::string tag = fmt::format("fitted by memhier calibrate on {}", fs::path(source).filename().string());
  std::cout << fmt::format("{} cases; RMS relative error {:.1f}% before, {:.1f}% after\n", fit.residuals.size(),
                           100 * fit.rms_relative_error_before, 100 * fit.rms_relative_error_after);
  if (fit.launch_overhead_seconds > 0) {
    replace_arch_value(text, "launch", "overhead", fmt::format("{:.2f}us", fit.launch_overhead_seconds * 1e6), tag);
    // The idle-GPU overhead keeps its measured surplus (the host's submission latency) over the fitted one.
    const double idle = fit.launch_overhead_seconds + arch.launch_idle_overhead_seconds - arch.launch_overhead_seconds;
    replace_arch_value(text, "launch", "idle_overhead", fmt::format("{:.2f}us", idle * 1e6),
                       fmt::format("{} (launch.overhead + the file's idle surplus)", tag));
    std::cout << fmt::format("launch.overhead: {:.2f} us -> {:.2f} us (idle_overhead -> {:.2f} us)\n",
                             arch.launch_overhead_seconds * 1e6, fit.launch_overhead_seconds * 1e6, idle * 1e6);
  } else {
    std::cout << "launch.overhead: fit gave a non-positive value; kept\n";
  }
  struct Target {
    const char* resource;
    const char* section;
    const char* key;
    double value;
    const char* unit;
    double unit_scale;
  };
  const Target targets[] = {
      // The DRAM term is a k-norm of the bytes' time and the row activations' (timing.cpp): scaling the bandwidth and
      // both activation rates together scales it exactly.
      {"dram", "dram", "effective_bandwidth", arch.dram.effective_bandwidth, "TB/s", 1e12},
      {"dram", "dram", "read_activation_rate", arch.dram.read_activation_rate, "", 1},
      {"dram", "dram", "write_activation_rate", arch.dram.write_activation_rate, "", 1},
      {"l2", "l2", "bandwidth", arch.l2.bandwidth, "TB/s", 1e12},
      {"l1", "l1", "bandwidth_per_sm", arch.l1.bandwidth_bytes_per_clock, "B/clk", 1},
      {"shared", "shared_memory", "bandwidth_per_sm", arch.shared_memory.bandwidth_bytes_per_clock, "B/clk", 1},
  };
  std::string kept;  // the last resource whose non-positive scale was reported
  for (const Target& t : targets) {
    auto it = fit.scale.find(t.resource);
    if (it == fit.scale.end() || t.value == 0) continue;  // no such limit in the arch (activation rates are optional)
    if (it->second <= 0) {
      if (kept != t.resource) std::cout << fmt::format("{}: fit gave a non-positive scale; kept\n", t.resource);
      kept = t.resource;
      continue;
    }
    const double fitted = t.value / it->second / t.unit_scale;
    replace_arch_value(text, t.section, t.key, fmt::format("{:.3g}{}", fitted, t.unit),
                       fmt::format("{} ({} cases bound by it)", tag, fit.cases.at(t.resource)));
    std::cout << fmt::format("{}.{}: {:.3g} -> {:.3g}{}{} ({} cases)\n", t.section, t.key, t.value / t.unit_scale,
                             fitted, *t.unit != '\0' ? " " : "", t.unit, fit.cases.at(t.resource));
  }
  // The record measured the file's constants, not the fitted ones: the fitted file has none until a suite run
  // re-predicted with it is committed and recorded (memhier validate --arch FITTED --check-record).
  if (remove_arch_section(text, "accuracy",
                          fmt::format("accuracy: the record of {} is left out: it measured the "
                                      "constants this calibration changed",
                                      fs::path(arch_file).filename().string())))
    std::cout << "accuracy: the file's error on record is left out (it measured the constants before the fit)\n";
  std::string residuals =
      fmt::format("# Calibration ({}): RMS relative error {:.1f}% -> {:.1f}% over {} cases. Residuals:\n", tag,
                  100 * fit.rms_relative_error_before, 100 * fit.rms_relative_error_after, fit.residuals.size());
  for (const auto& [name, r] : fit.residuals) residuals += fmt::format("#   {:+6.1f}%  {}\n", 100 * r, name);
  text = residuals + text;
  const fs::path partial = out.string() + ".partial";
  write_text("calibrate", partial, text);
  load_arch_file(partial);  // the result must still be a valid architecture
  fs::rename(partial, out);
  std::cout << "wrote " << out.string() << "\n";
  return kExitOk;
}

}  // namespace memhier::cli
