#include "cli_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>

#include "memhier/accelsim.h"
#include "memhier/error.h"
#include "memhier/kernel_desc.h"
#include "memhier/mht.h"
#include "memhier/suggest.h"
#include "memhier/timing.h"
#include "memhier/trace_io.h"
#include "memhier/trace_json.h"
#include "memhier/units.h"
#include "name_regex.h"

namespace memhier::cli {
namespace {

// "3", "0,2,5", "4-9": inclusive ranges; nullopt where the text is not such a list.
std::optional<std::vector<std::pair<std::size_t, std::size_t>>> parse_numbers(const std::string& text) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t start = 0;
  auto number = [](std::string_view s, std::size_t& v) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size();
  };
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') continue;
    const std::string_view item(text.data() + start, i - start);
    start = i + 1;
    const std::size_t dash = item.find('-');
    std::size_t lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!number(item, lo)) return std::nullopt;
      hi = lo;
    } else if (!number(item.substr(0, dash), lo) || !number(item.substr(dash + 1), hi) || hi < lo) {
      return std::nullopt;
    }
    out.emplace_back(lo, hi);
  }
  return out;
}

// 12345678 -> "12.3 M"
std::string count(double v) {
  if (v >= 1e9) return fmt::format("{:.2f} G", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.1f} M", v / 1e6);
  if (v >= 1e4) return fmt::format("{:.0f} k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

// 75 -> "1:15", 3725 -> "1:02:05"
std::string clock_time(double seconds) {
  const auto s = static_cast<std::uint64_t>(std::max(0.0, std::round(seconds)));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

bool LaunchFilter::takes(std::size_t number, const std::string& kernel) const {
  if (name && !std::regex_search(utf8_text(kernel), *name)) return false;
  if (numbers.empty()) return true;
  for (const auto& [lo, hi] : numbers)
    if (number >= lo && number <= hi) return true;
  return false;
}

void add_launch_options(po::options_description& options) {
  options.add_options()                                                                                        //
      ("kernel", po::value<std::string>(), "only launches whose kernel name matches this regular expression")  //
      ("launch", po::value<std::string>(), "only these launches, 0-based as trace info numbers them: 3 or 0,2 or 4-9");
}

LaunchFilter launch_filter(const std::string& command, const po::variables_map& vm) {
  LaunchFilter f;
  if (vm.count("kernel") != 0U) {
    f.name_text = vm["kernel"].as<std::string>();
    try {
      f.name = name_regex(utf8_text(f.name_text));
    } catch (const std::invalid_argument& e) {
      throw UsageError(
          fmt::format("memhier {}: --kernel '{}' is not a regular expression: {}", command, f.name_text, e.what()));
    }
  }
  if (vm.count("launch") != 0U) {
    f.numbers_text = vm["launch"].as<std::string>();
    auto numbers = parse_numbers(f.numbers_text);
    if (!numbers)
      throw UsageError(fmt::format("memhier {}: --launch '{}': expected launch numbers such as 3, 0,2 or 4-9", command,
                                   f.numbers_text));
    f.numbers = std::move(*numbers);
  }
  return f;
}

FilteredSource::FilteredSource(TraceSource& source, LaunchFilter filter, std::string trace, bool required)
    : m_source(source), m_filter(std::move(filter)), m_trace(std::move(trace)), m_required(required) {}

bool ChainSource::next_kernel(KernelLaunch& launch) {
  for (; m_at < m_sources.size(); ++m_at) {
    if (m_sources[m_at]->next_kernel(launch)) {
      m_taken.push_back(m_at);
      return true;
    }
  }
  return false;
}

bool FilteredSource::next_kernel(KernelLaunch& launch) {
  while (m_source.next_kernel(launch)) {
    const std::size_t number = m_next++;
    if (m_filter.takes(number, launch.name)) {
      m_numbers.push_back(number);
      return true;
    }
    m_passed.push_back(launch.name);
  }
  if (m_numbers.empty() && m_filter.any() && m_required) {
    std::string held;
    for (std::size_t i = 0; i < m_passed.size() && i < 8; ++i)
      held += fmt::format("{}{} {}", i != 0 ? ", " : "", i,
                          m_passed[i].size() <= 100 ? m_passed[i] : m_passed[i].substr(0, 97) + "...");  // templates
    if (m_passed.size() > 8) held += fmt::format(", ... ({} in all)", m_passed.size());
    std::string flags, asked;
    if (m_filter.name) {
      flags = "--kernel";
      asked = fmt::format("'{}'", m_filter.name_text);
    }
    if (!m_filter.numbers.empty()) {
      flags += flags.empty() ? "--launch" : " and --launch";
      asked += fmt::format("{}{}", asked.empty() ? "" : " with ", m_filter.numbers_text);
    }
    throw InputError({m_trace}, flags,
                     m_passed.empty() ? std::string("the trace holds no launch")
                                      : fmt::format("{} takes no launch; the trace's launches: {}", asked, held));
  }
  return false;
}

void add_progress_options(po::options_description& options) {
  options.add_options()                                                                                //
      ("progress", "show how far the simulation has come on stderr, whether or not it is a terminal")  //
      ("no-progress", "never show it (by default it shows on a terminal once a run takes a second)");
}

std::string window_text(const AccessPolicyWindow& w) {
  return fmt::format("window {:#x}+{}, hit ratio {:.2f}, hits {}, misses {}", w.base, units::format_size_exact(w.bytes),
                     w.hit_ratio, to_string(w.hit_prop), to_string(w.miss_prop));
}

std::string residency_line(const Arch& arch, const L2Residency& r) {
  std::vector<std::string> parts;
  if (r.set_aside_granted != 0) {  // else none was asked, or it was refused (left_out says so)
    parts.push_back(
        fmt::format("set-aside {} asked, {} granted ({} of {} ways)", units::format_size_exact(r.set_aside_requested),
                    units::format_size_exact(r.set_aside_granted), r.persisting_ways, arch.l2.associativity));
    if (r.dirty_ways != 0) parts.back() += fmt::format(", dirty lines at most {} ways a set", r.dirty_ways);
  }
  for (const AccessPolicyWindow& w : r.windows) parts.push_back(window_text(w));
  if (!r.left_out.empty()) parts.push_back(r.left_out);
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string residency_caveat(const Arch& arch, const KernelSim& k) {
  const auto ways = static_cast<std::uint32_t>(std::max(arch.l2.associativity, 0));
  const SimCounters& c = k.counters;
  const bool writes = c.l2_write_sectors + c.l2_atom_sectors + c.l2_red_sectors != 0;
  // From the H100's first slow set-aside on (5 of 16 ways), as a share of the ways, where the arch's
  // l2.setaside_write_cost gives nothing to time it with (the H100's own list: 0 up to 8 ways).
  constexpr std::uint32_t kSlowFrom = 5, kOf = 16;
  const std::uint32_t set_aside = k.residency.persisting_ways;
  if (!writes || set_aside == 0 || setaside_write_cost(arch, set_aside) > 0 || set_aside * kOf < kSlowFrom * ways)
    return {};
  return fmt::format(
      "{} on {}: {} of {} L2 ways set aside while it writes; on the H100 streams that write took 1.00-1.41x the time "
      "with 5 to 8 of 16 ways set aside (grid-stride streams the most, kernels of one thread an element the least) and "
      "1.34-2.26x with 9 and 10, the DRAM bytes the same (validate/results/h100-2026-11-27c); {}'s "
      "l2.setaside_write_cost has no cost for {} ways, so this prediction leaves it out",
      k.launch.name, arch.name, set_aside, ways, arch.name, set_aside);
}

void add_residency_options(po::options_description& options) {
  options.add_options()  //
      ("window", po::value<std::string>(),
       "L2 access-policy window base,bytes,hit_ratio[,hit_prop[,miss_prop]], at most the arch's l2.max_window_size; "
       "replaces the trace's")  //
      ("set-aside", po::value<std::string>(),
       "persisting L2 set-aside (bytes or 16MiB), at most the arch's l2.persisting_max, granted in whole ways; "
       "replaces the trace's");
}

std::optional<double> parse_hit_ratio(const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v >= 0 && v <= 1) return v;
  } catch (const std::exception&) {  // not a number, or out of double's range
  }
  return std::nullopt;
}

AccessPolicyWindow parse_window(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == ',') {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  if (parts.size() < 3 || parts.size() > 5)
    throw InputError({"--window"}, text,
                     "expected base,bytes,hit_ratio[,hit_prop[,miss_prop]], e.g. 0x7f0000000000,16MiB,1.0");
  AccessPolicyWindow w;
  const std::string& b = parts[0];
  const bool hex = b.starts_with("0x") || b.starts_with("0X");
  auto [end, ec] = std::from_chars(b.data() + (hex ? 2 : 0), b.data() + b.size(), w.base, hex ? 16 : 10);
  if (ec != std::errc() || end != b.data() + b.size())
    throw InputError({"--window"}, b, "base address expected (decimal or 0x hex)");
  w.bytes = parse_bytes_flag("window", parts[1]);
  const std::optional<double> ratio = parse_hit_ratio(parts[2]);
  if (!ratio) throw InputError({"--window"}, parts[2], "hit_ratio must be a number in [0, 1]");
  w.hit_ratio = *ratio;
  if (parts.size() > 3 && !parse_l2_property(parts[3], w.hit_prop))
    throw InputError({"--window"}, parts[3], "expected normal, streaming or persisting");
  if (parts.size() > 4 && (!parse_l2_property(parts[4], w.miss_prop) || w.miss_prop == L2Property::persisting))
    throw InputError({"--window"}, parts[4],
                     "expected normal or streaming (the CUDA runtime refuses persisting for misses)");
  return w;
}

void read_residency_options(const po::variables_map& vm, SimOptions& opt) {
  if (vm.count("window") != 0U) opt.window = parse_window(vm["window"].as<std::string>());
  if (vm.count("set-aside") != 0U)
    opt.persisting_set_aside = parse_bytes_flag("set-aside", vm["set-aside"].as<std::string>());
}

void check_residency_options(const po::variables_map& vm, const Arch& arch, const SimOptions& opt) {
  if (opt.window)
    if (auto problem = window_problem(arch, *opt.window))
      throw InputError({"--window"}, vm["window"].as<std::string>(), *problem);
  if (opt.persisting_set_aside)
    if (auto problem = set_aside_problem(arch, *opt.persisting_set_aside))
      throw InputError({"--set-aside"}, vm["set-aside"].as<std::string>(), *problem);
}

void check_progress_options(const std::string& command, const po::variables_map& vm) {
  if (vm.count("progress") != 0U && vm.count("no-progress") != 0U)
    throw UsageError(fmt::format("memhier {}: --progress and --no-progress contradict each other", command));
}

ProgressLine::ProgressLine(const po::variables_map& vm, std::string label, std::optional<std::size_t> launches,
                           std::optional<std::uint64_t> instructions)
    : m_label(std::move(label)), m_launches(launches), m_instructions(instructions) {
  m_terminal = isatty(STDERR_FILENO) == 1;
  m_forced = vm.count("progress") != 0U;
  m_enabled = m_forced || (m_terminal && vm.count("no-progress") == 0U);
}

ProgressLine::~ProgressLine() {
  if (m_shown && m_terminal) std::cerr << "\r\x1b[K" << std::flush;
  if (m_forced && !m_terminal && !m_pending.empty()) std::cerr << m_pending << "\n" << std::flush;
}

std::string ProgressLine::text(const SimProgress& p, double elapsed) const {
  std::string s = fmt::format("memhier: {}: launch {}", m_label, p.launch + 1);
  if (m_launches) s += fmt::format("/{}", *m_launches);
  s += fmt::format(" {}: {}/{} blocks, {} warp instructions", p.kernel, p.blocks, p.grid_blocks,
                   count(static_cast<double>(p.warp_instructions)));
  if (elapsed > 0) s += fmt::format(" ({}/s)", count(static_cast<double>(p.warp_instructions) / elapsed));
  // The share done: of the instructions where the trace counts them, else of the launches and this one's blocks.
  double done = -1;
  if (m_instructions && *m_instructions > 0) {
    done = static_cast<double>(p.warp_instructions) / static_cast<double>(*m_instructions);
  } else if (m_launches && *m_launches > 0 && p.grid_blocks > 0) {
    done = (static_cast<double>(p.launch) + static_cast<double>(p.blocks) / static_cast<double>(p.grid_blocks)) /
           static_cast<double>(*m_launches);
  }
  done = std::min(done, 1.0);
  if (done >= 0) s += fmt::format(", {:.0f}%", 100 * done);
  s += fmt::format(", {}", clock_time(elapsed));
  if (done > 0.01 && done < 1) s += fmt::format(", ~{} left", clock_time(elapsed * (1 - done) / done));
  return s;
}

void ProgressLine::show(const std::string& line) {
  if (m_terminal) {
    std::cerr << "\r" << line << "\x1b[K" << std::flush;
    m_shown = true;
  } else {
    std::cerr << line << "\n" << std::flush;
  }
  m_pending.clear();
}

void ProgressLine::update(const SimProgress& p) {
  if (!m_enabled) return;
  const Clock::time_point now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - m_start).count();
  m_pending = text(p, elapsed);
  if (!m_forced && elapsed < 1.0) return;  // a short run stays quiet
  if (m_last != Clock::time_point{} && now - m_last < std::chrono::milliseconds(250)) return;
  m_last = now;
  show(m_pending);
}

std::pair<std::optional<std::size_t>, std::optional<std::uint64_t>> trace_totals(TraceSource& source,
                                                                                 const LaunchFilter& filter) {
  if (const auto* d = dynamic_cast<const DescriptionSource*>(&source)) {
    std::size_t launches = 0;
    for (std::size_t i = 0; i < d->info().launches; ++i) launches += filter.takes(i, d->launch().name) ? 1 : 0;
    return {launches, std::nullopt};
  }
  if (const auto* a = dynamic_cast<const AccelSimReader*>(&source); a != nullptr && !filter.name) {
    std::size_t launches = 0;
    for (std::size_t i = 0; i < a->kernel_files().size(); ++i) launches += filter.takes(i, {}) ? 1 : 0;
    return {launches, std::nullopt};
  }
  const auto* mht = dynamic_cast<const MhtReader*>(&source);
  if (mht == nullptr) return {};
  std::size_t launches = 0;
  std::uint64_t instructions = 0;
  for (std::size_t i = 0; i < mht->kernels().size(); ++i) {
    const MhtKernelInfo& k = mht->kernels()[i];
    if (!filter.takes(i, k.launch.name)) continue;
    ++launches;
    instructions += k.counts.memory_instructions + k.counts.barriers;
  }
  return {launches, instructions};
}

std::string host_state_note(const Arch& arch) {
  const std::vector<CacheHostState> state = cache_host_state(arch);
  double total = 0;
  std::string parts;
  for (const CacheHostState& c : state) {
    total += c.bytes;
    if (c.bytes >= kLargeHostState / 4)
      parts += fmt::format("{}{} {}", parts.empty() ? "" : "; ", c.what,
                           units::format_size(static_cast<std::uint64_t>(std::min(c.bytes, 1.8e19))));
  }
  // Past the host's memory simulate() refuses the arch, with its own message (its rule: a cache past
  // host_memory_bytes()).
  const auto host = static_cast<double>(host_memory_bytes());
  const bool refused =
      host > 0 && std::any_of(state.begin(), state.end(), [&](const CacheHostState& c) { return c.bytes > host; });
  if (total < kLargeHostState || refused) return {};
  return fmt::format("{}'s caches take about {} of host memory to simulate ({}); building and simulating them is slow",
                     arch.name, units::format_size(static_cast<std::uint64_t>(std::min(total, 1.8e19))), parts);
}

std::vector<ParamOverride> param_overrides(const po::variables_map& vm) {
  std::vector<ParamOverride> out;
  if (vm.count("set") != 0U)
    for (const auto& s : vm["set"].as<std::vector<std::string>>()) out.push_back(parse_param_override(s));
  return out;
}

SimOptions sim_options(const std::string& command, const po::variables_map& vm) {
  SimOptions opt;
  opt.threads = threads_flag(command, vm["threads"].as<int>());
  opt.flush_between_launches = vm.count("keep-cache") == 0U;
  return opt;
}

std::vector<std::vector<ParamOverride>> sets_by_trace(const std::vector<std::string>& traces,
                                                      const std::vector<ParamOverride>& sets) {
  std::vector<std::vector<ParamOverride>> out(traces.size());
  if (traces.size() <= 1 || sets.empty()) {
    std::fill(out.begin(), out.end(), sets);
    return out;
  }
  std::vector<bool> taken(sets.size(), false);
  std::vector<std::string> all;  // every parameter declared, for the suggestion
  for (std::size_t t = 0; t < traces.size(); ++t) {
    if (detect_trace_format(traces[t]) != TraceFormat::description) continue;
    const std::vector<std::string> names = description_param_names(traces[t]);
    all.insert(all.end(), names.begin(), names.end());
    for (std::size_t i = 0; i < sets.size(); ++i)
      if (std::find(names.begin(), names.end(), sets[i].name) != names.end()) {
        out[t].push_back(sets[i]);
        taken[i] = true;
      }
  }
  for (std::size_t i = 0; i < sets.size(); ++i)
    if (!taken[i]) {
      const std::vector<std::string_view> candidates(all.begin(), all.end());
      throw InputError({"--set " + sets[i].name}, sets[i].name,
                       fmt::format("none of the {} traces is a kernel description with a parameter '{}'{}",
                                   traces.size(), sets[i].name, did_you_mean(sets[i].name, candidates)));
    }
  return out;
}

}  // namespace memhier::cli
