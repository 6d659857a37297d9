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

// One kernel launch of an ncu CSV export (the details page: a row per launch and metric, as `ncu --csv --metrics
// LIST` prints it): its ID, the kernel name, grid and block as ncu writes them ("(256, 1, 1)"), and each metric's
// value (thousands separators removed), unit and CSV line.
struct NcuLaunch {
  std::size_t id = 0;
  int line = 0;  // its first row; 0: no row has this ID
  std::string kernel, grid, block;
  std::map<std::string, double> metrics;
  std::map<std::string, std::string> units;
  std::map<std::string, int> lines;
};
// The launches of an ncu CSV, indexed by ID (IDs no row has are left with line 0). InputError naming the file and
// line for a file without the header, a value that is no count of 0 or more, an ID past a million.
std::vector<NcuLaunch> read_ncu_csv(const std::filesystem::path& file);
// The file-name form of a case id used for captured traces ("strided_copy n=1<<22 stride=2" ->
// "strided_copy_n-1__22_stride-2"), as run_capture.sh names them.
std::string case_file_name(const std::string& id);

}  // namespace memhier::cli
