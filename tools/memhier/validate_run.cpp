// Predictions and error statistics for `memhier validate`.
#include "validate_run.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <regex>
#include <string_view>

#include "cli_common.h"
#include "memhier/error.h"
#include "memhier/kernel_desc.h"
#include "memhier/timing.h"
#include "memhier/trace_io.h"
#include "name_regex.h"
#include "validate_cache.h"

namespace memhier::cli {
namespace fs = std::filesystem;
namespace {

// The same source opened `times` times back to back: a warm case's warm-up run, then the run that counts.
class RepeatSource : public TraceSource {
 public:
  RepeatSource(std::function<std::unique_ptr<TraceSource>()> open, int times)
      : m_open(std::move(open)), m_left(times) {}
  bool next_kernel(KernelLaunch& launch) override {
    while (true) {
      if (m_current && m_current->next_kernel(launch)) return true;
      if (m_left == 0) return false;
      m_current = m_open();
      --m_left;
    }
  }
  bool next_block(BlockTrace& block) override { return m_current && m_current->next_block(block); }

 private:
  std::function<std::unique_ptr<TraceSource>()> m_open;
  std::unique_ptr<TraceSource> m_current;
  int m_left;
};

CasePrediction predict_run(const Arch& arch, TraceSource& source, bool warm, int counted, int threads) {
  SimOptions opt;
  opt.threads = threads;
  opt.flush_between_launches = !warm;
  const std::vector<KernelSim> sims = simulate(arch, source, opt);
  if (static_cast<int>(sims.size()) < counted)
    throw std::runtime_error(fmt::format("{} launch(es) simulated, the run has {}", sims.size(), counted));
  CasePrediction p;
  for (auto it = sims.end() - counted; it != sims.end(); ++it) {
    // The runner times a warm case's runs back to back after a synchronize, so its first launch finds the GPU idle;
    // a cold case's launches queue behind the L2 flush.
    PredictOptions timing;
    timing.idle_gpu = warm && it == sims.end() - counted;
    const Prediction t = predict(arch, *it, timing);
    p.seconds += t.seconds;
    p.bound = t.bound;
    p.bound_seconds += t.seconds - t.launch_seconds;
    p.launch_seconds += t.launch_seconds;
    for (const TimeTerm& term : t.terms) p.terms[term.name] += term.seconds;
    ++p.launches;
    p.counters += it->counters;
    p.windows |= !it->launch.windows.empty();
  }
  return p;
}

std::vector<ParamOverride> overrides(const std::string& params) {
  std::vector<ParamOverride> sets;
  std::size_t start = 0;
  while (start < params.size()) {
    const std::size_t end = std::min(params.find(' ', start), params.size());
    if (end > start) sets.push_back(parse_param_override(params.substr(start, end - start)));
    start = end + 1;
  }
  return sets;
}

// ncu's counters come from runs where access-policy windows are not in effect: on the H100, the persisting probe's
// L2 read hits and DRAM reads under ncu are those of the run without a window at every set-aside, while CUDA-event
// timings of the same program show the window's lines kept (validate/results/h100-2026-11-22f/probe). A prediction
// with a window in effect is not compared with them on the counters the window changes.
constexpr const char* kNcuIgnoresWindows =
    "ncu runs without the access-policy window in effect (validate/results/h100-2026-11-22f/probe)";
bool window_sensitive(std::string_view counter) {
  return counter == "l2_read_hits" || counter == "l2_atom_hits" || counter == "l2_red_hits" ||
         counter == "dram_read_bytes" || counter == "dram_write_bytes";
}

double pct_error(double predicted, double measured) {
  return measured != 0 ? 100 * (predicted - measured) / measured : 0;
}

// `complete_traces_only`: leave out traced cases whose trace lacks what the kernel does (CaseResult::trace_blind_spot).
nlohmann::json time_summary(const std::vector<CaseResult>& cases, bool traced, bool complete_traces_only = false) {
  std::vector<double> errors, lp, lm;
  std::string worst;
  double worst_error = -1;
  int left_out = 0;
  for (const CaseResult& c : cases) {
    const auto& p = traced ? c.traced : c.described;
    if (!p) continue;
    if (complete_traces_only && !c.trace_blind_spot.empty()) {
      ++left_out;
      continue;
    }
    const double e = std::abs(pct_error(p->seconds, c.measured.median_s));
    errors.push_back(e);
    lp.push_back(std::log10(p->seconds));
    lm.push_back(std::log10(c.measured.median_s));
    if (e > worst_error) worst_error = e, worst = c.measured.id;
  }
  if (errors.empty()) return {{"cases", 0}, {"left_out", left_out}};
  double mape = 0, within25 = 0;
  for (double e : errors) mape += e / static_cast<double>(errors.size()), within25 += e <= 25 ? 1 : 0;
  const auto n = static_cast<double>(lp.size());
  double mp = 0, mm = 0, cov = 0, vp = 0, vm = 0;
  for (std::size_t i = 0; i < lp.size(); ++i) mp += lp[i] / n, mm += lm[i] / n;
  for (std::size_t i = 0; i < lp.size(); ++i)
    cov += (lp[i] - mp) * (lm[i] - mm), vp += (lp[i] - mp) * (lp[i] - mp), vm += (lm[i] - mm) * (lm[i] - mm);
  nlohmann::json summary = {
      {"cases", errors.size()},   {"mape_pct", mape},
      {"worst_case", worst},      {"worst_error_pct", worst_error},
      {"within_25pct", within25}, {"log_time_correlation", vp > 0 && vm > 0 ? cov / std::sqrt(vp * vm) : 0.0}};
  if (complete_traces_only) summary["left_out"] = left_out;
  return summary;
}

// Cases compared, mean and worst |error| and cases within 10% of instruction_check's errors.
nlohmann::json instruction_summary(const std::vector<double>& errors) {
  double mean = 0, worst = 0, within10 = 0;
  for (const double e : errors)
    mean += e / static_cast<double>(errors.size()), worst = std::max(worst, e), within10 += e <= 10;
  return {{"cases", errors.size()},
          {"mean_abs_error_pct", mean},
          {"worst_abs_error_pct", worst},
          {"within_10pct", within10}};
}

// The description's warp instructions (memory instructions, barriers and `work`) against ncu's count of every warp
// instruction the case executed (smsp__inst_executed.sum; suite runs since validate/results/h100-2026-11-28d-suite),
// with how busy ncu found the schedulers: the issue term's input and what the GPU made of it. Descriptions only: a
// captured trace holds no arithmetic. Null where the run lacks the metric.
nlohmann::json instruction_check(const CaseResult& c) {
  const auto measured = c.measured.ncu.find("smsp__inst_executed.sum");
  if (!c.described || measured == c.measured.ncu.end() || measured->second <= 0) return nullptr;
  const SimCounters& k = c.described->counters;
  const auto predicted = static_cast<double>(k.warp_instructions + k.work);
  nlohmann::json out = {{"metric", measured->first},
                        {"predicted", predicted},
                        {"measured", measured->second},
                        {"error_pct", pct_error(predicted, measured->second)}};
  const auto busy = c.measured.ncu.find("smsp__issue_active.avg.pct_of_peak_sustained_active");
  if (busy != c.measured.ncu.end()) out["issue_active_pct"] = busy->second;
  return out;
}

}  // namespace

std::vector<CaseResult> run_validation(const Arch& arch, const Results& results, const ValidateOptions& options) {
  std::vector<CaseResult> out;
  const std::regex only = name_regex(options.only.empty() ? ".*" : options.only);
  std::optional<PredictionCache> cache;
  if (!options.sim_cache.empty()) cache.emplace(options.sim_cache, arch);
  // A prediction from the cache where it holds one for `key`, else simulated (and kept there).
  auto predicted = [&](const std::string& key, const std::function<CasePrediction()>& simulate) {
    if (!cache || key.empty()) return simulate();
    if (std::optional<CasePrediction> p = cache->find(key)) return *p;
    CasePrediction p = simulate();
    cache->store(key, p);
    return p;
  };
  for (const MeasuredCase& m : results.cases) {
    if (!std::regex_search(m.id, only)) continue;
    CaseResult r;
    r.measured = m;
    const fs::path desc = options.examples / (m.kernel + ".yaml");
    try {
      const auto sets = overrides(m.params);
      r.described = predicted(description_key(desc, m), [&] {
        RepeatSource src([&] { return open_trace(desc, sets); }, m.warm ? 2 : 1);
        return predict_run(arch, src, m.warm, m.launches_per_run, options.threads);
      });
    } catch (const std::exception& e) {
      r.error = fmt::format("description: {}", e.what());
    }
    if (!m.trace.empty()) {
      try {
        r.traced = predicted(trace_key(m.trace, m), [&] {
          auto src = open_trace(m.trace);
          return predict_run(arch, *src, m.warm, m.launches_per_run, options.threads);
        });
        if (r.described && r.described->counters.constant_requests > 0 && r.traced->counters.constant_requests == 0)
          r.trace_blind_spot = fmt::format(
              "the trace has no constant-bank loads (the Compute Sanitizer does not report them); the description has "
              "{} warp-level constant loads, {} serialized accesses",
              r.described->counters.constant_requests, r.described->counters.constant_serialized);
      } catch (const std::exception& e) {
        r.error += fmt::format("{}trace: {}", r.error.empty() ? "" : "; ", e.what());
      }
    }
    out.push_back(std::move(r));
  }
  if (cache)
    std::cerr << fmt::format("simulation cache {}: {} prediction(s) read back, {} simulated\n", cache->dir().string(),
                             cache->reused(), cache->simulated());
  return out;
}

namespace {

// The cases' errors, gathered for the summary.
struct ErrorTally {
  std::map<std::string, std::vector<double>> counters, hit_rates;
  // Per counter, sum of |predicted - measured| and of measured over the compared cases: the traffic-weighted error,
  // which a few near-zero measurements (a kernel without global loads still reads ~1000 L2 sectors of instructions
  // and constants: 100% each) cannot dominate as they do the mean of relative errors.
  std::map<std::string, std::pair<double, double>> totals;
  std::vector<double> instructions;  // |error| of the descriptions' warp instructions (instruction_check)
};

// A case's times, from its description and its trace.
nlohmann::json case_row(const CaseResult& c) {
  nlohmann::json row = {{"case", c.measured.id},
                        {"kernel", c.measured.kernel},
                        {"regime", c.measured.regime},
                        {"warm", c.measured.warm},
                        {"measured_s", c.measured.median_s},
                        {"measured_p10_s", c.measured.p10_s},
                        {"measured_p90_s", c.measured.p90_s}};
  if (!c.error.empty()) row["error"] = c.error;
  for (const auto& [key, p] : {std::pair{"described", &c.described}, std::pair{"traced", &c.traced}}) {
    if (!*p) continue;
    row[key] = {{"predicted_s", (*p)->seconds},
                {"error_pct", pct_error((*p)->seconds, c.measured.median_s)},
                {"bound", (*p)->bound},
                {"bound_seconds", (*p)->bound_seconds},
                {"launch_seconds", (*p)->launch_seconds},
                {"launches", (*p)->launches},
                {"terms_s", (*p)->terms}};
  }
  if (c.traced && !c.trace_blind_spot.empty()) row["traced"]["blind_spot"] = c.trace_blind_spot;
  return row;
}

// Each simulated counter with an ncu metric the case measured, predicted from `basis` against it.
nlohmann::json compare_counters(const CaseResult& c, const CasePrediction& basis, ErrorTally& tally) {
  nlohmann::json counters = nlohmann::json::object();
  for (const SimCounterInfo& info : sim_counter_table()) {
    auto it = c.measured.ncu.find(std::string(info.ncu_metric));
    if (info.ncu_metric.empty() || it == c.measured.ncu.end()) continue;
    const auto predicted = static_cast<double>(basis.counters.*info.field);
    const double measured = it->second;
    nlohmann::json cell = {{"metric", info.ncu_metric}, {"predicted", predicted}, {"measured", measured}};
    if (basis.windows && window_sensitive(info.name)) {
      cell["not_compared"] = kNcuIgnoresWindows;
      counters[std::string(info.name)] = cell;
      continue;
    }
    // A measured counter stays in the summary when every case predicts its 0 exactly (0 cases, 0% error), so the
    // ratchet sees that as the improvement it is rather than as a counter gone missing.
    auto& errors = tally.counters[std::string(info.name)];
    auto& [off, total] = tally.totals[std::string(info.name)];
    if (measured > 0 || predicted > 0) {
      off += std::abs(predicted - measured);
      total += measured;
      const double e = measured > 0 ? pct_error(predicted, measured) : 100.0;
      cell["error_pct"] = e;
      errors.push_back(std::abs(e));
    }
    counters[std::string(info.name)] = cell;
  }
  return counters;
}

// The L2 read hit rate in percentage points, the form of the target ("within 5 points"): a hit count's relative
// error says little where hits are few (a cold stream's 1000 hits of 3 million reads). Null where not compared.
nlohmann::json compare_hit_rate(const CaseResult& c, const CasePrediction& basis, ErrorTally& tally) {
  const auto hits = c.measured.ncu.find("lts__t_sectors_op_read_lookup_hit.sum");
  const auto reads = c.measured.ncu.find("lts__t_sectors_op_read.sum");
  if (basis.windows || hits == c.measured.ncu.end() || reads == c.measured.ncu.end() || reads->second <= 0 ||
      basis.counters.l2_read_sectors == 0)
    return nullptr;
  const double measured = 100 * hits->second / reads->second;
  const double predicted =
      100 * static_cast<double>(basis.counters.l2_read_hits) / static_cast<double>(basis.counters.l2_read_sectors);
  tally.hit_rates["l2_read_hit_rate"].push_back(std::abs(predicted - measured));
  return {{"predicted_pct", predicted}, {"measured_pct", measured}, {"error_points", predicted - measured}};
}

// Per counter and per hit rate, the cases' errors summed up; the instruction counts' where measured.
nlohmann::json error_summary(const ErrorTally& tally, nlohmann::json summary) {
  nlohmann::json per_counter = nlohmann::json::object();
  for (const auto& [name, errs] : tally.counters) {
    double mean = 0, worst = 0, exact = 0, within10 = 0;
    for (double e : errs)
      mean += e / static_cast<double>(errs.size()), worst = std::max(worst, e), exact += e < 0.5, within10 += e <= 10;
    const auto [off, total] = tally.totals.at(name);
    // All measured zero: 0 when predicted so too, else 100 (as a case's error is then).
    const double weighted = total > 0 ? 100 * off / total : (off > 0 ? 100.0 : 0.0);
    per_counter[name] = {
        {"cases", errs.size()},         {"mean_abs_error_pct", mean}, {"weighted_abs_error_pct", weighted},
        {"worst_abs_error_pct", worst}, {"within_0_5pct", exact},     {"within_10pct", within10}};
  }
  nlohmann::json per_rate = nlohmann::json::object();
  for (const auto& [name, errs] : tally.hit_rates) {
    double mean = 0, worst = 0, within5 = 0;
    for (double e : errs) mean += e / static_cast<double>(errs.size()), worst = std::max(worst, e), within5 += e <= 5;
    per_rate[name] = {{"cases", errs.size()},
                      {"mean_abs_error_points", mean},
                      {"worst_abs_error_points", worst},
                      {"within_5_points", within5}};
  }
  summary["counters"] = per_counter;
  summary["hit_rates"] = per_rate;
  if (!tally.instructions.empty()) summary["instructions"] = instruction_summary(tally.instructions);
  return summary;
}

}  // namespace

nlohmann::json validation_report(const Arch& arch, const Results& results, const std::vector<CaseResult>& cases) {
  nlohmann::json rows = nlohmann::json::array();
  ErrorTally tally;
  for (const CaseResult& c : cases) {
    nlohmann::json row = case_row(c);
    const auto& basis = c.traced ? c.traced : c.described;  // counters from the best trace we have
    row["counters"] = basis ? compare_counters(c, *basis, tally) : nlohmann::json::object();
    row["counters_from"] = c.traced ? "trace" : "description";
    if (basis)
      if (nlohmann::json rate = compare_hit_rate(c, *basis, tally); !rate.is_null())
        row["hit_rates"]["l2_read_hit_rate"] = std::move(rate);
    if (nlohmann::json check = instruction_check(c); !check.is_null()) {
      tally.instructions.push_back(std::abs(check["error_pct"].get<double>()));
      row["instructions"] = std::move(check);
    }
    rows.push_back(row);
  }
  nlohmann::json summary = {{"time_from_description", time_summary(cases, false)},
                            {"time_from_trace", time_summary(cases, true)},
                            // The same over the traces that show everything the kernel's description does.
                            {"time_from_complete_traces", time_summary(cases, true, true)}};
  return {{"gpu", results.gpu},
          {"arch", arch.name},
          {"results", results.dir.string()},
          {"summary", error_summary(tally, std::move(summary))},
          {"cases", rows}};
}

nlohmann::json read_baseline(const fs::path& file) {
  if (fs::is_directory(file)) throw InputError({file.string()}, "", "a folder, not a baseline file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError({file.string()}, "", fmt::format("cannot read the baseline: {}", std::strerror(errno)));
  nlohmann::json root = nlohmann::json::parse(in, nullptr, false);
  if (root.is_discarded()) throw InputError({file.string()}, "", "the baseline is not JSON");
  auto fail = [&](const std::string& pointer, const std::string& message) {
    throw InputError({file.string()}, pointer, message);
  };
  if (!root.is_object()) fail("", "expected a JSON object (what --write-baseline writes: {\"summary\": {...}})");
  const bool wrapped = root.contains("summary");
  const nlohmann::json& summary = wrapped ? root["summary"] : root;
  const std::string at = wrapped ? "/summary" : "";
  if (!summary.is_object()) fail(at, "expected an object");
  // Each number the ratchet compares, where the baseline has it, must be a number: an entry it cannot read would
  // leave a metric unchecked.
  auto number = [&](const nlohmann::json& entry, const std::string& pointer, const char* field) {
    if (!entry.is_object()) fail(pointer, "expected an object");
    if (entry.contains(field) && !entry[field].is_number())
      fail(pointer + "/" + field, fmt::format("expected a number, got {}", entry[field].dump()));
  };
  int compared = 0;
  for (const char* path : {"time_from_description", "time_from_trace", "time_from_complete_traces"})
    if (summary.contains(path)) {
      number(summary[path], at + "/" + path, "mape_pct");
      compared += summary[path].contains("mape_pct") ? 1 : 0;
    }
  for (const auto& [section, fields] :
       {std::pair<const char*, std::vector<const char*>>{"counters", {"mean_abs_error_pct", "weighted_abs_error_pct"}},
        {"hit_rates", {"mean_abs_error_points"}}}) {
    if (!summary.contains(section)) continue;
    const std::string pointer = at + "/" + section;
    if (!summary[section].is_object()) fail(pointer, "expected an object of named entries");
    for (const auto& [name, entry] : summary[section].items())
      for (const char* field : fields) {
        number(entry, fmt::format("{}/{}", pointer, name), field);
        compared += entry.contains(field) ? 1 : 0;
      }
  }
  if (summary.contains("instructions")) {
    number(summary["instructions"], at + "/instructions", "mean_abs_error_pct");
    compared += summary["instructions"].contains("mean_abs_error_pct") ? 1 : 0;
  }
  if (compared == 0)
    fail(at,
         "holds no error to compare with (a MAPE, a counter's or a hit rate's error): is it a baseline written "
         "by --write-baseline?");
  return root;
}

std::vector<std::string> ratchet_regressions(const nlohmann::json& report, const nlohmann::json& baseline) {
  std::vector<std::string> worse;
  const auto& now = report.at("summary");
  const auto& base = baseline.contains("summary") ? baseline.at("summary") : baseline;
  constexpr double kSlack = 1e-6;  // float noise only: the simulator is deterministic
  for (const char* path : {"time_from_description", "time_from_trace", "time_from_complete_traces"}) {
    if (!base.contains(path) || !base[path].contains("mape_pct")) continue;
    const double b = base[path]["mape_pct"].get<double>();
    const double n = now.contains(path) ? now[path].value("mape_pct", 1e9) : 1e9;
    if (n > b + kSlack) worse.push_back(fmt::format("{} MAPE {:.3f}% > baseline {:.3f}%", path, n, b));
  }
  if (base.contains("counters"))
    for (const auto& [name, b] : base["counters"].items()) {
      const nlohmann::json none = nlohmann::json::object();
      const nlohmann::json& n = now["counters"].contains(name) ? now["counters"][name] : none;
      // Both errors may only go down; a baseline written before the weighted one existed checks the mean only.
      for (const char* field : {"mean_abs_error_pct", "weighted_abs_error_pct"}) {
        if (!b.contains(field)) continue;
        const double bv = b[field].get<double>(), nv = n.value(field, 1e9);
        if (nv > bv + kSlack) worse.push_back(fmt::format("{} {} {:.3f}% > baseline {:.3f}%", name, field, nv, bv));
      }
    }
  if (base.contains("hit_rates"))
    for (const auto& [name, b] : base["hit_rates"].items()) {
      const double bv = b.value("mean_abs_error_points", 0.0);
      const double nv = now.contains("hit_rates") && now["hit_rates"].contains(name)
                            ? now["hit_rates"][name].value("mean_abs_error_points", 1e9)
                            : 1e9;
      if (nv > bv + kSlack) worse.push_back(fmt::format("{} mean error {:.3f} points > baseline {:.3f}", name, nv, bv));
    }
  // The descriptions' warp instructions against ncu's (instruction_check): an edited description that drifts from
  // what its kernel executes fails the ratchet of a run that counted them.
  if (base.contains("instructions") && base["instructions"].contains("mean_abs_error_pct")) {
    const double bv = base["instructions"]["mean_abs_error_pct"].get<double>();
    const double nv = now.contains("instructions") ? now["instructions"].value("mean_abs_error_pct", 1e9) : 1e9;
    if (nv > bv + kSlack)
      worse.push_back(fmt::format("warp instructions mean error {:.4f}% > baseline {:.4f}%", nv, bv));
  }
  return worse;
}

std::optional<AccuracyRecord> record_of_run(const std::string& run, const nlohmann::json& report) {
  const nlohmann::json& t = report.at("summary").value("time_from_description", nlohmann::json::object());
  if (!t.contains("mape_pct")) return std::nullopt;
  AccuracyRecord r;
  r.run = run;
  r.time_mape_pct = std::round(t["mape_pct"].get<double>() * 10) / 10;  // a record's rounding: 0.1
  r.cases = t.value("cases", 0);
  r.within_25pct = static_cast<int>(std::lround(t.value("within_25pct", 0.0)));
  const std::string worst = t.value("worst_case", std::string());
  std::array<std::vector<double>, AccuracyRecord::kBoundNames.size()> errors;
  for (const nlohmann::json& c : report.at("cases")) {
    if (!c.contains("described") || !c["described"].contains("error_pct")) continue;
    const double e = c["described"]["error_pct"].get<double>();
    if (c.value("case", std::string()) == worst) r.worst = fmt::format("{}: {:+.1f}%", worst, e);
    const std::string bound = c["described"].value("bound", std::string());
    for (std::size_t b = 0; b < errors.size(); ++b)
      if (bound == AccuracyRecord::kBoundNames[b]) errors[b].push_back(e);
  }
  for (std::size_t b = 0; b < errors.size(); ++b) {
    const std::vector<double>& v = errors[b];
    if (v.empty()) {
      r.by_bound[b] = "0 cases";
      continue;
    }
    double sum = 0;
    for (const double e : v) sum += std::abs(e);
    r.by_bound[b] = fmt::format("{} case{}, MAPE {:.1f}%, from {:+.1f}% to {:+.1f}%", v.size(),
                                v.size() == 1 ? "" : "s", sum / static_cast<double>(v.size()),
                                *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
  }
  return r;
}

std::string record_yaml(const AccuracyRecord& r) {
  std::string out =
      fmt::format("accuracy:\n  run: {}\n  time_mape: {:.1f}\n  cases: {}\n  within_25pct: {}\n  worst: {}\n", r.run,
                  r.time_mape_pct, r.cases, r.within_25pct, yaml_quoted(r.worst));
  out += "  by_bound:\n";
  for (std::size_t b = 0; b < r.by_bound.size(); ++b)
    out += fmt::format("    {}: {}\n", AccuracyRecord::kBoundNames[b], yaml_quoted(r.by_bound[b]));
  return out;
}

std::optional<std::vector<std::string>> record_differences(const Arch& arch, const fs::path& results_dir,
                                                           const nlohmann::json& report) {
  const AccuracyRecord& r = arch.accuracy;
  if (!own_accuracy_record(arch)) return std::nullopt;  // none, or a what-if's inherited one
  // The folder's own name, whatever path reaches it ("results/x/", "./x", an absolute one).
  auto folder = [](const fs::path& p) {
    std::error_code ec;
    const fs::path full = fs::weakly_canonical(p, ec);
    return (ec ? p.lexically_normal() : full).filename().string();
  };
  std::string named = fs::path(r.run).lexically_normal().filename().string();
  if (named.empty()) named = fs::path(r.run).lexically_normal().parent_path().filename().string();
  if (named != folder(results_dir)) return std::nullopt;
  std::vector<std::string> out;
  const std::optional<AccuracyRecord> now = record_of_run(r.run, report);
  if (!now) {
    out.emplace_back("this run predicted no case from its description: it gives no time error");
    return out;
  }
  // The record is rounded to 0.1: a model change that moves the MAPE by less keeps it true.
  if (std::abs(now->time_mape_pct - r.time_mape_pct) > 1e-9)
    out.push_back(
        fmt::format("accuracy.time_mape: {:g} on record, {:.1f} from this run", r.time_mape_pct, now->time_mape_pct));
  if (now->cases != r.cases)
    out.push_back(fmt::format("accuracy.cases: {} on record, {} in this run", r.cases, now->cases));
  if (now->within_25pct != r.within_25pct)
    out.push_back(
        fmt::format("accuracy.within_25pct: {} on record, {} from this run", r.within_25pct, now->within_25pct));
  if (now->worst != r.worst)
    out.push_back(fmt::format(R"(accuracy.worst: "{}" on record, "{}" from this run)", r.worst, now->worst));
  for (std::size_t b = 0; b < r.by_bound.size(); ++b)
    if (now->by_bound[b] != r.by_bound[b])
      out.push_back(fmt::format(R"(accuracy.by_bound.{}: "{}" on record, "{}" from this run)",
                                AccuracyRecord::kBoundNames[b], r.by_bound[b], now->by_bound[b]));
  return out;
}

}  // namespace memhier::cli
