// `memhier sweep TRACE|KERNEL.yaml --arch NAME --vary KEY=V1,V2,... [--vary ...]`: what-if studies over a Cartesian
// product of architecture keys (section.key, as in the arch YAML, e.g. l2.size=25MiB,50MiB), kernel parameters
// (n=1024,4096), architectures (arch=h100,b200) and the L2 residency control of every launch (set_aside=0,16MiB,
// hit_ratio=0.5,1). Points that differ only in timing constants share one simulation;
// distinct memory configurations are simulated in parallel (OpenMP).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "cli_common.h"
#include "cli_run.h"
#include "commands.h"
#include "memhier/arch_loader.h"
#include "memhier/kernel_desc.h"
#include "memhier/timing.h"
#include "memhier/trace_io.h"
#include "memhier/trace_json.h"
#include "memhier/units.h"
#include "table.h"

namespace memhier::cli {
namespace fs = std::filesystem;
namespace {

// Arch keys that only the timing model reads: changing them needs no new simulation.
const std::set<std::string> kTimingOnly = {"clocks.sm",
                                           "dram.effective_bandwidth",
                                           "dram.peak_bandwidth",
                                           "dram.latency_cycles",
                                           "l2.bandwidth",
                                           "l2.near_latency_cycles",
                                           "l2.far_latency_cycles",
                                           "l1.latency_cycles",
                                           "l1.bandwidth_per_sm",
                                           "shared_memory.latency_cycles",
                                           "shared_memory.bandwidth_per_sm",
                                           "launch.overhead",
                                           "constant_cache.latency_cycles",
                                           "constant_cache.l15_latency_cycles",
                                           "constant_cache.replay_cycles",
                                           "shared_memory.barrier_cycles",
                                           "shared_memory.barrier_latency_cycles",
                                           "launch.idle_overhead",
                                           "launch.gpu_overhead",
                                           "launch.block_cycles",
                                           "launch.warp_cycles",
                                           "timing.overlap_exponent"};

struct Axis {
  std::string key;  // "arch", "section.key" or a kernel parameter
  std::vector<std::string> values;
};

// Axis keys that are neither arch keys nor kernel parameters: the L2 residency control of every launch, as
// simulate's --set-aside gives it and the hit ratio of every window in effect (the trace's or --window's).
const std::set<std::string> kResidencyKeys = {"set_aside", "hit_ratio"};

struct Point {
  std::map<std::string, std::string> values;  // axis key -> value
  Arch arch;
  SimOptions options;   // its residency control (--window, --set-aside, the residency axes)
  std::string sim_key;  // points with equal sim_key share a simulation
  std::vector<Prediction> predictions;
};

Axis parse_axis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError(fmt::format("memhier sweep: --vary expects KEY=V1,V2,..., got '{}'", text));
  Axis a{text.substr(0, eq), {}};
  std::size_t start = eq + 1;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    if (end == start)  // "25MiB,,50MiB": a value left out by mistake
      throw UsageError(fmt::format("memhier sweep: --vary '{}' has an empty value at character {}", text, end + 1));
    a.values.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (a.values.empty()) throw UsageError(fmt::format("memhier sweep: --vary {} names no values", a.key));
  return a;
}

// Loads a sweep point's generated arch YAML. The YAML is ours, so its line and column mean nothing to the user: an
// error names the --vary option and value instead.
Arch load_point(const std::string& yaml, const std::string& base, const std::map<std::string, std::string>& values) {
  try {
    return load_arch_string(yaml, "--vary");
  } catch (const InputError& e) {
    const auto it = values.find(e.key());
    if (it != values.end())
      throw UsageError(fmt::format("memhier sweep: --vary {}={}: {}", it->first, it->second, e.message()));
    std::string given;
    for (const auto& [key, value] : values) given += fmt::format(" {}={}", key, value);
    throw UsageError(fmt::format("memhier sweep: --vary{} on {}: '{}': {}", given, base, e.key(), e.message()));
  }
}

// The point's base architecture: an error names --vary arch=NAME where the axis gave it (else --arch did).
Arch base_arch(const std::string& base, const std::map<std::string, std::string>& values) {
  try {
    return load_arch(base);
  } catch (const InputError& e) {
    if (values.count("arch") == 0U) throw;
    throw UsageError(fmt::format("memhier sweep: --vary arch={}: {}", base, e.message()));
  }
}

Arch point_arch(const std::string& base, std::map<std::string, std::string> values) {
  if (values.count("l2.size") != 0U && values.count("l2.persisting_max") == 0U) {
    // Keep the persisting set-aside limit the same share of L2 as the base arch (H100 and H200: 10 of 16 ways).
    const Arch b = base_arch(base, values);
    const Arch sized = load_point(fmt::format("extends: {}\nname: probe\nl2:\n  size: {}\n  persisting_max: 0B\n  "
                                              "max_window_size: 0B\n",
                                              yaml_quoted(base), yaml_quoted(values.at("l2.size"))),
                                  base, values);
    if (b.l2.persisting_max > 0 && b.l2.size > 0) {
      const double share = static_cast<double>(b.l2.persisting_max) / static_cast<double>(b.l2.size);
      values["l2.persisting_max"] =
          fmt::format("{}B", static_cast<std::uint64_t>(share * static_cast<double>(sized.l2.size)) / 1024 * 1024);
    }
  }
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> sections;
  for (const auto& [key, value] : values)
    if (const auto dot = key.find('.'); dot != std::string::npos)
      sections[key.substr(0, dot)].emplace_back(key.substr(dot + 1), value);
  if (sections.empty()) return base_arch(base, values);
  std::string yaml = fmt::format("extends: {}\nname: {}\n", yaml_quoted(base), yaml_quoted(base + "-sweep"));
  for (const auto& [section, keys] : sections) {
    yaml += section + ":\n";
    for (const auto& [k, v] : keys) yaml += fmt::format("  {}: {}\n", k, yaml_quoted(v));
  }
  return load_point(yaml, base, values);
}

std::vector<Point> expand(const std::vector<Axis>& axes, const std::string& default_arch) {
  std::vector<std::map<std::string, std::string>> combos(1);
  for (const Axis& a : axes) {
    std::vector<std::map<std::string, std::string>> next;
    for (const auto& c : combos)
      for (const std::string& v : a.values) {
        auto n = c;
        n[a.key] = v;
        next.push_back(std::move(n));
      }
    combos = std::move(next);
  }
  std::vector<Point> points;
  for (auto& c : combos) {
    Point p;
    p.values = c;
    const std::string base = c.count("arch") != 0U ? c.at("arch") : default_arch;
    p.arch = point_arch(base, c);
    p.sim_key = "arch=" + base;
    for (const auto& [key, value] : c)
      if (key != "arch" && kTimingOnly.count(key) == 0) p.sim_key += fmt::format(" {}={}", key, value);
    points.push_back(std::move(p));
  }
  return points;
}

std::string plot_script() {
  const fs::path here = fs::path(MEMHIER_SOURCE_DIR) / "validate" / "report" / "sweep_plot.py";
  return here.string();
}

}  // namespace

