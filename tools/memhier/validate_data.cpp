// Parses the suite's JSON lines and ncu's CSV (one row per kernel launch and metric, values with thousands
// separators). ncu numbers launches in the order the runner made them; once_*.jsonl says how many each case made.
#include "validate_data.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "memhier/error.h"

namespace memhier::cli {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const fs::path& file, int line, const std::string& what, const std::string& key = "") {
  throw InputError({file.string(), line, 0, -1}, key, what);
}

template <typename T>
constexpr const char* kind_of() {
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  if constexpr (std::is_same_v<T, bool>) return "true or false";
  if constexpr (std::is_integral_v<T>) return "a whole number";
  return "a number";
}

// Field `name` of line `line` of a JSON Lines file as T, or `fallback` where the record has none (required: no
// fallback); an InputError naming the file, line and field where it is missing or of another type.
template <typename T>
T field(const nlohmann::json& record, const char* name, const fs::path& file, int line,
        std::optional<T> fallback = std::nullopt) {
  if (!record.contains(name)) {
    if (fallback) return *fallback;
    fail(file, line, "missing", name);
  }
  const nlohmann::json& v = record[name];
  const bool fits = std::is_same_v<T, std::string> ? v.is_string()
                    : std::is_same_v<T, bool>      ? v.is_boolean()
                    : std::is_integral_v<T>        ? v.is_number_integer()
                                                   : v.is_number();
  if (!fits) fail(file, line, fmt::format("expected {}, got {}", kind_of<T>(), v.dump()), name);
  return v.get<T>();
}

// A measured time in seconds: finite and positive (a time of 0 or below would give any prediction a 0% or -100% error).
double seconds(const nlohmann::json& record, const char* name, const fs::path& file, int line,
               std::optional<double> fallback = std::nullopt) {
  const auto s = field<double>(record, name, file, line, fallback);
  if (!std::isfinite(s) || s <= 0) fail(file, line, fmt::format("expected a time above 0 s, got {}", s), name);
  return s;
}

// A count of launches: 1 or more.
int launch_count(const nlohmann::json& record, const char* name, const fs::path& file, int line) {
  const auto n = field<std::int64_t>(record, name, file, line, 1);
  if (n < 1 || n > 1'000'000) fail(file, line, fmt::format("expected 1 to 1000000 launches, got {}", n), name);
  return static_cast<int>(n);
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

}  // namespace

