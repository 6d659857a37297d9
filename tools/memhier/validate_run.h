#pragma once
// `memhier validate`: re-predicts every measured case (from its kernel description, and from its captured trace when
// there is one), compares with the measured time and ncu counters, and summarizes the error.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "memhier/arch.h"
#include "memhier/sim.h"
#include "validate_data.h"

namespace memhier::cli {

struct CasePrediction {
  double seconds = 0;  // the counted run: sum over its launches
  std::string bound;
  double bound_seconds = 0;   // the launches' times less their overhead: what calibrate scales by the bound resource
  double launch_seconds = 0;  // the launches' overheads (an idle-GPU launch pays launch.idle_overhead)
  int launches = 0;
  SimCounters counters;                 // summed over the counted run's launches
  bool windows = false;                 // a counted launch had an L2 access-policy window
  std::map<std::string, double> terms;  // each timing term's seconds, summed over the launches
};

struct CaseResult {
  MeasuredCase measured;
  std::optional<CasePrediction> described;  // from traces/examples/<kernel>.yaml with the case's parameters
  std::optional<CasePrediction> traced;     // from the captured trace
  // What the captured trace cannot show that the description has (empty: nothing known): constant-bank loads, which
  // the Compute Sanitizer does not report.
  std::string trace_blind_spot;
  std::string error;  // why a prediction is missing
};

struct ValidateOptions {
  std::filesystem::path examples;  // folder of the kernel descriptions
  int threads = 1;
  std::string only;                 // regex over case ids; empty: all
  std::filesystem::path sim_cache;  // where predictions are kept and reused (validate_cache.h); empty: none
};

std::vector<CaseResult> run_validation(const Arch& arch, const Results& results, const ValidateOptions& options);

// Everything the report shows: per case times and errors, per counter predicted vs measured, and the summary
// (MAPE, worst case, correlation of log times, per-counter error) that --max-mape and the ratchet read.
nlohmann::json validation_report(const Arch& arch, const Results& results, const std::vector<CaseResult>& cases);

// A baseline file (--baseline): what --write-baseline wrote, or its summary alone. InputError naming the file and the
// JSON pointer of an entry the ratchet could not read, or where the file holds no error to compare with.
nlohmann::json read_baseline(const std::filesystem::path& file);

// Compares `report`'s summary with a baseline summary; returns the regressions (empty: no metric got worse).
std::vector<std::string> ratchet_regressions(const nlohmann::json& report, const nlohmann::json& baseline);

// The accuracy record this run's report gives (rounded as a record is), naming `run`; nullopt where no case was
// predicted from its description.
std::optional<AccuracyRecord> record_of_run(const std::string& run, const nlohmann::json& report);
// A record as an arch file's `accuracy:` block, for --check-record to offer where the file's differs.
std::string record_yaml(const AccuracyRecord& r);
// `arch`'s accuracy record (AccuracyRecord) against this run's report, where the record names the run (`results_dir`
// is the folder its `accuracy.run` names, compared by folder name): what differs, one line a key (empty: the record
// says what the run gives, to its rounding: 0.1 point of MAPE, 0.1% of the worst error). nullopt where the record
// names another run or there is none.
std::optional<std::vector<std::string>> record_differences(const Arch& arch, const std::filesystem::path& results_dir,
                                                           const nlohmann::json& report);

}  // namespace memhier::cli