int run_sweep(const std::vector<std::string>& args) {
  po::options_description options("options");
  options.add_options()                                                                         //
      ("trace", po::value<std::string>()->required(), "kernel .yaml, .mht or Accel-Sim trace")  //
      ("arch", po::value<std::string>()->default_value("h100"), "base architecture")            //
      ("vary", po::value<std::vector<std::string>>()->required(),
       "KEY=V1,V2,...: arch key (l2.size), kernel parameter (n), arch, or the L2 residency control of every "
       "launch: set_aside (bytes) or hit_ratio (of every window)")                                            //
      ("set", po::value<std::vector<std::string>>(), "fixed description parameter: --set n=4096")             //
      ("threads", po::value<int>()->default_value(0), "configurations simulated at once (0: all cores)")      //
      ("csv", "CSV on standard output")                                                                       //
      ("json", "JSON on standard output")                                                                     //
      ("plot", po::value<std::string>(), "write a plot of time against the first --vary key (.svg or .png)")  //
      ("force", "replace the plot file if it exists");
  add_residency_options(options);
  po::positional_options_description pos;
  pos.add("trace", 1);
  po::variables_map vm;
  if (!parse("sweep", "TRACE|KERNEL.yaml --arch NAME --vary KEY=V1,V2 [--vary ...] [--csv|--json] [--plot OUT.svg]",
             args, options, pos, vm))
    return kExitOk;
  check_output_format("sweep", vm);
  std::vector<Axis> axes;
  for (const std::string& v : vm["vary"].as<std::vector<std::string>>()) {
    axes.push_back(parse_axis(v));
    if (axes.back().key.starts_with("accuracy."))
      throw UsageError(
          fmt::format("memhier sweep: --vary {}: the accuracy record is what a suite run measured, not a "
                      "parameter of the GPU",
                      axes.back().key));
    for (std::size_t i = 0; i + 1 < axes.size(); ++i)
      if (axes[i].key == axes.back().key)
        throw UsageError(fmt::format(
            "memhier sweep: --vary {0} is given twice; give its values in one: --vary {0}=V1,V2", axes.back().key));
  }
  const std::vector<ParamOverride> fixed = param_overrides(vm);
  for (const ParamOverride& f : fixed)
    for (const Axis& a : axes)
      if (a.key == f.name)
        throw UsageError(fmt::format("memhier sweep: --set {0} and --vary {0} both give {0}: keep one", f.name));
  if (vm.count("plot") != 0U) {
    const fs::path plot = vm["plot"].as<std::string>();
    if (fs::exists(plot) && vm.count("force") == 0U)
      throw UsageError(fmt::format("memhier sweep: {} exists; pass --force to replace it", plot.string()));
    // Checked before the simulations: the plot script's failure read as matplotlib missing.
    if (!plot.parent_path().empty() && !fs::is_directory(plot.parent_path()))
      throw UsageError(
          fmt::format("memhier sweep: --plot {}: {} is not a folder", plot.string(), plot.parent_path().string()));
  }
  const std::string trace = vm["trace"].as<std::string>();
  std::vector<Point> points = expand(axes, vm["arch"].as<std::string>());
  // Each point's residency control, refused where the CUDA runtime would refuse it on the point's arch.
  SimOptions residency;
  read_residency_options(vm, residency);
  for (const Axis& a : axes)
    if (a.key == "set_aside" && residency.persisting_set_aside)
      throw UsageError("memhier sweep: --set-aside and --vary set_aside both give the set-aside: keep one");
  for (Point& p : points) {
    p.options = residency;
    check_residency_options(vm, p.arch, p.options);
    if (const auto it = p.values.find("set_aside"); it != p.values.end()) {
      p.options.persisting_set_aside = parse_bytes_flag("--vary set_aside", it->second);
      if (auto problem = set_aside_problem(p.arch, *p.options.persisting_set_aside))
        throw UsageError(
            fmt::format("memhier sweep: --vary set_aside={} on {}: {}", it->second, p.arch.name, *problem));
    }
    if (const auto it = p.values.find("hit_ratio"); it != p.values.end()) {
      p.options.window_hit_ratio = parse_hit_ratio(it->second);
      if (!p.options.window_hit_ratio)
        throw UsageError(fmt::format("memhier sweep: --vary hit_ratio={}: expected a number in [0, 1]", it->second));
    }
  }

  std::map<std::string, std::vector<std::size_t>> groups;  // sim_key -> points
  for (std::size_t i = 0; i < points.size(); ++i) groups[points[i].sim_key].push_back(i);
  std::vector<std::vector<std::size_t>> work;
  work.reserve(groups.size());
  for (auto& [key, members] : groups) work.push_back(members);
  std::cerr << fmt::format("memhier sweep: {} points, {} distinct memory configurations to simulate\n", points.size(),
                           work.size());
  const int threads = threads_flag("sweep", vm["threads"].as<int>());
  {
    std::set<std::string> noted;  // a configuration's note once (points differ in timing keys only)
    for (const std::vector<std::size_t>& w : work)
      if (const std::string note = host_state_note(points[w.front()].arch); !note.empty() && noted.insert(note).second)
        std::cerr << "note: " << note << "\n";
  }
  std::atomic<std::size_t> done = 0;
  std::vector<std::string> errors(work.size());
  std::vector<std::vector<std::string>> notes(work.size());  // residency a configuration left out of a launch
#pragma omp parallel for schedule(dynamic) num_threads(threads)
  for (std::size_t w = 0; w < work.size(); ++w) {
    try {
      Point& first = points[work[w].front()];
      std::vector<ParamOverride> sets = fixed;
      for (const auto& [key, value] : first.values)
        if (key != "arch" && key.find('.') == std::string::npos && kResidencyKeys.count(key) == 0)
          sets.push_back(parse_param_override(fmt::format("{}={}", key, value)));
      auto source = open_trace(trace, sets);
      const std::vector<KernelSim> sims = simulate(first.arch, *source, first.options);
      for (std::size_t i : work[w])
        for (const KernelSim& k : sims) points[i].predictions.push_back(predict(points[i].arch, k));
      for (const KernelSim& k : sims) {
        if (!k.residency.left_out.empty())
          notes[w].push_back(fmt::format("{} on {}: {}", k.launch.name, first.arch.name, k.residency.left_out));
        if (std::string c = residency_caveat(first.arch, k); !c.empty()) notes[w].push_back(std::move(c));
      }
    } catch (const std::exception& e) {
      std::string at;  // the point's values, those its simulation depends on
      for (const auto& [key, value] : points[work[w].front()].values)
        if (kTimingOnly.count(key) == 0) at += fmt::format("{}{}={}", at.empty() ? "" : " ", key, value);
      errors[w] = at.empty() ? e.what() : fmt::format("at {}: {}", at, e.what());
    }
#pragma omp critical
    std::cerr << fmt::format("\r  simulated {}/{}", ++done, work.size()) << std::flush;
  }
  std::cerr << "\n";
  for (const std::string& e : errors)
    if (!e.empty()) throw std::runtime_error(e);  // exit 2, as the input error it holds
  std::set<std::string> shown;
  for (const std::vector<std::string>& n : notes)
    for (const std::string& note : n)
      if (shown.insert(note).second) std::cerr << "note: " << note << "\n";
  // Each architecture's error on record, as predict gives it: a point that changes an arch key is a what-if of it.
  for (const Point& p : points)
    if (const std::string note = fmt::format("{}: error on record: {}", p.arch.name, error_on_record(p.arch));
        shown.insert(note).second)
      std::cerr << "note: " << note << "\n";

  std::vector<std::string> keys;
  keys.reserve(axes.size());
  for (const Axis& a : axes) keys.push_back(a.key);
  nlohmann::json rows = nlohmann::json::array();
  bool launches = false;  // the trace has several: rows say which launch they are
  for (const Point& p : points)
    for (std::size_t i = 0; i < p.predictions.size(); ++i) {
      const Prediction& pr = p.predictions[i];
      launches |= i > 0;
      nlohmann::json row = {{"kernel", pr.kernel},
                            {"launch_index", i},
                            {"seconds", pr.seconds},
                            {"gpu_seconds", pr.gpu_seconds},
                            {"bound", pr.bound},
                            {"dram_bandwidth", pr.dram_bandwidth},
                            {"explanation", pr.explanation}};
      for (const auto& [key, value] : p.values) row[key] = value;
      rows.push_back(row);
    }
  if (vm.count("json") != 0U) {
    std::cout << json_text(nlohmann::json{{"trace", trace}, {"vary", keys}, {"points", rows}}, 2) << "\n";
  } else if (vm.count("csv") != 0U) {
    for (const auto& k : keys) std::cout << csv_field(k) << ",";
    std::cout << "kernel,seconds,bound,dram_bandwidth,launch_index,gpu_seconds\n";
    for (const auto& r : rows) {
      for (const auto& k : keys) std::cout << csv_field(r[k].get<std::string>()) << ",";
      std::cout << fmt::format("{},{:.9g},{},{:.6g},{},{:.9g}\n", csv_field(r["kernel"].get<std::string>()),
                               r["seconds"].get<double>(), r["bound"].get<std::string>(),
                               r["dram_bandwidth"].get<double>(), r["launch_index"].get<std::size_t>(),
                               r["gpu_seconds"].get<double>());
    }
  } else {
    std::vector<std::string> header = keys;
    if (launches) header.emplace_back("launch");
    for (const char* h : {"kernel", "predicted", "bound", "why"}) header.emplace_back(h);
    Table t(header);
    for (const auto& r : rows) {
      std::vector<std::string> cells;
      cells.reserve(keys.size() + 5);
      for (const auto& k : keys) cells.push_back(r[k].get<std::string>());
      if (launches) cells.push_back(std::to_string(r["launch_index"].get<std::size_t>()));
      cells.push_back(r["kernel"].get<std::string>());
      cells.push_back(units::format_duration(r["seconds"].get<double>()));
      cells.push_back(r["bound"].get<std::string>());
      cells.push_back(r["explanation"].get<std::string>());
      t.add(cells);
    }
    t.print(std::cout);
  }
  if (vm.count("plot") != 0U) {
    // The plot's data in a file of our own (beside the plot, it could be one of the user's).
    const fs::path json_file = fs::temp_directory_path() / fmt::format("memhier-sweep-{}.json", getpid());
    std::ofstream(json_file) << json_text(nlohmann::json{{"trace", trace}, {"vary", keys}, {"points", rows}}) << "\n";
    const std::string python = plot_python();
    const std::string cmd =
        fmt::format("{} '{}' '{}' '{}'", python, plot_script(), json_file.string(), vm["plot"].as<std::string>());
    const int rc = python.empty() ? 1 : std::system(cmd.c_str());
    fs::remove(json_file);
    if (rc != 0) {
      std::cerr
          << "memhier sweep: the plot needs python3 with matplotlib (Debian: apt-get install python3-matplotlib)\n";
      return kExitCheckFailed;
    }
    std::cerr << "plot: " << vm["plot"].as<std::string>() << "\n";
  }
  return kExitOk;
}

}  // namespace memhier::cli
