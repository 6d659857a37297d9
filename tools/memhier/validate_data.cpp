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
#include "ncu_csv.h"

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

// Attaches each case's counted launches (its last launches_per_run of the launches it made) from one ncu run.
void attach_ncu(const fs::path& dir, const std::string& mode, std::map<std::string, MeasuredCase*>& by_id) {
  const fs::path once = dir / "suite" / fmt::format("once_{}.jsonl", mode);
  const fs::path csv = ncu_csv_file(dir / "suite" / fmt::format("ncu_{}.csv", mode));  // or its .csv.zst
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
