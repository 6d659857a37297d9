#include "cli_common.h"

#include <fmt/format.h>
#include <omp.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "memhier/error.h"
#include "memhier/units.h"

namespace memhier::cli {

bool parse(const std::string& command, const std::string& synopsis, const std::vector<std::string>& args,
           const po::options_description& options, const po::positional_options_description& positional,
           po::variables_map& vm) {
  po::options_description all(options);
  all.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help") != 0U) {
      std::cout << "usage: memhier " << command << " " << synopsis << "\n\n" << all << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(fmt::format("memhier {}: {}", command, e.what()));
  }
  return true;
}

std::uint64_t parse_bytes_flag(const std::string& flag, const std::string& text) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc() && end == text.data() + text.size()) return v;
  try {
    return units::parse_bytes(text);
  } catch (const std::invalid_argument& e) {
    // Located at the flag, as the other flags' errors are (the message quotes the text).
    throw InputError({flag.starts_with("--") ? flag : "--" + flag}, "", e.what());
  }
}

std::string yaml_quoted(const std::string& value) {
  YAML::Emitter out;
  out << YAML::DoubleQuoted << value;
  return out.c_str();
}

std::string record_text(const AccuracyRecord& r) {
  return fmt::format("kernel time MAPE {:.1f}% over the {} suite cases of {}, {} within 25%, worst {}", r.time_mape_pct,
                     r.cases, r.run, r.within_25pct, r.worst);
}

std::string error_on_record(const Arch& arch) {
  const AccuracyRecord& r = arch.accuracy;
  if (own_accuracy_record(arch)) return record_text(r);
  if (!r.run.empty())
    return fmt::format("none for {}, a variant of {} ({}'s, on the unchanged GPU: {})", arch.name, r.measured_on,
                       r.measured_on, record_text(r));
  return fmt::format(
      "none for {}: no suite run measured on it is recorded (accuracy.* in {}), so the model's error "
      "there is not known",
      arch.name, arch.source_file.empty() ? "its file" : arch.source_file);
}

std::string error_on_record_bound(const Arch& arch, const std::string& bound) {
  const AccuracyRecord& r = arch.accuracy;
  if (!own_accuracy_record(arch)) return {};
  for (std::size_t b = 0; b < r.by_bound.size(); ++b)
    if (bound == AccuracyRecord::kBoundNames[b])
      return fmt::format("of them bound by {}, as this kernel is: {}", bound, r.by_bound[b]);
  return {};
}

nlohmann::json record_json(const Arch& arch) {
  const AccuracyRecord& r = arch.accuracy;
  if (r.run.empty()) return nullptr;
  nlohmann::json by_bound = nlohmann::json::object();
  for (std::size_t b = 0; b < r.by_bound.size(); ++b) by_bound[AccuracyRecord::kBoundNames[b]] = r.by_bound[b];
  return {{"own", own_accuracy_record(arch)},
          {"measured_on", r.measured_on},
          {"run", r.run},
          {"time_mape_pct", r.time_mape_pct},
          {"cases", r.cases},
          {"within_25pct", r.within_25pct},
          {"worst", r.worst},
          {"by_bound", by_bound}};
}

}  // namespace memhier::cli

namespace memhier::cli {
std::string plot_python() {
  if (const char* env = std::getenv("MEMHIER_PYTHON"); env != nullptr && *env != '\0') return env;
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    const std::string probe = std::string(candidate) + " -c 'import matplotlib' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return candidate;
  }
  return "";
}

int threads_flag(const std::string& command, int value) {
  if (value < 0 || value > 1024)
    throw UsageError(fmt::format("memhier {}: --threads must be 0 (every core) to 1024", command));
  if (value > 0) return value;
  return std::clamp(omp_get_max_threads(), 1, 1024);  // the cores this process may use, or OMP_NUM_THREADS
}

void check_output_format(const std::string& command, const po::variables_map& vm) {
  if (vm.count("json") != 0U && vm.count("csv") != 0U)
    throw UsageError(fmt::format("memhier {}: --json and --csv: choose one output format", command));
}

void write_text(const std::string& command, const std::filesystem::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
  file.close();
  if (!file)
    throw UsageError(fmt::format("memhier {}: cannot write {}: {}", command, path.string(), std::strerror(errno)));
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace memhier::cli
