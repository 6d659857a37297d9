// `memhier predict TRACE|KERNEL.yaml... --arch NAME[,NAME...]`: predicted time, the binding resource, a per-level
// breakdown; several kernels or architectures give a comparison table.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "cli_common.h"
#include "cli_run.h"
#include "commands.h"
#include "memhier/arch_loader.h"
#include "memhier/error.h"
#include "memhier/report.h"
#include "memhier/suggest.h"
#include "memhier/timing.h"
#include "memhier/trace_io.h"
#include "memhier/trace_json.h"
#include "memhier/units.h"
#include "table.h"

namespace memhier::cli {
namespace {

// --arch's comma-separated names; UsageError for an empty one ("h100,,a100": a name left out by mistake).
std::vector<std::string> split_archs(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == ',') {
      if (i == start && !s.empty())
        throw UsageError(fmt::format("memhier predict: --arch '{}' has an empty name at character {}", s, i + 1));
      if (i > start) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

struct Row {
  std::string trace;
  std::size_t trace_index = 0;   // its place among the traces given
  std::size_t launch_index = 0;  // in the trace
  Arch arch;
  KernelSim sim;
  Prediction p;
};

nlohmann::json to_json(const Row& r) {
  nlohmann::json terms = nlohmann::json::array();
  for (const TimeTerm& t : r.p.terms) terms.push_back({{"name", t.name}, {"seconds", t.seconds}, {"detail", t.detail}});
  nlohmann::json counters = nlohmann::json::object();
  for (const SimCounterInfo& i : sim_counter_table()) counters[std::string(i.name)] = r.sim.counters.*i.field;
  return {{"trace", r.trace},
          {"launch_index", r.launch_index},
          {"arch", r.arch.name},
          {"kernel", r.p.kernel},
          {"seconds", r.p.seconds},
          {"launch_seconds", r.p.launch_seconds},
          {"gpu_seconds", r.p.gpu_seconds},
          {"bound", r.p.bound},
          {"explanation", r.p.explanation},
          {"terms", terms},
          {"dram_bandwidth", r.p.dram_bandwidth},
          {"active_sms", r.p.active_sms},
          {"achieved_warps_per_sm", r.p.warps_per_sm},
          {"warps_needed_per_sm", r.p.warps_needed},
          {"occupancy",
           {{"blocks_per_sm", r.sim.occupancy.blocks_per_sm},
            {"theoretical_warps_per_sm", r.sim.occupancy.active_warps_per_sm}}},
          {"launch", launch_to_json(r.sim.launch)},
          {"residency", residency_to_json(r.sim.residency)},
          {"error_on_record", record_json(r.arch)},
          {"counters", counters}};
}

void print_detail(const Row& r) {
  std::cout << fmt::format("{} on {} ({}): {}\n  {}\n", r.p.kernel, r.arch.name, r.arch.full_name,
                           units::format_duration(r.p.seconds), r.p.explanation);
  // What ncu shows (gpu__time_duration): the launch without the host's part.
  if (r.arch.launch_gpu_overhead_seconds > 0)
    std::cout << fmt::format("  on the GPU (ncu's gpu__time_duration): {}\n", units::format_duration(r.p.gpu_seconds));
  std::cout << fmt::format("  occupancy {} blocks/SM, {:.1f} warps/SM achieved on {} SMs; DRAM {} achieved\n",
                           r.sim.occupancy.blocks_per_sm, r.p.warps_per_sm, r.p.active_sms,
                           units::format_bandwidth(r.p.dram_bandwidth));
  if (const std::string res = residency_line(r.arch, r.sim.residency); !res.empty())
    std::cout << "  L2 residency: " << res << "\n";
  std::cout << "  error on record: " << error_on_record(r.arch) << "\n";
  if (const std::string b = error_on_record_bound(r.arch, r.p.bound); !b.empty())
    std::cout << "                   " << b << "\n";
  std::cout << "\n";
  Table t({"resource", "time", "share", "from"});
  for (const TimeTerm& term : r.p.terms)
    t.add({term.name, units::format_duration(term.seconds),
           fmt::format("{:.0f}%", r.p.seconds > 0 ? 100 * term.seconds / r.p.seconds : 0.0), term.detail});
  t.add({"launch", units::format_duration(r.p.launch_seconds), "",
         r.p.idle_gpu ? "arch launch.idle_overhead (--idle-gpu)" : "arch launch.overhead"});
  t.print(std::cout);
  std::cout << "\n";
}

}  // namespace

int run_predict(const std::vector<std::string>& args) {
  po::options_description options("options");
  options.add_options()                                                                                      //
      ("trace", po::value<std::vector<std::string>>()->required(), "traces: kernel .yaml, .mht, Accel-Sim")  //
      ("arch", po::value<std::string>()->required(), "architecture(s): h100 or h100,b200 or a YAML file")    //
      ("set", po::value<std::vector<std::string>>(),
       "override a description parameter: --set n=4096 (of several traces, in each description that declares it)")  //
      ("threads", po::value<int>()->default_value(0), kThreadsHelp)                                                 //
      ("idle-gpu", "each launch finds the GPU idle (timed alone after a synchronize): launch.idle_overhead")        //
      ("keep-cache",
       "carry cache contents from one launch to the next, as in a loop of launches timed without a "
       "flush, and from one trace to the next, in the order given (default: cold, as ncu measures)")  //
      ("json", "machine-readable output")                                                             //
      ("csv", "one CSV row per kernel and architecture");
  add_residency_options(options);
  add_launch_options(options);
  add_progress_options(options);
  po::positional_options_description pos;
  pos.add("trace", -1);
  po::variables_map vm;
  if (!parse("predict", "TRACE|KERNEL.yaml... --arch NAME[,NAME...] [--json|--csv]", args, options, pos, vm))
    return kExitOk;
  const std::vector<ParamOverride> sets = param_overrides(vm);
  SimOptions opt = sim_options("predict", vm);
  std::vector<Arch> archs;
  for (const std::string& a : split_archs(vm["arch"].as<std::string>())) archs.push_back(load_arch(a));
  if (archs.empty()) throw UsageError("memhier predict: --arch names no architecture");
  read_residency_options(vm, opt);
  for (const Arch& arch : archs) check_residency_options(vm, arch, opt);
  const LaunchFilter filter = launch_filter("predict", vm);
  check_progress_options("predict", vm);
  check_output_format("predict", vm);
  for (const Arch& arch : archs)
    if (const std::string note = host_state_note(arch); !note.empty()) std::cerr << "note: " << note << "\n";
  std::vector<Row> rows;
  std::vector<std::string> caveats;
  // With several traces, --kernel or --launch may take no launch of some; it must take one somewhere.
  const std::vector<std::string> traces = vm["trace"].as<std::vector<std::string>>();
  const std::vector<std::vector<ParamOverride>> trace_sets = sets_by_trace(traces, sets);
  // One simulation of `group`'s traces (their launches one trace's after another's) on `arch`, into rows.
  auto simulate_group = [&](const Arch& arch, const std::vector<std::size_t>& group) {
    std::vector<std::unique_ptr<TraceSource>> opened;
    std::vector<std::unique_ptr<FilteredSource>> filtered;
    ChainSource chain;
    std::optional<std::size_t> launches = 0;
    std::optional<std::uint64_t> instructions = 0;
    for (const std::size_t t : group) {
      opened.push_back(open_trace(traces[t], trace_sets[t]));
      const auto [n, i] = trace_totals(*opened.back(), filter);
      launches = launches && n ? std::optional(*launches + *n) : std::nullopt;
      instructions = instructions && i ? std::optional(*instructions + *i) : std::nullopt;
      filtered.push_back(std::make_unique<FilteredSource>(*opened.back(), filter, traces[t], traces.size() == 1));
      chain.add(*filtered.back());
    }
    std::vector<KernelSim> sims;
    {
      const std::string name = group.size() == 1 ? std::filesystem::path(traces[group[0]]).filename().string()
                                                 : fmt::format("{} traces", group.size());
      ProgressLine progress(vm, fmt::format("{} on {}", name, arch.name), launches, instructions);
      SimOptions watched = opt;  // its callback goes with the line
      watched.progress = progress.callback();
      sims = simulate(arch, chain, watched);
    }
    std::vector<std::size_t> taken(group.size(), 0);  // launches of each trace so far
    for (std::size_t i = 0; i < sims.size(); ++i) {
      KernelSim& k = sims[i];
      const std::size_t from = chain.sources()[i];
      if (!k.launch.captured_arch.empty() && k.launch.captured_arch != arch.name)
        caveats.push_back(
            fmt::format("{} was captured on {}; on {} it assumes the same grid, addresses and "
                        "instruction stream (code compiled for another GPU may differ)",
                        k.launch.name, k.launch.captured_arch, arch.name));
      if (!k.residency.left_out.empty())
        caveats.push_back(fmt::format("{} on {}: {}", k.launch.name, arch.name, k.residency.left_out));
      if (std::string c = residency_caveat(arch, k); !c.empty()) caveats.push_back(std::move(c));
      PredictOptions timing;
      timing.idle_gpu = vm.count("idle-gpu") != 0U;
      Prediction p = predict(arch, k, timing);
      rows.push_back({traces[group[from]], group[from], filtered[from]->numbers()[taken[from]++], arch, std::move(k),
                      std::move(p)});
    }
  };
  // With --keep-cache the traces run as one sequence on each arch: a trace's first launch finds the caches the previous
  // trace's last launch left (a producer's output, then its consumer). Rows go trace by trace, arch by arch, as the
  // launches of each trace are simulated alone without it (cold launches: the same counts either way).
  if (!opt.flush_between_launches && traces.size() > 1) {
    std::vector<std::size_t> all(traces.size());
    for (std::size_t t = 0; t < traces.size(); ++t) all[t] = t;
    for (const Arch& arch : archs) simulate_group(arch, all);
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& a, const Row& b) { return a.trace_index < b.trace_index; });
  } else {
    for (std::size_t t = 0; t < traces.size(); ++t)
      for (const Arch& arch : archs) simulate_group(arch, {t});
  }
  if (rows.empty() && filter.any()) {
    const bool named = filter.name.has_value();
    throw InputError({named ? "--kernel" : "--launch"}, named ? filter.name_text : filter.numbers_text,
                     fmt::format("takes no launch of any of the {} traces", traces.size()));
  }
  if (vm.count("json") != 0U) {
    nlohmann::json j = nlohmann::json::array();
    for (const Row& r : rows) j.push_back(to_json(r));
    std::cout << json_text(j, 2) << "\n";
  } else if (vm.count("csv") != 0U) {
    // time_mape_on_record: the arch's own accuracy record (empty where it has none of its own).
    // gpu_seconds: the launch's time on the GPU, as ncu's gpu__time_duration gives it (Prediction::gpu_seconds).
    std::cout << "kernel,arch,seconds,bound,dram_bandwidth,blocks_per_sm,achieved_warps_per_sm,launch_index,"
                 "time_mape_on_record,gpu_seconds\n";
    for (const Row& r : rows) {
      const AccuracyRecord& a = r.arch.accuracy;
      const std::string mape = own_accuracy_record(r.arch) ? fmt::format("{:g}", a.time_mape_pct) : std::string();
      std::cout << fmt::format("{},{},{:.9g},{},{:.6g},{},{:.2f},{},{},{:.9g}\n", csv_field(r.p.kernel),
                               csv_field(r.arch.name), r.p.seconds, r.p.bound, r.p.dram_bandwidth,
                               r.sim.occupancy.blocks_per_sm, r.p.warps_per_sm, r.launch_index, mape, r.p.gpu_seconds);
    }
  } else if (rows.size() == 1) {
    print_detail(rows[0]);
  } else {
    // Launches are numbered where a trace gave several (or some were chosen): a column of their own, blank for a trace
    // of one launch among others.
    std::map<std::string, std::size_t> last;  // the highest launch number of each trace
    for (const Row& r : rows) last[r.trace] = std::max(last[r.trace], r.launch_index);
    const bool numbered =
        filter.any() || std::any_of(last.begin(), last.end(), [](const auto& kv) { return kv.second != 0; });
    std::vector<std::string> header{"kernel", "arch", "predicted", "bound", "DRAM achieved", "warps/SM", "why"};
    if (numbered) header.insert(header.begin(), "launch");
    Table t(header);
    for (const Row& r : rows) {
      std::vector<std::string> cells{r.p.kernel,
                                     r.arch.name,
                                     units::format_duration(r.p.seconds),
                                     r.p.bound,
                                     units::format_bandwidth(r.p.dram_bandwidth),
                                     fmt::format("{:.1f}", r.p.warps_per_sm),
                                     r.p.explanation};
      if (numbered)
        cells.insert(cells.begin(),
                     filter.any() || last[r.trace] != 0 ? std::to_string(r.launch_index) : std::string());
      t.add(cells);
    }
    t.print(std::cout);
  }
  // Every table, CSV and JSON ends with each arch's error on record, on stderr (one prediction prints it in its
  // detail).
  if (rows.size() != 1 || vm.count("json") != 0U || vm.count("csv") != 0U)
    for (const Arch& arch : archs)
      caveats.push_back(fmt::format("{}: error on record: {}", arch.name, error_on_record(arch)));
  std::set<std::string> shown;  // a trace of many launches repeats its caveats
  for (const std::string& c : caveats)
    if (shown.insert(c).second) std::cerr << "note: " << c << "\n";
  return kExitOk;
}

}  // namespace memhier::cli
