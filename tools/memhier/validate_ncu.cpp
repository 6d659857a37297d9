// `memhier validate --ncu REPORT.csv TRACE...`: the user's own program, profiled by ncu and traced (captured, or
// described), compared launch by launch: GPU time (gpu__time_duration) and every counter whose ncu metric the
// simulator has a counterpart for (sim_counter_table()).
#include "validate_ncu.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <string_view>

#include "cli_common.h"
#include "cli_run.h"
#include "memhier/arch_loader.h"
#include "memhier/error.h"
#include "memhier/sim.h"
#include "memhier/timing.h"
#include "memhier/trace_io.h"
#include "memhier/trace_json.h"
#include "memhier/units.h"
#include "table.h"

namespace memhier::cli {
namespace fs = std::filesystem;

namespace {

constexpr const char* kTimeMetric = "gpu__time_duration.sum";

// Seconds per unit of a time metric as ncu writes it ("ns" with --csv, "nsecond" or "usecond" in older versions and
// other pages); nullopt for another unit.
std::optional<double> time_scale(const std::string& unit) {
  if (unit == "ns" || unit == "nsecond") return 1e-9;
  if (unit == "us" || unit == "usecond") return 1e-6;
  if (unit == "ms" || unit == "msecond") return 1e-3;
  if (unit == "s" || unit == "second") return 1.0;
  return std::nullopt;
}

// A counter's unit with a scale ncu chose for display ("Kbyte", "Msector"): its value is rounded, not a count.
bool scaled_unit(const std::string& unit) {
  return unit.size() > 1 && (unit[0] == 'K' || unit[0] == 'M' || unit[0] == 'G' || unit[0] == 'T') &&
         std::islower(static_cast<unsigned char>(unit[1])) != 0;
}

}  // namespace

std::string kernel_base_name(const std::string& full) {
  // A mangled name, as Accel-Sim traces keep it ("_Z14coalesced_copyPKfPfx"): demangled first.
  std::string name = full;
  if (name.starts_with("_Z")) {
    int status = 0;
    const std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                           std::free);
    if (status == 0 && demangled) name = demangled.get();
  }
  // Anonymous namespaces next: "(anonymous namespace)::" has brackets of its own, and ncu's CSV writes "<unnamed>::"
  // as "unnamed>::", whose lone '>' would close a template early.
  for (const std::string_view anonymous : {"(anonymous namespace)::", "<unnamed>::", "unnamed>::"})
    for (std::size_t at = name.find(anonymous); at != std::string::npos; at = name.find(anonymous, at))
      name.erase(at, anonymous.size());
  // The parameter list: the first '(' outside template brackets ("void f<(int)2>(float *)").
  int depth = 0;
  std::size_t end = name.size();
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>' && depth > 0) --depth;
    if (name[i] == '(' && depth == 0) {
      end = i;
      break;
    }
  }
  std::string s = name.substr(0, end);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  // Template arguments at the end ("gemm<float, 128>").
  if (!s.empty() && s.back() == '>') {
    depth = 0;
    for (std::size_t i = s.size(); i-- > 0;) {
      if (s[i] == '>') ++depth;
      if (s[i] == '<' && --depth == 0) {
        s.resize(i);
        break;
      }
    }
  }
  // The return type before it ("void ") and the namespaces ("at::native::").
  if (const auto space = s.rfind(' '); space != std::string::npos) s = s.substr(space + 1);
  if (const auto colons = s.rfind("::"); colons != std::string::npos) s = s.substr(colons + 2);
  return s;
}

std::optional<Dim3> parse_ncu_dim(const std::string& text) {
  static const std::regex dim(R"(\s*\((\d{1,10}), (\d{1,10}), (\d{1,10})\)\s*)");
  std::smatch m;
  if (!std::regex_match(text, m, dim)) return std::nullopt;
  Dim3 d;
  for (int i = 1; i <= 3; ++i) {
    const unsigned long v = std::stoul(m[i].str());
    if (v > 0xFFFFFFFFUL) return std::nullopt;
    (i == 1 ? d.x : i == 2 ? d.y : d.z) = static_cast<std::uint32_t>(v);
  }
  return d;
}

