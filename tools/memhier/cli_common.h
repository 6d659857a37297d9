#pragma once
// Shared plumbing of the memhier subcommands: option parsing with uniform errors and exit codes.
#include <boost/program_options.hpp>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "memhier/arch.h"

namespace memhier::cli {

// Exit codes of every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitBadInput = 2;

// Thrown for bad usage (unknown flag, missing argument); main() prints it with a hint and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace po = boost::program_options;

// Parses args against `options` (+ positional) and handles --help. Returns false if help was printed.
bool parse(const std::string& command, const std::string& synopsis, const std::vector<std::string>& args,
           const po::options_description& options, const po::positional_options_description& positional,
           po::variables_map& vm);

// A byte count from the command line: plain integer bytes or a size with a unit ("48KiB").
std::uint64_t parse_bytes_flag(const std::string& flag, const std::string& text);

// The --threads of `command`: 1 to 1024, or 0 (the default) for every core the process may use (OpenMP's count:
// OMP_NUM_THREADS where set); UsageError otherwise.
int threads_flag(const std::string& command, int value);
inline constexpr const char* kThreadsHelp = "worker threads, 0: every core (results do not depend on it)";

// UsageError for --json with --csv: `command` writes one format.
void check_output_format(const std::string& command, const po::variables_map& vm);

// Writes `text` to `path` (replacing it); UsageError "memhier COMMAND: cannot write PATH: REASON" where it cannot.
void write_text(const std::string& command, const std::filesystem::path& path, const std::string& text);

// One field of a --csv row (RFC 4180): in double quotes, its own doubled, where it holds a comma, a quote or a line
// break, as a C++ kernel's name does ("void gemm<float, 128>"); else as it is.
std::string csv_field(std::string_view text);

// A value as one YAML scalar in double quotes, whatever it holds ("8 # x", a newline, "{a: 1}"): what sweep's --vary
// values and validate's record block write into YAML reaches its key as given.
std::string yaml_quoted(const std::string& value);
// What an accuracy record (AccuracyRecord) says: "kernel time MAPE 6.0% over the 46 suite cases of
// validate/results/h100-2026-11-28b-suite, 46 within 25%, worst histogram_shared n=1<<24 seed=7 blocks=1024: -19.9%".
std::string record_text(const AccuracyRecord& r);
// The model's error on record for `arch`, as `predict` shows it: its own record; for a what-if that inherits one,
// that the error was measured on the unchanged GPU; or that none is (no suite run on that GPU is committed).
std::string error_on_record(const Arch& arch);
// For a prediction bound by `bound` (Prediction::bound) on `arch`, its own record's cases bound there: "of them bound
// by dram, as this kernel is: 19 cases, MAPE 8.4%, from -19.6% to +12.9%"; empty without an own record.
std::string error_on_record_bound(const Arch& arch, const std::string& bound);
// The record as JSON: null where `arch` has none; "own" false for an inherited one (own_accuracy_record()), whose
// measured_on names the GPU it was measured on.
nlohmann::json record_json(const Arch& arch);

}  // namespace memhier::cli

namespace memhier::cli {
// A Python interpreter with matplotlib for the plot scripts: $MEMHIER_PYTHON, else the first of python3 on PATH and
// /usr/bin/python3 that imports matplotlib; empty when there is none.
std::string plot_python();
}  // namespace memhier::cli