// ncu's CSV, launch by launch: the details page (a row per launch and metric: ID, Metric Name, Metric Unit, Metric
// Value, as `ncu --csv --metrics LIST` prints it) or the raw page (a row per launch, a column per metric, the units in
// the row below the header: `ncu --csv --page raw`). Lines before the header (ncu's own messages) are skipped.
std::vector<NcuLaunch> read_ncu_csv(const fs::path& file) {
  std::ifstream in(file);
  if (!in) fail(file, 0, "cannot open");
  std::vector<NcuLaunch> launches;
  std::string line;
  int id_col = -1, metric_col = -1, value_col = -1, unit_col = -1, name_col = -1, grid_col = -1, block_col = -1;
  std::vector<std::string> header, wide_units;  // the raw page's column names and units
  bool wide = false;
  auto cell = [](const std::vector<std::string>& f, int col) {
    return col >= 0 && static_cast<std::size_t>(col) < f.size() ? f[static_cast<std::size_t>(col)] : std::string();
  };
  // A count as ncu prints it ("67,117,824", "1,977,432,732.50"); nullopt for text ("n/a").
  auto number = [](const std::string& text) -> std::optional<double> {
    std::string v;
    for (char c : text)
      if (c != ',') v += c;
    std::size_t used = 0;
    try {
      const double d = std::stod(v, &used);
      if (used == v.size()) return d;
    } catch (const std::exception&) {
    }
    return std::nullopt;
  };
  // One metric of launch `id`, from line `n`.
  auto add = [&](std::size_t id, int n, const std::vector<std::string>& f, const std::string& metric,
                 const std::string& text, const std::string& unit) {
    const std::optional<double> value = number(text);
    if (!value) fail(file, n, fmt::format("metric value '{}' is not a number", text), metric);
    // A counter is a count of 0 or more; a launch ID past a million is no profile's (and would size the table by it).
    if (!std::isfinite(*value) || *value < 0)
      fail(file, n, fmt::format("metric value '{}' is not a count of 0 or more", text));
    if (id >= launches.size()) launches.resize(id + 1);
    NcuLaunch& l = launches[id];
    if (l.line == 0) {
      l.id = id;
      l.line = n;
      l.kernel = cell(f, name_col);
      l.grid = cell(f, grid_col);
      l.block = cell(f, block_col);
    }
    l.metrics[metric] = *value;
    l.units[metric] = unit;
    l.lines[metric] = n;
  };
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.ends_with('\r')) line.pop_back();  // a CSV saved on Windows
    const auto f = csv_fields(line);
    if (id_col < 0) {
      for (std::size_t i = 0; i < f.size(); ++i) {
        const auto c = static_cast<int>(i);
        if (f[i] == "ID") id_col = c;
        if (f[i] == "Metric Name") metric_col = c;
        if (f[i] == "Metric Value") value_col = c;
        if (f[i] == "Metric Unit") unit_col = c;
        if (f[i] == "Kernel Name") name_col = c;
        if (f[i] == "Grid Size") grid_col = c;
        if (f[i] == "Block Size") block_col = c;
      }
      if (id_col >= 0 && (metric_col < 0) != (value_col < 0))
        fail(file, n, "an ncu CSV header with one of 'Metric Name' and 'Metric Value' but not the other");
      wide = id_col >= 0 && metric_col < 0;
      if (wide) header = f;
      continue;
    }
    const std::string id_text = cell(f, id_col);
    if (wide && id_text.empty() && wide_units.empty()) {  // the raw page's units, under the header
      wide_units = f;
      continue;
    }
    if (static_cast<int>(f.size()) <= std::max({id_col, metric_col, value_col})) continue;
    std::size_t id = 0;
    try {
      std::size_t used = 0;
      id = std::stoul(id_text, &used);
      if (used != id_text.size()) throw std::invalid_argument(id_text);
    } catch (const std::exception&) {
      fail(file, n, fmt::format("launch ID '{}' is not a number", id_text));
    }
    if (id >= 1'000'000) fail(file, n, fmt::format("launch ID {} is past the 1000000 launches a profile holds", id));
    if (!wide) {
      add(id, n, f, f[static_cast<std::size_t>(metric_col)], f[static_cast<std::size_t>(value_col)], cell(f, unit_col));
      continue;
    }
    // A metric column's name has a double underscore (dram__bytes_read.sum); its text values ("n/a") are skipped.
    for (std::size_t c = 0; c < header.size() && c < f.size(); ++c)
      if (header[c].find("__") != std::string::npos && number(f[c]))
        add(id, n, f, header[c], f[c], c < wide_units.size() ? wide_units[c] : std::string());
  }
  if (id_col < 0) fail(file, 0, "no ncu CSV header (ID, and Metric Name and Metric Value or metric columns) found");
  return launches;
}

namespace {

// Attaches each case's counted launches (its last launches_per_run of the launches it made) from one ncu run.
void attach_ncu(const fs::path& dir, const std::string& mode, std::map<std::string, MeasuredCase*>& by_id) {
  const fs::path once = dir / "suite" / fmt::format("once_{}.jsonl", mode);
  const fs::path csv = dir / "suite" / fmt::format("ncu_{}.csv", mode);
  if (!fs::exists(once) || !fs::exists(csv)) return;
  const auto launches = read_ncu_csv(csv);
  std::size_t next = 0;
  int line = 0;
  for (const auto& rec : read_jsonl(once)) {
    ++line;
    const int made = launch_count(rec, "launches", once, line);
    const int counted = launch_count(rec, "launches_per_run", once, line);
    if (counted > made)
      fail(once, line, fmt::format("counts the last {} launches of the {} it made", counted, made), "launches_per_run");
    const auto id = field<std::string>(rec, "case", once, line, "");
    if (next + static_cast<std::size_t>(made) > launches.size())
      fail(once, line,
           fmt::format("{} launches listed but {} has only {}", next + static_cast<std::size_t>(made), csv.string(),
                       launches.size()));
    auto it = by_id.find(id);
    if (it != by_id.end())
      for (std::size_t l = next + static_cast<std::size_t>(made - counted); l < next + static_cast<std::size_t>(made);
           ++l)
        for (const auto& [metric, value] : launches[l].metrics) it->second->ncu[metric] += value;
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
    c.id = field<std::string>(j, "case", timings, line);
    c.kernel = field<std::string>(j, "kernel", timings, line);
    c.params = field<std::string>(j, "params", timings, line, "");
    c.regime = field<std::string>(j, "regime", timings, line, "");
    c.warm = field<bool>(j, "warm", timings, line, false);
    c.launches_per_run = launch_count(j, "launches_per_run", timings, line);
    c.median_s = seconds(j, "median_s", timings, line);
    c.p10_s = seconds(j, "p10_s", timings, line, c.median_s);
    c.p90_s = seconds(j, "p90_s", timings, line, c.median_s);
    c.gpu = field<std::string>(j, "gpu", timings, line, "");
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
