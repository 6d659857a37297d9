#pragma once
// What `simulate` and `predict` share about a run: which of a trace's launches they simulate (--kernel, --launch) and
// a progress line on stderr while they do (--progress, --no-progress).
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "cli_common.h"
#include "memhier/kernel_desc.h"
#include "memhier/sim.h"
#include "memhier/trace.h"

namespace memhier::cli {

// --kernel RE (searched for in each launch's kernel name, ECMAScript syntax) and --launch LIST (0-based launch
// numbers as `trace info` prints them: "3", "0,2,5", "4-9" or a mix): a launch is simulated if it passes each that is
// given.
// --kernel and --launch. Names are matched as UTF-8: the pattern and each name with what is not UTF-8 replaced by
// U+FFFD (utf8_text()), as a .mht stores a Latin-1 name, so a pattern in the original bytes matches it there as it does
// in the description or Accel-Sim trace it came from.
struct LaunchFilter {
  std::optional<std::regex> name;
  std::string name_text;
  std::vector<std::pair<std::size_t, std::size_t>> numbers;  // inclusive ranges
  std::string numbers_text;

  [[nodiscard]] bool any() const { return name.has_value() || !numbers.empty(); }
  [[nodiscard]] bool takes(std::size_t number, const std::string& kernel) const;
};
void add_launch_options(po::options_description& options);
// UsageError for a pattern that is no regular expression or a list that is no list of numbers.
LaunchFilter launch_filter(const std::string& command, const po::variables_map& vm);

// The launches of `source` that `filter` takes, in order; numbers() says where each stood in the source. Reading past
// the last launch with none taken throws InputError naming the trace and the launches it holds, where `required`
// (one trace); else the source just ends (predict's several traces: one of them may hold none).
class FilteredSource final : public TraceSource {
 public:
  FilteredSource(TraceSource& source, LaunchFilter filter, std::string trace, bool required = true);
  bool next_kernel(KernelLaunch& launch) override;
  bool next_block(BlockTrace& block) override { return m_source.next_block(block); }
  std::size_t next_blocks(std::span<BlockTrace> out, int threads) override {
    return m_source.next_blocks(out, threads);
  }
  [[nodiscard]] const std::vector<std::size_t>& numbers() const { return m_numbers; }

 private:
  TraceSource& m_source;
  LaunchFilter m_filter;
  std::string m_trace;
  bool m_required;
  std::size_t m_next = 0;              // the source's next launch number
  std::vector<std::size_t> m_numbers;  // of the launches taken
  std::vector<std::string> m_passed;   // kernel names of the launches left out, for the message
};

// The launches of several sources, one source's after another's, as one source (predict --keep-cache of several
// traces: a trace's first launch finds the caches the previous trace's last launch left). sources()[i] gave launch i.
class ChainSource final : public TraceSource {
 public:
  void add(TraceSource& source) { m_sources.push_back(&source); }
  bool next_kernel(KernelLaunch& launch) override;
  bool next_block(BlockTrace& block) override { return m_at < m_sources.size() && m_sources[m_at]->next_block(block); }
  std::size_t next_blocks(std::span<BlockTrace> out, int threads) override {
    return m_at < m_sources.size() ? m_sources[m_at]->next_blocks(out, threads) : 0;
  }
  [[nodiscard]] const std::vector<std::size_t>& sources() const { return m_taken; }