std::string ncu_metric_list() {
  std::string list = kTimeMetric;
  for (const SimCounterInfo& info : sim_counter_table())
    if (!info.ncu_metric.empty()) list += fmt::format(",{}", info.ncu_metric);
  return list;
}

namespace {

// InputError unless `l` and `r` are the same launch: the same kernel, and grid and block where the CSV gives them.
void check_same_launch(const NcuLaunch& l, const NcuRun& r, const fs::path& csv) {
  const KernelLaunch& k = r.sim.launch;
  const auto grid = parse_ncu_dim(l.grid), block = parse_ncu_dim(l.block);
  if (kernel_base_name(l.kernel) == kernel_base_name(k.name) && (!grid || *grid == k.grid) &&
      (!block || *block == k.block))
    return;
  throw InputError(
      {csv.string(), l.line, 0, -1}, "",
      fmt::format("ncu launch ID {} is {} (grid {}, block {}) but launch {} of {} is {} (grid ({}, {}, {}), block "
                  "({}, {}, {})): the profile and the traces must hold the same launches in the same order "
                  "(ncu -k / --launch-skip / --launch-count, memhier --kernel / --launch pick them)",
                  l.id, l.kernel, l.grid.empty() ? "?" : l.grid, l.block.empty() ? "?" : l.block, r.launch_index,
                  r.trace, k.name, k.grid.x, k.grid.y, k.grid.z, k.block.x, k.block.y, k.block.z));
}

// The launch's measured GPU time in seconds, if the CSV has it.
std::optional<double> measured_time(const NcuLaunch& l, const fs::path& csv) {
  const auto t = l.metrics.find(kTimeMetric);
  if (t == l.metrics.end()) return std::nullopt;
  const SourceLocation where{csv.string(), l.lines.at(kTimeMetric), 0, -1};
  const std::string& unit = l.units.at(kTimeMetric);
  const auto scale = time_scale(unit);
  if (!scale) throw InputError(where, kTimeMetric, fmt::format("unit '{}' is not a time unit (ns, us, ms, s)", unit));
  if (t->second <= 0) throw InputError(where, kTimeMetric, "a GPU time of 0");
  return t->second * *scale;
}

// One launch compared: its GPU time (Prediction::gpu_seconds: without the host's part of a launch, which
// gpu__time_duration leaves out) and each counter the CSV has.
nlohmann::json launch_row(const NcuLaunch& l, const NcuRun& r, const fs::path& csv) {
  nlohmann::json row = {{"ncu_id", l.id},
                        {"kernel", l.kernel},
                        {"trace", r.trace},
                        {"launch", r.launch_index},
                        {"bound", r.prediction.bound},
                        {"predicted_s", r.prediction.gpu_seconds},
                        {"captured", !r.sim.launch.captured_arch.empty()},
                        {"counters", nlohmann::json::object()}};
  if (const auto measured = measured_time(l, csv)) {
    row["measured_s"] = *measured;
    row["error_pct"] = 100 * (r.prediction.gpu_seconds - *measured) / *measured;
  }
  for (const SimCounterInfo& info : sim_counter_table()) {
    const std::string metric(info.ncu_metric);
    const auto m = l.metrics.find(metric);
    if (metric.empty() || m == l.metrics.end()) continue;
    if (scaled_unit(l.units.at(metric)))
      throw InputError({csv.string(), l.lines.at(metric), 0, -1}, metric,
                       fmt::format("unit '{}' is scaled for display, its value rounded: profile with ncu "
                                   "--print-units base (or export with it) for the counts",
                                   l.units.at(metric)));
    const auto predicted = static_cast<double>(r.sim.counters.*info.field);
    nlohmann::json cell = {{"metric", metric}, {"measured", m->second}, {"predicted", predicted}};
    if (m->second > 0) cell["error_pct"] = 100 * (predicted - m->second) / m->second;
    row["counters"][std::string(info.name)] = cell;
  }
  return row;
}

// The time MAPE over the launches with a time, and each counter over the launches that have it: totals and the
// traffic-weighted error (sum of |predicted - measured| over sum of measured).
nlohmann::json summary_of(const nlohmann::json& launches) {
  double abs_sum = 0, worst = 0;
  int timed = 0, within = 0;
  std::string worst_name;
  nlohmann::json counters = nlohmann::json::object();
  for (const auto& row : launches) {
    if (row.contains("error_pct")) {
      const double err = row["error_pct"].get<double>();
      ++timed;
      abs_sum += std::abs(err);
      within += std::abs(err) <= 25 ? 1 : 0;
      if (std::abs(err) >= std::abs(worst)) {
        worst = err;
        worst_name = fmt::format("ID {} {}", row["ncu_id"].get<std::size_t>(),
                                 kernel_base_name(row["kernel"].get<std::string>()));
      }
    }
    for (const auto& [name, cell] : row["counters"].items()) {
      nlohmann::json& c = counters[name];
      if (c.is_null()) c = {{"launches", 0}, {"measured", 0.0}, {"predicted", 0.0}, {"abs_diff", 0.0}};
      const double measured = cell["measured"].get<double>(), predicted = cell["predicted"].get<double>();
      c["launches"] = c["launches"].get<int>() + 1;
      c["measured"] = c["measured"].get<double>() + measured;
      c["predicted"] = c["predicted"].get<double>() + predicted;
      c["abs_diff"] = c["abs_diff"].get<double>() + std::abs(predicted - measured);
    }
  }
  for (auto& [name, c] : counters.items()) {
    if (c["measured"].get<double>() > 0)
      c["weighted_abs_error_pct"] = 100 * c["abs_diff"].get<double>() / c["measured"].get<double>();
    c.erase("abs_diff");
  }
  nlohmann::json summary = {{"launches", launches.size()}, {"timed", timed}, {"counters", counters}};
  // The L2 read hit rate over the launches, as ncu's lts__t_sector_op_read_hit_rate would give it, in percent.
  if (counters.contains("l2_read_hits") && counters.contains("l2_read_sectors") &&
      counters["l2_read_sectors"]["measured"].get<double>() > 0 &&
      counters["l2_read_sectors"]["predicted"].get<double>() > 0) {
    const auto rate = [&](const char* side) {
      return 100 * counters["l2_read_hits"][side].get<double>() / counters["l2_read_sectors"][side].get<double>();
    };
    summary["l2_read_hit_rate_pct"] = {{"measured", rate("measured")}, {"predicted", rate("predicted")}};
  }
  if (timed > 0)
    summary["time"] = {
        {"mape_pct", abs_sum / timed}, {"within_25pct", within}, {"worst", worst_name}, {"worst_error_pct", worst}};
  return summary;
}

}  // namespace

