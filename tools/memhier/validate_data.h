#pragma once
// Reading a validation results folder (validate/results/<gpu>-<date>/), as validate/gpu/run_suite.sh and
// run_capture.sh write it: suite/timings.jsonl, suite/ncu_{cold,warm}.csv with suite/once_{cold,warm}.jsonl giving the
// launch order, and capture/traces/*.mht. Errors name the file and line.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace memhier::cli {

struct MeasuredCase {
  std::string id;      // kernel and parameters, as `memhier-suite --list` prints them
  std::string kernel;  // traces/examples/<kernel>.yaml
  std::string params;  // space-separated NAME=EXPR
  std::string regime;
  bool warm = false;
  int launches_per_run = 1;
  double median_s = 0, p10_s = 0, p90_s = 0;
  std::string gpu;
  std::map<std::string, double> ncu;  // metric -> value, summed over the counted run's launches
  std::filesystem::path trace;        // captured trace, when the folder has one
};

struct Results {
  std::filesystem::path dir;
  std::string gpu;
  std::vector<MeasuredCase> cases;
};

Results load_results(const std::filesystem::path& dir);

// The file-name form of a case id used for captured traces ("strided_copy n=1<<22 stride=2" ->
// "strided_copy_n-1__22_stride-2"), as run_capture.sh names them.
std::string case_file_name(const std::string& id);

}  // namespace memhier::cli