 private:
  std::vector<TraceSource*> m_sources;
  std::size_t m_at = 0;
  std::vector<std::size_t> m_taken;  // the source of each launch given
};

// The --set flags of a command (NAME=EXPR each), in order.
std::vector<ParamOverride> param_overrides(const po::variables_map& vm);
// --threads and --keep-cache of `command` (simulate, predict, validate --ncu) as simulation options.
SimOptions sim_options(const std::string& command, const po::variables_map& vm);

// Each trace's share of --set (predict, validate --ncu). One trace takes them all (an error for a parameter it lacks,
// as `simulate` gives); of several, each description takes those it declares and the others none, so one run can
// compare kernels whose parameters differ. A --set that no trace declares is an error (a misspelt name).
std::vector<std::vector<ParamOverride>> sets_by_trace(const std::vector<std::string>& traces,
                                                      const std::vector<ParamOverride>& sets);

// A line on stderr saying how far a simulation has come (SimOptions::progress), redrawn in place on a terminal:
//   memhier: big.mht: launch 3/12 gemm: 8448/32768 blocks, 12.3 M warp instructions (5.10 M/s), 41%, 0:04, ~0:06 left
// --progress shows it from the start whatever stderr is (where that is no terminal, as lines: at most four a second,
// and the last state at the end); --no-progress never; by default it shows on a terminal once a run has taken a
// second. The totals, where the trace knows them (a .mht index), give the share done and the time left.
void add_progress_options(po::options_description& options);

// --window base,bytes,hit_ratio[,hit_prop[,miss_prop]] and --set-aside BYTES (simulate, predict, sweep): the L2
// residency control that replaces the trace's.
void add_residency_options(po::options_description& options);
// "base,bytes,hit_ratio[,hit_prop[,miss_prop]]": base in hex (0x...) or decimal, bytes with or without a unit;
// InputError naming --window.
AccessPolicyWindow parse_window(const std::string& text);
// A hit ratio: a number in [0, 1] and nothing after it (--window's, sweep's --vary hit_ratio=...), else nullopt.
std::optional<double> parse_hit_ratio(const std::string& text);
// Reads them into opt.window and opt.persisting_set_aside.
void read_residency_options(const po::variables_map& vm, SimOptions& opt);
// What the CUDA runtime refuses on `arch` (set_aside_problem, window_problem): an InputError naming the flag.
void check_residency_options(const po::variables_map& vm, const Arch& arch, const SimOptions& opt);
// The residency control a launch ran with, for a report's heading ("set-aside 16MiB asked, 18.75MiB granted (6 of 16
// ways); window ..."), with what was left out; empty for a launch without any.
std::string residency_line(const Arch& arch, const L2Residency& r);
// "window 0x7f0000200000+64KiB, hit ratio 1.00, hits persisting, misses streaming".
std::string window_text(const AccessPolicyWindow& w);
// A caveat for a predicted time, or empty: a launch that writes with 9 or fewer of the L2's ways left outside the
// set-aside, whose cost the timing model does not include (the H100 measured streams that write slowing from 7 of 16
// ways set aside: validate/results/h100-2026-11-27).
std::string residency_caveat(const Arch& arch, const KernelSim& k);
// A note for stderr, or empty: the caches' state on the host (cache_host_state()) past kLargeHostState, which takes
// long to build and to simulate through (132 constant caches of 1 GiB, 16.5 GiB: 24 s of building on this project's
// VM before a simulation of 1024 threads, without a word; "note: what-if's caches take about 16.5GiB of host memory to
// simulate (132 constant caches of 1GiB take 16.5GiB); building and simulating them is slow"). simulate() refuses
// what the host cannot hold (no note then); below that, a what-if of 1 GiB L1s is the user's to ask for, but it should
// not look hung.
inline constexpr double kLargeHostState = 2.0 * (1ULL << 30U);
std::string host_state_note(const Arch& arch);
// UsageError for --progress with --no-progress.
void check_progress_options(const std::string& command, const po::variables_map& vm);
class ProgressLine {
 public:
  ProgressLine(const po::variables_map& vm, std::string label, std::optional<std::size_t> launches,
               std::optional<std::uint64_t> instructions);
  ~ProgressLine();  // clears a terminal's line; prints the last state where --progress asked and it is not shown yet
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  [[nodiscard]] std::function<void(const SimProgress&)> callback() {
    return [this](const SimProgress& p) { update(p); };
  }
  void update(const SimProgress& p);

 private:
  using Clock = std::chrono::steady_clock;
  [[nodiscard]] std::string text(const SimProgress& p, double elapsed) const;
  void show(const std::string& line);

  bool m_enabled = false, m_forced = false, m_terminal = false;
  std::string m_label;
  std::optional<std::size_t> m_launches;
  std::optional<std::uint64_t> m_instructions;
  Clock::time_point m_start = Clock::now(), m_last{};
  bool m_shown = false;   // a line is on the terminal now
  std::string m_pending;  // the latest state, if not printed
};

// The launch count and warp instructions (memory instructions and barriers) of the launches `filter` takes from
// `source`, where its index has them (a .mht file); none otherwise.
std::pair<std::optional<std::size_t>, std::optional<std::uint64_t>> trace_totals(TraceSource& source,
                                                                                 const LaunchFilter& filter);

}  // namespace memhier::cli