nlohmann::json compare_with_ncu(const Arch& arch, const std::vector<NcuLaunch>& profiled,
                                const std::vector<NcuRun>& runs, const fs::path& csv) {
  nlohmann::json launches = nlohmann::json::array();
  for (std::size_t i = 0; i < profiled.size(); ++i) {
    check_same_launch(profiled[i], runs[i], csv);
    launches.push_back(launch_row(profiled[i], runs[i], csv));
  }
  return {{"arch", arch.name}, {"ncu_csv", csv.string()}, {"launches", launches}, {"summary", summary_of(launches)}};
}

namespace {

// A row per launch; the times in seconds, empty where the CSV had none.
void print_csv(const nlohmann::json& report) {
  std::cout << "ncu_id,kernel,trace,launch,measured_s,predicted_s,error_pct,bound\n";
  for (const auto& l : report["launches"])
    std::cout << fmt::format("{},{},{},{},{},{:.9g},{},{}\n", l["ncu_id"].get<std::size_t>(),
                             csv_field(l["kernel"].get<std::string>()), csv_field(l["trace"].get<std::string>()),
                             l["launch"].get<std::size_t>(),
                             l.contains("measured_s") ? fmt::format("{:.9g}", l["measured_s"].get<double>()) : "",
                             l["predicted_s"].get<double>(),
                             l.contains("error_pct") ? fmt::format("{:.3f}", l["error_pct"].get<double>()) : "",
                             l["bound"].get<std::string>());
}

void print_comparison(const nlohmann::json& report, bool own_overhead, const std::string& arch) {
  Table t({"ID", "kernel", "trace launch", "measured", "predicted", "err", "bound"});
  for (const auto& l : report["launches"])
    t.add({std::to_string(l["ncu_id"].get<std::size_t>()), kernel_base_name(l["kernel"].get<std::string>()),
           fmt::format("{} #{}", fs::path(l["trace"].get<std::string>()).filename().string(),
                       l["launch"].get<std::size_t>()),
           l.contains("measured_s") ? units::format_duration(l["measured_s"].get<double>()) : "-",
           units::format_duration(l["predicted_s"].get<double>()),
           l.contains("error_pct") ? fmt::format("{:+.1f}%", l["error_pct"].get<double>()) : "-",
           l["bound"].get<std::string>()});
  t.print(std::cout);
  const auto& s = report["summary"];
  if (s.contains("time"))
    std::cout << fmt::format(
        "\nGPU time (gpu__time_duration): MAPE {:.1f}% over {} launches, {} within 25%, worst {} "
        "({:+.1f}%)\n",
        s["time"]["mape_pct"].get<double>(), s["timed"].get<int>(), s["time"]["within_25pct"].get<int>(),
        s["time"]["worst"].get<std::string>(), s["time"]["worst_error_pct"].get<double>());
  else
    std::cout << fmt::format("\nthe CSV has no {}: times are not compared\n", kTimeMetric);
  if (!own_overhead)
    std::cout << fmt::format(
        "({} has no launch.gpu_overhead: a launch's GPU time is predicted with launch.overhead, which also "
        "holds the host's part)\n",
        arch);
  if (s["counters"].empty()) {
    std::cout << "the CSV has none of the ncu metrics memhier predicts (memhier validate --ncu-metrics lists them)\n";
    return;
  }
  Table c({"counter", "launches", "measured", "predicted", "weighted |err|"});
  int zero = 0;  // counters 0 on both sides (a kernel without shared memory: its 8 shared counters)
  for (const auto& [name, v] : s["counters"].items()) {
    if (v["measured"].get<double>() == 0 && v["predicted"].get<double>() == 0) {
      ++zero;
      continue;
    }
    c.add({name, std::to_string(v["launches"].get<int>()), fmt::format("{:.0f}", v["measured"].get<double>()),
           fmt::format("{:.0f}", v["predicted"].get<double>()),
           v.contains("weighted_abs_error_pct") ? fmt::format("{:.1f}%", v["weighted_abs_error_pct"].get<double>())
                                                : "-"});
  }
  std::cout << "\n";
  c.print(std::cout);
  if (s.contains("l2_read_hit_rate_pct")) {
    const double m = s["l2_read_hit_rate_pct"]["measured"].get<double>();
    const double p = s["l2_read_hit_rate_pct"]["predicted"].get<double>();
    std::cout << fmt::format("L2 read hit rate: {:.1f}% measured, {:.1f}% predicted ({:+.1f} points)\n", m, p, p - m);
  }
  if (zero > 0)
    std::cout << fmt::format("({} more counter{} 0 measured and 0 predicted)\n", zero, zero == 1 ? "" : "s");
  // What a capture cannot hold (README, "Capturing a trace"): the counts that miss it are those of the instructions.
  if (std::any_of(report["launches"].begin(), report["launches"].end(),
                  [](const nlohmann::json& l) { return l["captured"].get<bool>(); }))
    std::cout << "(a captured trace holds no arithmetic, no constant-bank load and no instruction whose lanes are all "
                 "predicated off: ncu's shared-memory instruction counts can be above the trace's, and the predicted "
                 "times leave the arithmetic out)\n";
}

}  // namespace

