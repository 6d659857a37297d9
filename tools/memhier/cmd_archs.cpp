// `memhier archs list|show|check`
#include <fmt/format.h>

#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "memhier/arch_loader.h"
#include "memhier/arch_schema.h"
#include "memhier/report.h"
#include "memhier/trace_json.h"
#include "memhier/units.h"
#include "table.h"

namespace memhier::cli {
namespace {

int list(bool json) {
  nlohmann::json out = nlohmann::json::array();
  // "time error": the kernel-time MAPE of the arch's own accuracy record (`predict` says more), "-" where none.
  Table table({"name", "gpu", "cc", "SMs", "SM clock", "L2", "DRAM", "DRAM effective", "time error", "file"});
  for (const auto& path : list_arch_files()) {
    Arch a = load_arch_file(path);
    const bool own = own_accuracy_record(a);
    out.push_back(
        {{"name", a.name}, {"full_name", a.full_name}, {"file", path.string()}, {"error_on_record", record_json(a)}});
    table.add({a.name, a.full_name, format_arch_field(a, *find_arch_field("compute_capability")),
               std::to_string(a.sm.count), units::format_frequency(a.sm_clock_hz), units::format_bytes(a.l2.size),
               a.dram.type, units::format_bandwidth(a.dram.effective_bandwidth),
               own ? fmt::format("{:.1f}% ({} cases)", a.accuracy.time_mape_pct, a.accuracy.cases) : "-",
               path.string()});
  }
  if (json) {
    std::cout << json_text(out, 2) << "\n";
  } else {
    table.print(std::cout);
  }
  return kExitOk;
}

int show(const std::string& name, bool json) {
  Arch a = load_arch(name);
  if (json) {
    std::cout << json_text(arch_to_json(a), 2) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format("{} ({}), from {}\n\n", a.name, a.full_name, a.source_file);
  Table table({"key", "value", "description", "set in"});
  for (const ArchField& f : arch_fields()) {
    auto origin = a.key_origin.find(std::string(f.key));
    std::string where =
        origin == a.key_origin.end() ? "(not set)" : fmt::format("{}:{}", origin->second.file, origin->second.line);
    table.add({std::string(f.key), format_arch_field(a, f), std::string(f.description), where});
  }
  table.print(std::cout);
  return kExitOk;
}

int check(const std::vector<std::string>& files, bool json) {
  int failures = 0;
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& file : files) {
    try {
      Arch a = load_arch_file(file);
      out.push_back({{"file", file}, {"ok", true}, {"name", a.name}});
      if (!json) std::cout << fmt::format("ok    {} ({})\n", file, a.name);
    } catch (const InputError& e) {
      ++failures;
      out.push_back({{"file", file}, {"ok", false}, {"error", e.what()}});
      if (!json) std::cerr << fmt::format("FAIL  {}\n", e.what());
    }
  }
  if (json) std::cout << json_text(out, 2) << "\n";
  if (!json && files.size() > 1) {
    std::cout << fmt::format("{} of {} files valid\n", files.size() - static_cast<std::size_t>(failures), files.size());
  }
  return failures == 0 ? kExitOk : kExitCheckFailed;
}

}  // namespace

int run_archs(const std::vector<std::string>& args) {
  po::options_description options("options");
  options.add_options()("json", "machine-readable output")                     //
      ("action", po::value<std::string>()->required(), "list | show | check")  //
      ("args", po::value<std::vector<std::string>>()->default_value({}, ""), "NAME for show, FILE... for check");
  po::positional_options_description positional;
  positional.add("action", 1).add("args", -1);
  po::variables_map vm;
  if (!parse("archs", "list | show NAME | check FILE... [--json]", args, options, positional, vm)) return kExitOk;
  const auto& action = vm["action"].as<std::string>();
  const auto& rest = vm["args"].as<std::vector<std::string>>();
  bool json = vm.count("json") != 0U;
  if (action == "list") {
    if (!rest.empty()) throw UsageError("memhier archs: 'list' takes no arguments");
    return list(json);
  }
  if (action == "show") {
    if (rest.size() != 1) throw UsageError("memhier archs: 'show' takes exactly one NAME or FILE");
    return show(rest[0], json);
  }
  if (action == "check") {
    if (rest.empty()) throw UsageError("memhier archs: 'check' needs at least one FILE");
    return check(rest, json);
  }
  throw UsageError(fmt::format("memhier archs: unknown action '{}' (list, show or check)", action));
}

}  // namespace memhier::cli
