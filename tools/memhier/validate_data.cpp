// Parses the suite's JSON lines and ncu's CSV (one row per kernel launch and metric, values with thousands
// separators). ncu numbers launches in the order the runner made them; once_*.jsonl says how many each case made.
#include "validate_data.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "memhier/error.h"

namespace memhier::cli {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const fs::path& file, int line, const std::string& what) {
  throw InputError({file.string(), line, 0, -1}, "", what);
}

std::vector<nlohmann::json> read_jsonl(const fs::path& file) {
  std::ifstream in(file);
  if (!in) fail(file, 0, "cannot open (run validate/gpu/run_suite.sh on a GPU machine to produce it)");
  std::vector<nlohmann::json> rows;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) fail(file, n, "not a JSON object");
    rows.push_back(std::move(j));
  }
  return rows;
}

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.push_back(std::exchange(cur, {}));
    else
      cur += c;
  }
  out.push_back(cur);
  return out;
}

// ncu CSV -> per launch ID, metric -> value. Lines before the header (ncu's own messages) are skipped.
std::vector<std::map<std::string, double>> read_ncu(const fs::path& file) {
  std::ifstream in(file);
  if (!in) fail(file, 0, "cannot open");
  std::vector<std::map<std::string, double>> launches;
  std::string line;
  int id_col = -1, metric_col = -1, value_col = -1;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto f = csv_fields(line);
    if (id_col < 0) {
      for (std::size_t i = 0; i < f.size(); ++i) {
        if (f[i] == "ID") id_col = static_cast<int>(i);
        if (f[i] == "Metric Name") metric_col = static_cast<int>(i);
        if (f[i] == "Metric Value") value_col = static_cast<int>(i);
      }
      continue;
    }
    if (static_cast<int>(f.size()) <= std::max({id_col, metric_col, value_col})) continue;
    std::string v;
    for (char c : f[static_cast<std::size_t>(value_col)])
      if (c != ',') v += c;
    std::size_t id = 0;
    double value = 0;
    try {
      id = std::stoul(f[static_cast<std::size_t>(id_col)]);
      value = std::stod(v);
    } catch (const std::exception&) {
      fail(file, n,
           fmt::format("launch ID or metric value is not a number: '{}'", f[static_cast<std::size_t>(value_col)]));
    }
    if (id >= launches.size()) launches.resize(id + 1);
    launches[id][f[static_cast<std::size_t>(metric_col)]] = value;
  }
  if (id_col < 0) fail(file, 0, "no ncu CSV header (ID, Metric Name, Metric Value) found");
  return launches;
}

// Attaches each case's counted launches (its last launches_per_run of the launches it made) from one ncu run.
void attach_ncu(const fs::path& dir, const std::string& mode, std::map<std::string, MeasuredCase*>& by_id) {
  const fs::path once = dir / "suite" / fmt::format("once_{}.jsonl", mode);
  const fs::path csv = dir / "suite" / fmt::format("ncu_{}.csv", mode);
  if (!fs::exists(once) || !fs::exists(csv)) return;
  const auto launches = read_ncu(csv);
  std::size_t next = 0;
  int line = 0;
  for (const auto& rec : read_jsonl(once)) {
    ++line;
    const auto made = rec.value("launches", 1);
    const auto counted = rec.value("launches_per_run", 1);
    const std::string id = rec.value("case", "");
    if (next + static_cast<std::size_t>(made) > launches.size())
      fail(once, line,
           fmt::format("{} launches listed but {} has only {}", next + static_cast<std::size_t>(made), csv.string(),
                       launches.size()));
    auto it = by_id.find(id);
    if (it != by_id.end())
      for (std::size_t l = next + static_cast<std::size_t>(made - counted); l < next + static_cast<std::size_t>(made);
           ++l)
        for (const auto& [metric, value] : launches[l]) it->second->ncu[metric] += value;
    next += static_cast<std::size_t>(made);
  }
}

}  // namespace

std::string case_file_name(const std::string& id) {
  std::string out;
  for (char c : id) {
    if (c == ' ' || c == '<')
      out += '_';
    else if (c == '=')
      out += '-';
    else if (c != '>')
      out += c;
  }
  return out;
}

Results load_results(const fs::path& dir) {
  Results r;
  r.dir = dir;
  const fs::path timings = dir / "suite" / "timings.jsonl";
  int line = 0;
  for (const auto& j : read_jsonl(timings)) {
    ++line;
    MeasuredCase c;
    try {
      c.id = j.at("case").get<std::string>();
      c.kernel = j.at("kernel").get<std::string>();
      c.params = j.value("params", "");
      c.regime = j.value("regime", "");
      c.warm = j.value("warm", false);
      c.launches_per_run = j.value("launches_per_run", 1);
      c.median_s = j.at("median_s").get<double>();
      c.p10_s = j.value("p10_s", c.median_s);
      c.p90_s = j.value("p90_s", c.median_s);
      c.gpu = j.value("gpu", "");
    } catch (const nlohmann::json::exception& e) {
      fail(timings, line, fmt::format("missing or mistyped field: {}", e.what()));
    }
    const fs::path trace = dir / "capture" / "traces" / (case_file_name(c.id) + ".mht");
    if (fs::exists(trace)) c.trace = trace;
    r.gpu = c.gpu;
    r.cases.push_back(std::move(c));
  }
  std::map<std::string, MeasuredCase*> by_id;
  for (MeasuredCase& c : r.cases) by_id[c.id] = &c;
  attach_ncu(dir, "cold", by_id);
  attach_ncu(dir, "warm", by_id);
  return r;
}

}  // namespace memhier::cli
