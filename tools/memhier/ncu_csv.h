#pragma once
// Reading Nsight Compute's CSV exports: the details page (a row per launch and metric: ID, Metric Name, Metric Unit,
// Metric Value, as `ncu --csv --metrics LIST` prints it) and the raw page (a row per launch, a column per metric, the
// units in the row under the header: `ncu --csv --page raw`). Values keep ncu's unit (see NcuLaunch::units); errors
// name the file and line.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace memhier::cli {

// One kernel launch of an ncu CSV: its ID, the kernel name, grid and block as ncu writes them ("(256, 1, 1)"), and
// each metric's value (thousands separators removed), unit and CSV line.
struct NcuLaunch {
  std::size_t id = 0;
  int line = 0;  // its first row; 0: no row has this ID
  std::string kernel, grid, block;
  std::map<std::string, double> metrics;
  std::map<std::string, std::string> units;
  std::map<std::string, int> lines;
};

// The file an ncu CSV is read from: `file`, or where it does not exist and `file`.zst does, that one. A file named
// *.zst is zstd-compressed (committed GPU runs keep their ncu CSVs so: validate/pack_results.sh); errors name the
// file read, and the lines of its text.
std::filesystem::path ncu_csv_file(const std::filesystem::path& file);

// The launches of an ncu CSV (or of a zstd-compressed one: ncu_csv_file()), indexed by ID (IDs no row has are left
// with line 0). Lines before the header (ncu's own messages) are skipped. InputError naming the file and line for a
// file without a header, a value of a metric that is no count of 0 or more, an ID that is no number or past a million.
std::vector<NcuLaunch> read_ncu_csv(const std::filesystem::path& file);

// The fields of one CSV line (RFC 4180 quotes, as ncu writes them).
std::vector<std::string> csv_fields(const std::string& line);

}  // namespace memhier::cli
