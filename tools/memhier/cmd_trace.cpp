// `memhier trace gen|info|dump|convert`: make, inspect and convert traces.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "cli_common.h"
#include "cli_run.h"
#include "commands.h"
#include "memhier/accelsim.h"
#include "memhier/error.h"
#include "memhier/mht.h"
#include "memhier/trace_io.h"
#include "memhier/trace_json.h"
#include "memhier/units.h"
#include "table.h"

namespace memhier::cli {
namespace fs = std::filesystem;
namespace {

// Refuses to replace an existing file or directory unless --force.
void check_output(const fs::path& out, bool force) {
  std::error_code ec;
  if (fs::exists(out, ec) && !force) throw InputError({out.string()}, "", "already exists; pass --force to replace it");
}

double ratio(std::uint64_t a, std::uint64_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}

std::string dim(const Dim3& d) { return fmt::format("{}x{}x{}", d.x, d.y, d.z); }

bool is_accelsim_output(const fs::path& out) { return out.extension() != ".mht"; }

int run_gen(const std::vector<std::string>& args) {
  po::options_description options("options");
  options.add_options()                                                                     //
      ("description", po::value<std::string>()->required(), "kernel description (.yaml)")   //
      ("output,o", po::value<std::string>()->required(), "output .mht file")                //
      ("set", po::value<std::vector<std::string>>(), "override a parameter: --set n=4096")  //
      ("force", "replace the output if it exists");
  po::positional_options_description pos;
  pos.add("description", 1);
  po::variables_map vm;
  if (!parse("trace gen", "KERNEL.yaml -o OUT.mht [--set NAME=EXPR]...", args, options, pos, vm)) return kExitOk;
  const fs::path out = vm["output"].as<std::string>();
  if (out.extension() != ".mht") throw UsageError("memhier trace gen: the output must end in .mht");
  check_output(out, vm.count("force") != 0U);
  auto source = load_kernel_description(vm["description"].as<std::string>(), param_overrides(vm));
  write_mht(*source, out);
  MhtReader check(out);
  const MhtKernelInfo& k = check.kernels().front();
  std::cout << fmt::format("{}: {} launch(es) of {}, {} blocks, {} warp memory instructions, {} on disk\n",
                           out.string(), check.kernels().size(), k.launch.name, k.counts.blocks,
                           k.counts.memory_instructions, units::format_bytes(check.file_size()));
  return kExitOk;
}

struct KernelSummary {
  KernelLaunch launch;
  TraceCounts counts;
  std::uint64_t raw_bytes = 0, stored_bytes = 0;  // .mht only
};

std::vector<KernelSummary> summarize(const fs::path& path, const std::vector<ParamOverride>& sets, bool& from_index) {
  std::vector<KernelSummary> out;
  from_index = detect_trace_format(path) == TraceFormat::mht;
  if (from_index) {
    MhtReader r(path);
    for (const MhtKernelInfo& k : r.kernels()) out.push_back({k.launch, k.counts, k.raw_bytes, k.stored_bytes});
    return out;
  }
  auto source = open_trace(path, sets);
  KernelLaunch k;
  BlockTrace b;
  while (source->next_kernel(k)) {
    KernelSummary s{k, {}};
    while (source->next_block(b)) s.counts.add(b);
    out.push_back(std::move(s));
  }
  return out;
}

int run_info(const std::vector<std::string>& args) {
  po::options_description options("options");
  options.add_options()                                                                        //
      ("trace", po::value<std::string>()->required(), "trace: .mht, kernel .yaml, Accel-Sim")  //
      ("set", po::value<std::vector<std::string>>(), "override a description parameter")       //
      ("json", "machine-readable output");
  po::positional_options_description pos;
  pos.add("trace", 1);
  po::variables_map vm;
  if (!parse("trace info", "FILE [--json]", args, options, pos, vm)) return kExitOk;
  const fs::path path = vm["trace"].as<std::string>();
  bool mht = false;
  const auto kernels = summarize(path, param_overrides(vm), mht);
  if (vm.count("json") != 0U) {
    nlohmann::json j = {{"file", path.string()}, {"kernels", nlohmann::json::array()}};
    for (const auto& k : kernels) {
      nlohmann::json e = {{"launch", launch_to_json(k.launch)}, {"counts", counts_to_json(k.counts)}};
      if (mht) {
        e["raw_bytes"] = k.raw_bytes;
        e["stored_bytes"] = k.stored_bytes;
      }
      j["kernels"].push_back(e);
    }
    std::cout << json_text(j, 2) << "\n";
    return kExitOk;
  }
  std::vector<std::string> header{"#",     "kernel",         "grid",     "block",        "blocks",
                                  "warps", "warp mem instr", "barriers", "lane accesses"};
  if (mht) header.insert(header.end(), {"raw", "stored", "ratio", "B/instr"});
  Table t(header);
  TraceCounts total;
  std::uint64_t raw = 0, stored = 0;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const auto& k = kernels[i];
    total += k.counts;
    raw += k.raw_bytes;
    stored += k.stored_bytes;
    std::vector<std::string> row{std::to_string(i),
                                 k.launch.name,
                                 dim(k.launch.grid),
                                 dim(k.launch.block),
                                 std::to_string(k.counts.blocks),
                                 std::to_string(k.counts.warps),
                                 std::to_string(k.counts.memory_instructions),
                                 std::to_string(k.counts.barriers),
                                 std::to_string(k.counts.lane_accesses)};
    if (mht) {
      row.push_back(units::format_bytes(k.raw_bytes));
      row.push_back(units::format_bytes(k.stored_bytes));
      row.push_back(k.stored_bytes == 0 ? "-" : fmt::format("{:.1f}x", ratio(k.raw_bytes, k.stored_bytes)));
      row.push_back(k.counts.memory_instructions == 0
                        ? "-"
                        : fmt::format("{:.2f}", ratio(k.stored_bytes, k.counts.memory_instructions)));
    }
    t.add(row);
  }
  std::cout << fmt::format("{}: {} kernel launch(es), {} warp memory instructions, {} lane accesses\n", path.string(),
                           kernels.size(), total.memory_instructions, total.lane_accesses);
  std::string spaces;
  for (int s = 0; s < kAddressSpaceCount; ++s)
    if (total.by_space.at(static_cast<std::size_t>(s)) != 0)
      spaces += fmt::format(" {} {}", to_string(static_cast<AddressSpace>(s)),
                            total.by_space.at(static_cast<std::size_t>(s)));
  std::string kinds;
  for (int k = 0; k < kAccessKindCount; ++k)
    if (total.by_kind.at(static_cast<std::size_t>(k)) != 0)
      kinds +=
          fmt::format(" {} {}", to_string(static_cast<AccessKind>(k)), total.by_kind.at(static_cast<std::size_t>(k)));
  std::cout << fmt::format("by space:{}\nby kind:{}\n", spaces.empty() ? " -" : spaces, kinds.empty() ? " -" : kinds);
  if (mht) {
    std::cout << fmt::format("records {} raw, {} stored ({:.1f}x), {:.2f} bytes per warp memory instruction\n",
                             units::format_bytes(raw), units::format_bytes(stored), ratio(raw, stored),
                             ratio(stored, total.memory_instructions));
  }
  std::cout << "\n";
  t.print(std::cout);
  // The L2 residency control each launch asks for (the model grants and checks it against an arch: `simulate`), runs
  // of launches that ask the same on one line.
  auto residency = [](const KernelLaunch& l) {
    std::vector<std::string> parts;
    if (l.persisting_set_aside_bytes != 0)
      parts.push_back(fmt::format("set-aside {}", units::format_size_exact(l.persisting_set_aside_bytes)));
    for (const AccessPolicyWindow& w : l.windows) parts.push_back(window_text(w));
    if (l.reset_persisting) parts.emplace_back("persisting lines reset before it");
    return fmt::format("{}", fmt::join(parts, "; "));
  };
  std::vector<std::string> asked;
  asked.reserve(kernels.size());
  for (const auto& k : kernels) asked.push_back(residency(k.launch));
  for (std::size_t i = 0; i < asked.size();) {
    std::size_t j = i + 1;
    while (j < asked.size() && asked[j] == asked[i]) ++j;
    if (!asked[i].empty())
      std::cout << (j - i == 1 ? fmt::format("launch {}", i) : fmt::format("launches {}-{}", i, j - 1))
                << ": L2 residency: " << asked[i] << "\n";
    i = j;
  }
  return kExitOk;
}

std::string describe_addresses(std::span<const std::uint64_t> a) {
  if (a.empty()) return "predicated off, no lane";
  if (a.size() == 1) return fmt::format("0x{:x}", a[0]);
  const auto stride = static_cast<std::int64_t>(a[1] - a[0]);
  bool regular = true;
  for (std::size_t i = 1; i < a.size(); ++i) regular = regular && static_cast<std::int64_t>(a[i] - a[i - 1]) == stride;
  if (regular) return fmt::format("0x{:x} + {}*k (k < {})", a[0], stride, a.size());
  std::string s;
  for (std::uint64_t x : a) s += fmt::format("{}0x{:x}", s.empty() ? "" : " ", x);
  return s;
}

int run_dump(const std::vector<std::string>& args) {
  po::options_description options("options");
  options.add_options()                                                                                       //
      ("trace", po::value<std::string>()->required(), "trace: .mht, kernel .yaml, Accel-Sim")                 //
      ("kernel", po::value<std::int64_t>(), "only this kernel launch (0-based, as trace info numbers them)")  //
      ("limit", po::value<std::int64_t>()->default_value(100), "stop after this many records (0: all)")       //
      ("set", po::value<std::vector<std::string>>(), "override a description parameter");
  po::positional_options_description pos;
  pos.add("trace", 1);
  po::variables_map vm;
  if (!parse("trace dump", "FILE [--kernel K] [--limit N]", args, options, pos, vm)) return kExitOk;
  const fs::path path = vm["trace"].as<std::string>();
  auto source = open_trace(path, param_overrides(vm));
  // Read as signed: Boost reads "-1" as an unsigned 2^64 - 1.
  const std::int64_t limit_flag = vm["limit"].as<std::int64_t>();
  if (limit_flag < 0)
    throw UsageError(fmt::format("memhier trace dump: --limit {}: expected 0 (all) or more", limit_flag));
  const auto limit = static_cast<std::uint64_t>(limit_flag);
  const bool one = vm.count("kernel") != 0U;
  if (one && vm["kernel"].as<std::int64_t>() < 0)
    throw UsageError(fmt::format("memhier trace dump: --kernel {}: expected a launch number, 0 or more",
                                 vm["kernel"].as<std::int64_t>()));
  const auto want = one ? static_cast<std::size_t>(vm["kernel"].as<std::int64_t>()) : std::size_t{0};
  if (auto* mht = dynamic_cast<MhtReader*>(source.get()); mht != nullptr && one) mht->seek_kernel(want);
  KernelLaunch k;
  BlockTrace b;
  std::uint64_t printed = 0;
  std::size_t index = one && dynamic_cast<MhtReader*>(source.get()) != nullptr ? want : 0;
  bool found = !one;
  for (; source->next_kernel(k); ++index) {
    if (one && index != want) continue;
    found = true;
    std::cout << fmt::format("kernel {} '{}' grid {} block {} regs {} shared {}+{} B{}\n", index, k.name, dim(k.grid),
                             dim(k.block), k.registers_per_thread, k.static_shared_bytes, k.dynamic_shared_bytes,
                             k.windows.empty() ? "" : fmt::format(", {} L2 window(s)", k.windows.size()));
    while (source->next_block(b)) {
      std::cout << fmt::format("  block ({},{},{})\n", b.index.x, b.index.y, b.index.z);
      for (std::size_t w = 0; w < b.warp_count(); ++w) {
        for (const WarpRecord& r : b.warp(w)) {
          if (limit != 0 && printed == limit) {
            std::cout << fmt::format("... stopped after {} records (--limit 0 prints all)\n", limit);
            return kExitOk;
          }
          ++printed;
          const std::string work = r.work != 0 ? fmt::format(" work {}", r.work) : "";
          if (!r.is_memory()) {
            std::cout << fmt::format("    warp {:2} pc 0x{:04x} barrier mask {:08x}{}\n", w, r.pc, r.active_mask, work);
            continue;
          }
          std::cout << fmt::format("    warp {:2} pc 0x{:04x} {} {} {}B{} mask {:08x}{}{}: {}\n", w, r.pc,
                                   to_string(r.kind), to_string(r.space), r.size,
                                   r.hint == CacheHint::none ? std::string() : fmt::format(" {}", to_string(r.hint)),
                                   r.active_mask, work,
                                   r.bulk_bytes != 0 ? fmt::format(" bulk {} B", r.bulk_bytes) : "",
                                   describe_addresses(b.lane_addresses(r)));
        }
      }
    }
    if (one) break;
  }
  if (!found) throw InputError({path.string()}, "kernel", fmt::format("no kernel {} in the trace", want));
  return kExitOk;
}

int run_convert(const std::vector<std::string>& args) {
  po::options_description options("options");
  options.add_options()                                                                          //
      ("input", po::value<std::string>()->required(), "trace: .mht, kernel .yaml, Accel-Sim")    //
      ("output", po::value<std::string>()->required(), "OUT.mht, or a directory for Accel-Sim")  //
      ("set", po::value<std::vector<std::string>>(), "override a description parameter")         //
      ("force", "replace the output if it exists");
  po::positional_options_description pos;
  pos.add("input", 1).add("output", 1);
  po::variables_map vm;
  if (!parse("trace convert", "IN OUT   (OUT.mht, or a directory: Accel-Sim kernelslist.g + .traceg)", args, options,
             pos, vm))
    return kExitOk;
  const fs::path in = vm["input"].as<std::string>();
  const fs::path out = vm["output"].as<std::string>();
  auto source = open_trace(in, param_overrides(vm));
  std::size_t n = 0;
  if (is_accelsim_output(out)) {
    const fs::path list = out / "kernelslist.g";
    check_output(list, vm.count("force") != 0U);
    n = write_accelsim(*source, out);
    std::cout << fmt::format("{}: {} kernel(s) in Accel-Sim format\n", list.string(), n);
  } else {
    check_output(out, vm.count("force") != 0U);
    n = write_mht(*source, out);
    std::cout << fmt::format("{}: {} kernel(s)\n", out.string(), n);
  }
  return kExitOk;
}

}  // namespace

int run_trace(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: memhier trace <gen|info|dump|convert|capture> ...\n\n"
      "  gen KERNEL.yaml -o OUT.mht [--set N=4096]   generate a trace from a kernel description\n"
      "  info FILE                                   kernels, launches, warp instructions, bytes, compression\n"
      "  dump FILE [--kernel K] [--limit N]          print records\n"
      "  convert IN OUT                              between .yaml, .mht and Accel-Sim (OUT a directory)\n"
      "  capture -o OUT.mht [--kernel RE] -- PROG... record a CUDA program's accesses (GPU machine)\n";
  if (args.empty()) throw UsageError(usage);
  if (args[0] == "--help" || args[0] == "-h") {
    std::cout << usage;
    return kExitOk;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "gen") return run_gen(rest);
  if (args[0] == "info") return run_info(rest);
  if (args[0] == "dump") return run_dump(rest);
  if (args[0] == "convert") return run_convert(rest);
  if (args[0] == "capture") return run_capture(rest);
  throw UsageError(fmt::format("memhier trace: unknown subcommand '{}'\n{}", args[0], usage));
}

}  // namespace memhier::cli
