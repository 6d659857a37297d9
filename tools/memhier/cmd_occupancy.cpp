// `memhier occupancy --arch NAME --threads N --regs N --smem BYTES`
#include <fmt/format.h>

#include <climits>
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "memhier/arch_loader.h"
#include "memhier/occupancy.h"
#include "memhier/report.h"
#include "memhier/trace_json.h"
#include "memhier/units.h"

namespace memhier::cli {
namespace {

std::string limit_text(int blocks) { return blocks == INT_MAX ? "unlimited" : std::to_string(blocks); }

void print_human(const Arch& arch, const LaunchResources& l, const Occupancy& o) {
  std::cout << fmt::format("{} ({}): {} threads/block, {} registers/thread, {} static + {} dynamic shared/block{}\n\n",
                           arch.name, arch.full_name, l.threads_per_block, l.registers_per_thread,
                           units::format_bytes(l.static_shared_bytes), units::format_bytes(l.dynamic_shared_bytes),
                           l.carveout_percent < 0 ? "" : fmt::format(", carveout preference {}%", l.carveout_percent));
  if (o.blocks_per_sm == 0) {
    std::cout << fmt::format("not launchable: {}\n", o.not_launchable);
    return;
  }
  std::string limiters;
  for (const auto& n : limiter_names(o.limiters)) limiters += (limiters.empty() ? "" : ", ") + n;
  std::cout << fmt::format("  blocks per SM            {}   (limited by {})\n", o.blocks_per_sm, limiters);
  std::cout << fmt::format("  active warps per SM      {} of {}\n", o.active_warps_per_sm, arch.sm.max_warps_per_sm);
  std::cout << fmt::format("  theoretical occupancy    {:.1f}%\n", 100.0 * o.occupancy);
  std::cout << fmt::format("  limit by warps           {}\n", limit_text(o.blocks_by_warps));
  std::cout << fmt::format("  limit by registers       {}   ({} registers allocated per block)\n",
                           limit_text(o.blocks_by_registers), o.allocated_registers_per_block);
  std::cout << fmt::format("  limit by shared memory   {}   ({} allocated per block, incl. {} driver reserve)\n",
                           limit_text(o.blocks_by_shared_memory), units::format_bytes(o.allocated_shared_per_block),
                           units::format_bytes(arch.shared_memory.reserved_per_block));
  std::cout << fmt::format("  limit by blocks          {}\n", limit_text(o.blocks_by_blocks));
  std::cout << fmt::format("  limit by barriers        {}\n", limit_text(o.blocks_by_barriers));
  std::cout << fmt::format("  shared-memory carveout   {}   -> L1 data cache {}\n",
                           units::format_bytes(o.shared_carveout), units::format_bytes(o.l1_capacity));
}

}  // namespace

int run_occupancy(const std::vector<std::string>& args) {
  po::options_description options("options");
  options.add_options()                                                                                            //
      ("arch", po::value<std::string>()->required(), "architecture name or YAML file")                             //
      ("threads", po::value<int>()->required(), "threads per block")                                               //
      ("regs", po::value<int>()->required(), "registers per thread")                                               //
      ("smem", po::value<std::string>()->default_value("0"), "static shared memory per block (bytes, or 48KiB)")   //
      ("dynamic-smem", po::value<std::string>()->default_value("0"), "dynamic shared memory per block")            //
      ("carveout", po::value<int>()->default_value(-1), "preferred shared-memory carveout in percent (-1: none)")  //
      ("barriers", po::value<int>()->default_value(1), "block barriers the kernel uses")                           //
      ("no-optin", "the kernel did not opt in to more than the default per-block shared memory")                   //
      ("json", "machine-readable output");
  po::variables_map vm;
  if (!parse("occupancy", "--arch NAME --threads N --regs N [--smem BYTES] [options]", args, options, {}, vm)) {
    return kExitOk;
  }
  Arch arch = load_arch(vm["arch"].as<std::string>());
  LaunchResources l;
  l.threads_per_block = vm["threads"].as<int>();
  l.registers_per_thread = vm["regs"].as<int>();
  l.static_shared_bytes = parse_bytes_flag("smem", vm["smem"].as<std::string>());
  l.dynamic_shared_bytes = parse_bytes_flag("dynamic-smem", vm["dynamic-smem"].as<std::string>());
  l.carveout_percent = vm["carveout"].as<int>();
  l.block_barriers = vm["barriers"].as<int>();
  l.shared_optin = vm.count("no-optin") == 0U;
  Occupancy o = compute_occupancy(arch, l);
  if (vm.count("json") != 0U) {
    nlohmann::json out = occupancy_to_json(o);
    out["arch"] = arch.name;
    out["threads_per_block"] = l.threads_per_block;
    out["registers_per_thread"] = l.registers_per_thread;
    out["static_shared_bytes"] = l.static_shared_bytes;
    out["dynamic_shared_bytes"] = l.dynamic_shared_bytes;
    std::cout << json_text(out, 2) << "\n";
  } else {
    print_human(arch, l, o);
  }
  return o.blocks_per_sm > 0 ? kExitOk : kExitCheckFailed;
}

}  // namespace memhier::cli
