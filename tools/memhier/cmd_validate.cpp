// `memhier validate`: compares predictions with measured GPU results. Without --gpu it re-predicts a committed results
// folder (CPU only); with --gpu it first runs the suite, ncu and the tracer on this machine's GPU.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>

#include "cli_common.h"
#include "cli_run.h"
#include "commands.h"
#include "memhier/arch_loader.h"
#include "memhier/trace_json.h"
#include "memhier/units.h"
#include "name_regex.h"
#include "table.h"
#include "tracer_decode.h"
#include "validate_ncu.h"
#include "validate_report.h"
#include "validate_run.h"

namespace memhier::cli {
namespace fs = std::filesystem;
namespace {

fs::path source_dir() { return MEMHIER_SOURCE_DIR; }

void run_gpu_scripts(const fs::path& out) {
  fs::create_directories(out);
  for (const char* script : {"validate/gpu/run_suite.sh", "validate/gpu/run_capture.sh"}) {
    const std::string cmd = fmt::format("OUT='{}' bash '{}'", out.string(), (source_dir() / script).string());
    std::cerr << "memhier validate: " << cmd << "\n";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error(fmt::format("memhier validate: {} failed", script));
  }
}

void print_table(const nlohmann::json& report) {
  Table t({"case", "regime", "measured", "from description", "err", "from trace", "err", "bound"});
  for (const auto& c : report["cases"]) {
    auto cell = [&](const char* key, const char* field) -> std::string {
      if (!c.contains(key)) return "-";
      const double v = c[key][field].get<double>();
      return std::string(field) == "error_pct" ? fmt::format("{:+.0f}%", v) : units::format_duration(v);
    };
    t.add({c["case"].get<std::string>(), c["regime"].get<std::string>() + (c["warm"].get<bool>() ? " warm" : ""),
           units::format_duration(c["measured_s"].get<double>()), cell("described", "predicted_s"),
           cell("described", "error_pct"), cell("traced", "predicted_s"), cell("traced", "error_pct"),
           c.contains("described") ? c["described"]["bound"].get<std::string>() : "-"});
  }
  t.print(std::cout);
  const auto& s = report["summary"];
  for (const char* path : {"time_from_description", "time_from_trace", "time_from_complete_traces"}) {
    if (!s.contains(path)) continue;
    const auto& p = s[path];
    if (p.value("cases", 0) == 0) continue;
    std::cout << fmt::format(
        "\n{}: MAPE {:.1f}% over {} cases, {} within 25%, worst {} ({:.0f}%), log-time correlation {:.3f}", path,
        p["mape_pct"].get<double>(), p["cases"].get<int>(), p["within_25pct"].get<double>(),
        p["worst_case"].get<std::string>(), p["worst_error_pct"].get<double>(),
        p["log_time_correlation"].get<double>());
    if (p.value("left_out", 0) > 0)
      std::cout << fmt::format(" ({} traced case{} left out: the trace lacks the kernel's constant-bank loads)",
                               p["left_out"].get<int>(), p["left_out"].get<int>() == 1 ? "" : "s");
  }
  // The name column fits the longest name (shared_ld_bank_conflicts is 24 characters), so the columns stay aligned.
  std::size_t width = 20;
  for (const char* table : {"counters", "hit_rates"})
    if (s.contains(table))
      for (const auto& [name, c] : s[table].items()) width = std::max(width, name.size());
  std::cout << fmt::format("\n\n{:<{}} cases  mean |err|  weighted |err|  worst |err|  within 0.5%  within 10%\n",
                           "counter", width);
  for (const auto& [name, c] : s["counters"].items())
    std::cout << fmt::format("{:<{}} {:>5}  {:>9.1f}%  {:>13.1f}%  {:>10.1f}%  {:>11}  {:>9}\n", name, width,
                             c["cases"].get<int>(), c["mean_abs_error_pct"].get<double>(),
                             c.value("weighted_abs_error_pct", 0.0), c["worst_abs_error_pct"].get<double>(),
                             c["within_0_5pct"].get<double>(), c["within_10pct"].get<double>());
  if (s.contains("hit_rates") && !s["hit_rates"].empty()) {
    std::cout << fmt::format("\n{:<{}} cases  mean |err|  worst |err|  within 5 points\n", "hit rate (points)", width);
    for (const auto& [name, c] : s["hit_rates"].items())
      std::cout << fmt::format("{:<{}} {:>5}  {:>10.1f}  {:>11.1f}  {:>15}\n", name, width, c["cases"].get<int>(),
                               c["mean_abs_error_points"].get<double>(), c["worst_abs_error_points"].get<double>(),
                               c["within_5_points"].get<double>());
  }
  if (s.contains("instructions") && s["instructions"].value("cases", 0) > 0) {
    const nlohmann::json& i = s["instructions"];
    std::cout << fmt::format(
        "\nwarp instructions (descriptions against smsp__inst_executed): {} case{}, mean |err| {:.1f}%, worst {:.1f}%, "
        "{} within 10%\n",
        i["cases"].get<int>(), i["cases"].get<int>() == 1 ? "" : "s", i["mean_abs_error_pct"].get<double>(),
        i["worst_abs_error_pct"].get<double>(), i["within_10pct"].get<double>());
  }
}

}  // namespace

int run_validate(const std::vector<std::string>& args) {
  // Your own program against its ncu profile: a mode of its own (validate_ncu.cpp).
  if (std::any_of(args.begin(), args.end(),
                  [](const std::string& a) { return a == "--ncu" || a.starts_with("--ncu=") || a == "--ncu-metrics"; }))
    return run_validate_ncu(args);
  po::options_description options("options");
  options.add_options()  //
      ("results", po::value<std::string>(),
       "results folder (validate/results/<gpu>-<date>); with --gpu, where to write")                              //
      ("gpu", "first run the suite, ncu and the tracer on this machine's GPU (validate/gpu/*.sh)")                //
      ("arch", po::value<std::string>(), "architecture to predict with (default: from the measured GPU's name)")  //
      ("out", po::value<std::string>()->default_value("memhier-validate-report"), "report folder")                //
      ("force", "replace an existing report folder or --write-baseline file")                                     //
      ("only", po::value<std::string>(), "cases whose id matches this regex")                                     //
      ("examples", po::value<std::string>(),
       "kernel descriptions folder (default: the source tree's traces/examples)")                          //
      ("threads", po::value<int>()->default_value(0), kThreadsHelp)                                        //
      ("max-mape", po::value<double>(), "exit 1 if the time MAPE (from descriptions) is above PCT")        //
      ("baseline", po::value<std::string>(), "exit 1 if any error is worse than this baseline (ratchet)")  //
      ("write-baseline", po::value<std::string>(), "write this run's summary as a new baseline")           //
      ("check-record",
       "exit 1 unless the arch's accuracy record (accuracy.*) names this run and says what it gives")  //
      ("no-plots", "skip the matplotlib plots")                                                        //
      ("sim-cache", po::value<std::string>(),
       "keep each case's prediction in this folder and reuse it in later runs of this same memhier binary (the key "
       "holds the binary, the arch, the description's text and parameters or the trace's bytes)")  //
      ("json", "print the report JSON instead of the tables");
  po::variables_map vm;
  if (!parse("validate",
             "--results DIR [--out DIR] [--max-mape PCT] [--baseline FILE] | --gpu --results DIR | --ncu REPORT.csv "
             "TRACE... --arch NAME (memhier validate --ncu --help)",
             args, options, {}, vm))
    return kExitOk;
  if (vm.count("results") == 0U)
    throw UsageError("memhier validate: --results DIR is required (e.g. validate/results/h100-2026-11-22)");
  const fs::path dir = vm["results"].as<std::string>();
  // The flags are checked before the GPU runs or the cases are predicted (minutes): a NaN limit would pass any run.
  std::optional<double> max_mape;
  if (vm.count("max-mape") != 0U) {
    max_mape = vm["max-mape"].as<double>();
    if (!std::isfinite(*max_mape) || *max_mape < 0)
      throw UsageError(fmt::format("memhier validate: --max-mape {}: expected a percentage of 0 or more", *max_mape));
  }
  if (vm.count("only") != 0U) {
    try {
      name_regex(vm["only"].as<std::string>());
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("memhier validate: --only '{}' is not a regular expression: {}",
                                   vm["only"].as<std::string>(), e.what()));
    }
  }
  const nlohmann::json baseline =
      vm.count("baseline") != 0U ? read_baseline(vm["baseline"].as<std::string>()) : nlohmann::json();
  const bool check_record = vm.count("check-record") != 0U;
  if (check_record && vm.count("only") != 0U)
    throw UsageError(
        "memhier validate: --check-record compares the whole run with the record; --only takes part of it");
  const fs::path out = vm["out"].as<std::string>();
  const bool force = vm.count("force") != 0U;
  if (fs::exists(out) && !force)
    throw UsageError(
        fmt::format("memhier validate: {} exists; pass --force to replace the report in it", out.string()));
  const fs::path baseline_out = vm.count("write-baseline") != 0U ? vm["write-baseline"].as<std::string>() : "";
  if (vm.count("write-baseline") != 0U && baseline_out.empty())
    throw UsageError("memhier validate: --write-baseline names no file");
  if (!baseline_out.empty() && fs::exists(baseline_out) && !force)
    throw UsageError(fmt::format("memhier validate: {} exists; pass --force to replace it", baseline_out.string()));
  if (!baseline_out.empty() && !baseline_out.parent_path().empty() && !fs::is_directory(baseline_out.parent_path()))
    throw UsageError(fmt::format("memhier validate: --write-baseline {}: {} is not a folder", baseline_out.string(),
                                 baseline_out.parent_path().string()));
  const fs::path sim_cache = vm.count("sim-cache") != 0U ? vm["sim-cache"].as<std::string>() : "";
  if (vm.count("sim-cache") != 0U && sim_cache.empty())
    throw UsageError("memhier validate: --sim-cache names no folder");
  if (!sim_cache.empty() && fs::exists(sim_cache) && !fs::is_directory(sim_cache))
    throw UsageError(fmt::format("memhier validate: --sim-cache {}: not a folder", sim_cache.string()));
  if (vm.count("gpu") != 0U) run_gpu_scripts(dir);
  const Results results = load_results(dir);
  std::string arch_name =
      vm.count("arch") != 0U ? vm["arch"].as<std::string>() : tracer::arch_from_device_name(results.gpu);
  if (arch_name.empty())
    throw UsageError(
        fmt::format("memhier validate: no architecture file matches the GPU '{}'; pass --arch", results.gpu));
  const Arch arch = load_arch(arch_name);
  if (const std::string note = host_state_note(arch); !note.empty()) std::cerr << "note: " << note << "\n";
  ValidateOptions vo;
  vo.examples =
      vm.count("examples") != 0U ? fs::path(vm["examples"].as<std::string>()) : source_dir() / "traces" / "examples";
  vo.threads = threads_flag("validate", vm["threads"].as<int>());
  if (vm.count("only") != 0U) vo.only = vm["only"].as<std::string>();
  vo.sim_cache = sim_cache;
  const auto cases = run_validation(arch, results, vo);
  if (cases.empty()) throw UsageError(fmt::format("memhier validate: no case of {} matches --only", dir.string()));
  const nlohmann::json report = validation_report(arch, results, cases);
  write_report(report, out, vm.count("no-plots") == 0U, source_dir() / "validate" / "report" / "plots.py");
  if (vm.count("json") != 0U)
    std::cout << json_text(report, 2) << "\n";
  else
    print_table(report);
  std::cerr << fmt::format("report: {}/report.html (json, csv next to it)\n", out.string());
  if (!baseline_out.empty())
    write_text("validate", baseline_out, json_text(nlohmann::json{{"summary", report["summary"]}}, 2) + "\n");
  int rc = kExitOk;
  // The accuracy record `predict` shows (archs/*.yaml accuracy.*), where it names this run.
  const auto origin = arch.key_origin.find("accuracy.run");
  const std::string record_file = origin == arch.key_origin.end() ? arch.source_file : origin->second.file;
  if (const auto differences = record_differences(arch, dir, report)) {
    if (differences->empty()) {
      std::cerr << fmt::format("accuracy record of {} ({}): matches this run\n", arch.name, record_file);
    } else {
      std::cerr << fmt::format("accuracy record of {} ({}): differs from this run; update it there:\n", arch.name,
                               record_file);
      for (const std::string& d : *differences) std::cerr << "  " << d << "\n";
      if (const auto now = record_of_run(arch.accuracy.run, report))
        std::cerr << "the record this run gives:\n" << record_yaml(*now);
      if (check_record) rc = kExitCheckFailed;
    }
  } else if (check_record) {
    std::cerr << (!own_accuracy_record(arch)
                      ? fmt::format("memhier validate: --check-record: {} has no accuracy record of its own ({})\n",
                                    arch.name, arch.source_file)
                      : fmt::format("memhier validate: --check-record: the accuracy record of {} ({}) names {}, not "
                                    "this run\n",
                                    arch.name, record_file, arch.accuracy.run));
    // What a record of this run would say, for a GPU's file that has none yet or should name this run instead.
    std::string run = dir.lexically_normal().string();
    if (run.size() > 1 && run.ends_with('/')) run.pop_back();
    if (const auto now = record_of_run(run, report)) std::cerr << "the record this run gives:\n" << record_yaml(*now);
    rc = kExitCheckFailed;
  }
  if (max_mape) {
    const nlohmann::json described = report.at("summary").value("time_from_description", nlohmann::json::object());
    if (!described.contains("mape_pct")) {
      std::cerr << "memhier validate: no case was predicted from its description: no time MAPE for --max-mape\n";
      rc = kExitCheckFailed;
    } else if (const double mape = described["mape_pct"].get<double>(); mape > *max_mape) {
      std::cerr << fmt::format("memhier validate: time MAPE {:.1f}% is above --max-mape {}\n", mape, *max_mape);
      rc = kExitCheckFailed;
    }
  }
  if (!baseline.is_null()) {
    for (const std::string& w : ratchet_regressions(report, baseline)) {
      std::cerr << "memhier validate: worse than the baseline: " << w << "\n";
      rc = kExitCheckFailed;
    }
  }
  return rc;
}

}  // namespace memhier::cli
