// `memhier simulate TRACE|KERNEL.yaml --arch NAME`: exact counts per level, named like Nsight Compute's metrics.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli_common.h"
#include "cli_run.h"
#include "commands.h"
#include "memhier/arch_loader.h"
#include "memhier/error.h"
#include "memhier/report.h"
#include "memhier/sim.h"
#include "memhier/trace_io.h"
#include "memhier/trace_json.h"
#include "memhier/units.h"
#include "table.h"

namespace memhier::cli {
namespace {

double pct(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}
double per(std::uint64_t a, std::uint64_t b) { return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b); }

// The busiest DRAM channel's bytes (read and written) over the mean channel's; 0 with no DRAM traffic.
double channel_imbalance(const KernelSim& k) {
  std::uint64_t busiest = 0, total = 0;
  for (std::size_t i = 0; i < k.dram_channel_read_bytes.size(); ++i) {
    const std::uint64_t bytes = k.dram_channel_read_bytes[i] + k.dram_channel_write_bytes[i];
    busiest = std::max(busiest, bytes);
    total += bytes;
  }
  return total == 0 ? 0.0 : per(busiest * k.dram_channel_read_bytes.size(), total);
}

nlohmann::json to_json(const Arch& arch, const KernelSim& k) {
  nlohmann::json counters = nlohmann::json::object();
  nlohmann::json ncu = nlohmann::json::object();
  for (const SimCounterInfo& i : sim_counter_table()) {
    counters[std::string(i.name)] = k.counters.*i.field;
    if (!i.ncu_metric.empty()) ncu[std::string(i.ncu_metric)] = k.counters.*i.field;
  }
  const SimCounters& c = k.counters;
  return {{"arch", arch.name},
          {"dram_channels", {{"read_bytes", k.dram_channel_read_bytes}, {"write_bytes", k.dram_channel_write_bytes}}},
          {"launch", launch_to_json(k.launch)},
          {"residency", residency_to_json(k.residency)},
          {"occupancy",
           {{"blocks_per_sm", k.occupancy.blocks_per_sm},
            {"theoretical_warps_per_sm", k.occupancy.active_warps_per_sm},
            {"achieved_warps_per_sm", k.achieved_warps_per_sm},
            {"l1_capacity", k.occupancy.l1_capacity}}},
          {"counters", counters},
          {"ncu", ncu},
          {"derived",
           {{"global_ld_sectors_per_request", per(c.global_ld_sectors, c.global_ld_requests)},
            {"global_st_sectors_per_request", per(c.global_st_sectors, c.global_st_requests)},
            {"l1_hit_rate_pct", pct(c.l1_sector_hits, c.l1_sector_lookups)},
            {"l2_hit_rate_pct", pct(c.l2_read_hits + c.l2_write_hits + c.l2_atom_hits + c.l2_red_hits,
                                    c.l2_read_sectors + c.l2_write_sectors + c.l2_atom_sectors + c.l2_red_sectors)},
            {"l2_read_hit_rate_pct", pct(c.l2_read_hits, c.l2_read_sectors)},
            {"shared_ld_wavefronts_per_request", per(c.shared_ld_wavefronts, c.shared_ld_requests)},
            {"dram_row_hit_rate_pct", pct(c.dram_row_hits, c.dram_row_hits + c.dram_row_misses)},
            {"dram_channel_imbalance", channel_imbalance(k)}}}};
}

// `number`: the launch's place in the trace, where it is shown.
void print_human(const Arch& arch, const KernelSim& k, std::optional<std::size_t> number) {
  const SimCounters& c = k.counters;
  const KernelLaunch& l = k.launch;
  std::cout << fmt::format(
      "{}{} on {}: grid {}x{}x{} block {}x{}x{}, {} blocks/SM ({} warps/SM theoretical, {:.1f} achieved), "
      "{} wave(s), L1 {}\n",
      number ? fmt::format("launch {}: ", *number) : std::string(), l.name, arch.name, l.grid.x, l.grid.y, l.grid.z,
      l.block.x, l.block.y, l.block.z, k.occupancy.blocks_per_sm, k.occupancy.active_warps_per_sm,
      k.achieved_warps_per_sm, c.waves, units::format_bytes(k.occupancy.l1_capacity));
  if (const std::string r = residency_line(arch, k.residency); !r.empty()) std::cout << "L2 residency: " << r << "\n";
  Table t({"level", "what", "requests", "sectors / wavefronts", "per request", "hit rate", "notes"});
  // `req`: none where the model counts no requests (the L2's rows count sectors only): "-", not a count of 0.
  auto row = [&](std::string level, std::string what, std::optional<std::uint64_t> req, std::uint64_t units,
                 std::string hit, std::string note) {
    if (req.value_or(0) == 0 && units == 0) return;
    t.add({std::move(level), std::move(what), req ? std::to_string(*req) : "-", std::to_string(units),
           req ? fmt::format("{:.2f}", per(units, *req)) : "-", std::move(hit), std::move(note)});
  };
  const std::string l1_hit =
      c.l1_sector_lookups == 0 ? "-" : fmt::format("{:.1f}%", pct(c.l1_sector_hits, c.l1_sector_lookups));
  // The L1 counts one hit rate for every load through it (global, local, texture): shown once, on the first row.
  const bool local_loads = c.local_ld_requests != 0;
  row("L1", "global loads", c.global_ld_requests, c.global_ld_sectors, l1_hit,
      local_loads ? "hit rate: global and local loads" : "");
  row("L1", "global stores", c.global_st_requests, c.global_st_sectors, "-", "write-through");
  row("L1", "global atomics", c.global_atom_requests, c.global_atom_sectors, "-", "at L2");
  row("L1", "global reductions", c.global_red_requests, c.global_red_sectors, "-", "at L2");
  row("L1", "local loads", c.local_ld_requests, c.local_ld_sectors, "-", "in the hit rate above");
  row("L1", "local stores", c.local_st_requests, c.local_st_sectors, "-", "");
  row("shared", "loads", c.shared_ld_requests, c.shared_ld_wavefronts, "-",
      fmt::format("{} bank conflicts", c.shared_ld_bank_conflicts));
  row("shared", "stores", c.shared_st_requests, c.shared_st_wavefronts, "-",
      fmt::format("{} bank conflicts", c.shared_st_bank_conflicts));
  row("shared", "atomics", c.shared_atom_requests, c.shared_atom_wavefronts, "-", "");
  row("shared", "cp.async writes", c.shared_async_requests, c.shared_async_wavefronts, "-", "");
  const bool constant_cache = arch.constant_cache.associativity > 0 && c.constant_serialized > 0;
  const double constant_hits = pct(c.constant_serialized - c.constant_misses, c.constant_serialized);
  row("constant", "loads", c.constant_requests, c.constant_serialized,
      constant_cache ? fmt::format("{:.1f}%", constant_hits) : "-",
      constant_cache ? fmt::format("serialized per distinct address, {} misses", c.constant_misses)
                     : "serialized per distinct address");
  row("L2", "reads", std::nullopt, c.l2_read_sectors, fmt::format("{:.1f}%", pct(c.l2_read_hits, c.l2_read_sectors)),
      fmt::format("{:.1f}% far, {} persisting hits",
                  pct(c.l2_far_sectors, c.l2_read_sectors + c.l2_write_sectors + c.l2_atom_sectors + c.l2_red_sectors),
                  c.l2_persisting_hits));
  row("L2", "writes", std::nullopt, c.l2_write_sectors,
      fmt::format("{:.1f}%", pct(c.l2_write_hits, c.l2_write_sectors)),
      c.l2_partial_fills == 0 ? std::string("write-back")
                              : fmt::format("write-back, {} fills of partly written sectors", c.l2_partial_fills));
  row("L2", "atomics", std::nullopt, c.l2_atom_sectors, fmt::format("{:.1f}%", pct(c.l2_atom_hits, c.l2_atom_sectors)),
      "");
  row("L2", "reductions", std::nullopt, c.l2_red_sectors, fmt::format("{:.1f}%", pct(c.l2_red_hits, c.l2_red_sectors)),
      "");
  t.print(std::cout);
  std::cout << fmt::format(
      "DRAM: {} read, {} written, row hit rate {:.1f}%, busiest of {} channels {:.2f}x their mean\n\n",
      units::format_size(c.dram_read_bytes), units::format_size(c.dram_write_bytes),
      pct(c.dram_row_hits, c.dram_row_hits + c.dram_row_misses), k.dram_channel_read_bytes.size(),
      channel_imbalance(k));
}

}  // namespace

