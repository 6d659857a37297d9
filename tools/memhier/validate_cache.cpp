#include "validate_cache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "memhier/report.h"

namespace memhier::cli {
namespace fs = std::filesystem;
namespace {

// The whole file, or nothing where it cannot be read.
std::optional<std::string> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

// Two 64-bit hashes of the text, the second of it salted, as 32 hex digits: names and checks that collide by chance
// once in 2^128. (std::hash of a string is the same function in every run of one binary, and the binary is part of
// each key.)
std::string digest(std::string_view text, std::string_view salt) {
  const std::size_t a = std::hash<std::string_view>{}(text);
  std::string salted(salt);
  salted += text;
  const std::size_t b = std::hash<std::string>{}(salted);
  return fmt::format("{:016x}{:016x}", a, b);
}

nlohmann::json to_json(const CasePrediction& p) {
  nlohmann::json counters = nlohmann::json::object();
  for (const SimCounterInfo& i : sim_counter_table()) counters[i.name] = p.counters.*i.field;
  return {{"seconds", p.seconds},
          {"bound", p.bound},
          {"bound_seconds", p.bound_seconds},
          {"launch_seconds", p.launch_seconds},
          {"launches", p.launches},
          {"windows", p.windows},
          {"terms", p.terms},
          {"counters", counters}};
}

CasePrediction from_json(const nlohmann::json& j) {
  CasePrediction p;
  p.seconds = j.at("seconds").get<double>();
  p.bound = j.at("bound").get<std::string>();
  p.bound_seconds = j.at("bound_seconds").get<double>();
  p.launch_seconds = j.at("launch_seconds").get<double>();
  p.launches = j.at("launches").get<int>();
  p.windows = j.at("windows").get<bool>();
  p.terms = j.at("terms").get<std::map<std::string, double>>();
  const nlohmann::json& counters = j.at("counters");
  if (counters.size() != sim_counter_table().size()) throw std::runtime_error("counters of another binary");
  for (const SimCounterInfo& i : sim_counter_table()) p.counters.*i.field = counters.at(i.name).get<std::uint64_t>();
  return p;
}

}  // namespace

PredictionCache::PredictionCache(fs::path dir, const Arch& arch) : m_dir(std::move(dir)) {
  const std::optional<std::string> binary = read_bytes("/proc/self/exe");
  if (!binary) {
    std::cerr << fmt::format(
        "note: --sim-cache {}: this binary cannot be read (/proc/self/exe), so nothing is cached\n", m_dir.string());
    return;
  }
  std::error_code ec;
  fs::create_directories(m_dir, ec);
  if (ec || !fs::is_directory(m_dir))
    throw std::runtime_error(fmt::format("--sim-cache {}: cannot make the folder: {}", m_dir.string(),
                                         ec ? ec.message() : "a file of that name is in the way"));
  m_base = fmt::format("memhier {}\narch {}\n", digest(*binary, "binary"), arch_to_json(arch).dump());
  m_enabled = true;
}

fs::path PredictionCache::entry(const std::string& key) const { return m_dir / (digest(m_base + key, "") + ".json"); }

std::string PredictionCache::check(const std::string& key) const { return digest(m_base + key, "check\n"); }

std::optional<CasePrediction> PredictionCache::find(const std::string& key) {
  if (!m_enabled) return std::nullopt;
  const std::optional<std::string> text = read_bytes(entry(key));
  if (text) {
    try {
      const nlohmann::json j = nlohmann::json::parse(*text);
      if (j.at("check").get<std::string>() == check(key)) {
        CasePrediction p = from_json(j.at("prediction"));
        ++m_reused;
        return p;
      }
    } catch (const std::exception&) {  // damaged or of another layout: simulated again, and replaced
    }
  }
  ++m_simulated;
  return std::nullopt;
}

void PredictionCache::store(const std::string& key, const CasePrediction& p) {
  if (!m_enabled) return;
  const fs::path path = entry(key);
  const fs::path temporary = path.string() + fmt::format(".{}.tmp", getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << nlohmann::json{{"check", check(key)}, {"prediction", to_json(p)}}.dump() << "\n";
    if (!out) {
      std::error_code ec;
      fs::remove(temporary, ec);
      std::cerr << fmt::format("note: --sim-cache {}: cannot write {}; the prediction is not kept\n", m_dir.string(),
                               temporary.string());
      return;
    }
  }
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) fs::remove(temporary, ec);
}

std::string description_key(const fs::path& desc, const MeasuredCase& m) {
  const std::optional<std::string> text = read_bytes(desc);
  if (!text) return {};
  return fmt::format("description\n{}\nparams {}\nwarm {}\nlaunches {}\n", *text, m.params, m.warm, m.launches_per_run);
}

std::string trace_key(const fs::path& trace, const MeasuredCase& m) {
  const std::optional<std::string> bytes = read_bytes(trace);
  if (!bytes) return {};
  return fmt::format("trace {}\nwarm {}\nlaunches {}\n", digest(*bytes, "trace"), m.warm, m.launches_per_run);
}

}  // namespace memhier::cli