namespace {

po::options_description ncu_options() {
  po::options_description options("options");
  options.add_options()  //
      ("ncu", po::value<std::string>(),
       "ncu CSV of your program (ncu --csv --metrics LIST ./app > app.csv), details or raw page")                     //
      ("ncu-metrics", "print the metrics to profile: gpu__time_duration.sum and every counter memhier predicts")      //
      ("trace", po::value<std::vector<std::string>>(), "traces of the same launches: .mht, kernel .yaml, Accel-Sim")  //
      ("arch", po::value<std::string>(), "architecture to predict with: h100 or a YAML file")                         //
      ("set", po::value<std::vector<std::string>>(), "override a description parameter: --set n=4096")                //
      ("threads", po::value<int>()->default_value(0), kThreadsHelp)                                                   //
      ("keep-cache",
       "carry cache contents from one launch to the next, for a profile taken with ncu --cache-control none "
       "(default: cold, as ncu's default flush leaves each launch)")                                   //
      ("max-mape", po::value<double>(), "exit 1 if the GPU time MAPE over the launches is above PCT")  //
      ("json", "print the comparison as JSON")                                                         //
      ("csv", "one CSV row per launch: its ID, kernel, trace, launch, times, error and bound");
  add_launch_options(options);
  return options;
}

// The CSV's launches that --kernel takes, by the name the trace has (kernel_base_name()); --launch numbers the
// trace's launches only.
std::vector<NcuLaunch> profiled_launches(const fs::path& csv, const LaunchFilter& filter) {
  std::vector<NcuLaunch> profiled;
  std::size_t listed = 0;
  for (NcuLaunch& l : read_ncu_csv(csv)) {
    if (l.line == 0) continue;
    ++listed;
    if (!filter.name || std::regex_search(utf8_text(kernel_base_name(l.kernel)), *filter.name))
      profiled.push_back(std::move(l));
  }
  if (listed == 0) throw InputError({csv.string(), 0, 0, -1}, "", "holds no profiled launch");
  if (profiled.empty())
    throw InputError({"--kernel"}, filter.name_text,
                     fmt::format("takes none of the {} launches of {}", listed, csv.string()));
  return profiled;
}

// The traces' launches that `filter` takes, one trace's after another's, simulated and predicted.
std::vector<NcuRun> predicted_runs(const Arch& arch, const po::variables_map& vm, const LaunchFilter& filter) {
  const std::vector<ParamOverride> sets = param_overrides(vm);
  const SimOptions opt = sim_options("validate", vm);
  const std::vector<std::string> traces = vm["trace"].as<std::vector<std::string>>();
  const std::vector<std::vector<ParamOverride>> trace_sets = sets_by_trace(traces, sets);
  std::vector<std::unique_ptr<TraceSource>> opened;
  std::vector<std::unique_ptr<FilteredSource>> filtered;
  ChainSource chain;
  for (std::size_t t = 0; t < traces.size(); ++t) {
    opened.push_back(open_trace(traces[t], trace_sets[t]));
    filtered.push_back(std::make_unique<FilteredSource>(*opened.back(), filter, traces[t], traces.size() == 1));
    chain.add(*filtered.back());
  }
  std::vector<KernelSim> sims = simulate(arch, chain, opt);
  std::vector<NcuRun> runs;
  std::vector<std::size_t> taken(traces.size(), 0);
  for (std::size_t i = 0; i < sims.size(); ++i) {
    const std::size_t from = chain.sources()[i];
    Prediction p = predict(arch, sims[i], {});
    runs.push_back({traces[from], filtered[from]->numbers()[taken[from]++], std::move(sims[i]), std::move(p)});
  }
  return runs;
}

}  // namespace