int run_simulate(const std::vector<std::string>& args) {
  po::options_description options("options");
  options.add_options()                                                                                    //
      ("trace", po::value<std::string>()->required(), "trace: kernel .yaml, .mht or Accel-Sim")            //
      ("arch", po::value<std::string>()->required(), "architecture name or YAML file")                     //
      ("set", po::value<std::vector<std::string>>(), "override a description parameter: --set n=4096")     //
      ("threads", po::value<int>()->default_value(0), kThreadsHelp)                                        //
      ("keep-cache", "carry cache contents from one launch to the next (default: cold, as ncu measures)")  //
      ("json", "machine-readable output")                                                                  //
      ("csv", "one CSV row per launch");
  add_residency_options(options);
  add_launch_options(options);
  add_progress_options(options);
  po::positional_options_description pos;
  pos.add("trace", 1);
  po::variables_map vm;
  if (!parse("simulate", "TRACE|KERNEL.yaml --arch NAME [--json|--csv] [--window ...]", args, options, pos, vm))
    return kExitOk;
  check_output_format("simulate", vm);
  const Arch arch = load_arch(vm["arch"].as<std::string>());
  const std::vector<ParamOverride> sets = param_overrides(vm);
  SimOptions opt = sim_options("simulate", vm);
  read_residency_options(vm, opt);
  check_residency_options(vm, arch, opt);
  const LaunchFilter filter = launch_filter("simulate", vm);
  check_progress_options("simulate", vm);
  const std::string path = vm["trace"].as<std::string>();
  if (const std::string note = host_state_note(arch); !note.empty()) std::cerr << "note: " << note << "\n";
  auto trace = open_trace(path, sets);
  FilteredSource source(*trace, filter, path);
  std::vector<KernelSim> result;
  {
    const auto [launches, instructions] = trace_totals(*trace, filter);
    ProgressLine progress(vm, std::filesystem::path(path).filename().string(), launches, instructions);
    SimOptions watched = opt;  // its callback goes with the line
    watched.progress = progress.callback();
    result = simulate(arch, source, watched);
  }
  // What the architecture refused of the trace's residency control, in every output format (once a launch name).
  std::set<std::string> notes;
  for (const KernelSim& k : result)
    if (!k.residency.left_out.empty() && notes.insert(k.launch.name + ": " + k.residency.left_out).second)
      std::cerr << "note: " << k.launch.name << " on " << arch.name << ": " << k.residency.left_out << "\n";
  if (vm.count("json") != 0U) {
    nlohmann::json j = nlohmann::json::array();
    for (std::size_t i = 0; i < result.size(); ++i) {
      j.push_back(to_json(arch, result[i]));
      j.back()["launch_index"] = source.numbers()[i];
    }
    std::cout << json_text(j, 2) << "\n";
  } else if (vm.count("csv") != 0U) {
    std::cout << "kernel,arch";
    for (const SimCounterInfo& i : sim_counter_table()) std::cout << "," << i.name;
    std::cout << ",launch_index\n";
    for (std::size_t r = 0; r < result.size(); ++r) {
      std::cout << csv_field(result[r].launch.name) << "," << csv_field(arch.name);
      for (const SimCounterInfo& i : sim_counter_table()) std::cout << "," << result[r].counters.*i.field;
      std::cout << "," << source.numbers()[r] << "\n";
    }
  } else {
    // Launches are numbered where there are several or some were chosen.
    const bool numbered = filter.any() || result.size() > 1;
    for (std::size_t i = 0; i < result.size(); ++i)
      print_human(arch, result[i], numbered ? std::optional(source.numbers()[i]) : std::nullopt);
    if (result.size() > 1) {  // a captured program's launches: what they add up to
      SimCounters all;
      for (const KernelSim& k : result) all += k.counters;
      std::cout << fmt::format(
          "{} launches: {} warp instructions, L1 hit rate {:.1f}%, L2 read hit rate {:.1f}%, DRAM {} read, {} "
          "written\n",
          result.size(), all.warp_instructions, pct(all.l1_sector_hits, all.l1_sector_lookups),
          pct(all.l2_read_hits, all.l2_read_sectors), units::format_size(all.dram_read_bytes),
          units::format_size(all.dram_write_bytes));
    }
  }
  return kExitOk;
}

}  // namespace memhier::cli