int run_validate_ncu(const std::vector<std::string>& args) {
  const po::options_description options = ncu_options();
  po::positional_options_description pos;
  pos.add("trace", -1);
  po::variables_map vm;
  // Help wherever it is asked for: "--ncu --help" would otherwise read --help as the CSV's name.
  const bool help =
      std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
  if (!parse("validate", "--ncu REPORT.csv TRACE|KERNEL.yaml... --arch NAME [--json|--csv] | --ncu-metrics",
             help ? std::vector<std::string>{"--help"} : args, options, pos, vm))
    return kExitOk;
  if (vm.count("ncu-metrics") != 0U) {
    std::cout << ncu_metric_list() << "\n";
    return kExitOk;
  }
  if (vm.count("ncu") == 0U) throw UsageError("memhier validate: --ncu REPORT.csv is required with traces");
  check_output_format("validate", vm);
  if (vm.count("trace") == 0U)
    throw UsageError(
        "memhier validate --ncu: name the traces of the profiled launches (a captured .mht, a description)");
  if (vm.count("arch") == 0U) throw UsageError("memhier validate --ncu: --arch is required (an ncu CSV names no GPU)");
  std::optional<double> max_mape;
  if (vm.count("max-mape") != 0U) {
    max_mape = vm["max-mape"].as<double>();
    if (!std::isfinite(*max_mape) || *max_mape < 0)
      throw UsageError(fmt::format("memhier validate: --max-mape {}: expected a percentage of 0 or more", *max_mape));
  }
  const fs::path csv = ncu_csv_file(vm["ncu"].as<std::string>());  // X.csv.zst where only that exists
  const LaunchFilter filter = launch_filter("validate", vm);
  const std::vector<NcuLaunch> profiled = profiled_launches(csv, filter);
  const Arch arch = load_arch(vm["arch"].as<std::string>());
  if (const std::string note = host_state_note(arch); !note.empty()) std::cerr << "note: " << note << "\n";
  const std::vector<NcuRun> runs = predicted_runs(arch, vm, filter);
  const std::size_t traces = vm["trace"].as<std::vector<std::string>>().size();
  if (runs.size() != profiled.size())
    throw InputError({csv.string(), 0, 0, -1}, "",
                     fmt::format("holds {} profiled launch{} and the trace{} {}{}: profile and trace the same launches "
                                 "(ncu -k / --launch-skip / --launch-count; memhier --kernel / --launch)",
                                 profiled.size(), profiled.size() == 1 ? "" : "es", traces == 1 ? "" : "s", runs.size(),
                                 filter.any() ? " (of those --kernel / --launch take)" : ""));
  const nlohmann::json report = compare_with_ncu(arch, profiled, runs, csv);
  if (vm.count("json") != 0U)
    std::cout << json_text(report, 2) << "\n";
  else if (vm.count("csv") != 0U)
    print_csv(report);
  else
    print_comparison(report, arch.launch_gpu_overhead_seconds > 0, arch.name);
  if (!max_mape) return kExitOk;
  if (!report["summary"].contains("time"))
    throw InputError({csv.string(), 0, 0, -1}, "",
                     fmt::format("--max-mape: holds no {} to compare times with", kTimeMetric));
  const double mape = report["summary"]["time"]["mape_pct"].get<double>();
  if (mape <= *max_mape) return kExitOk;
  std::cerr << fmt::format("memhier validate: GPU time MAPE {:.1f}% is above --max-mape {:g}%\n", mape, *max_mape);
  return kExitCheckFailed;
}

}  // namespace memhier::cli
