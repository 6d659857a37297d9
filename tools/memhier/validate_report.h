#pragma once
// Writes a validation report folder: report.json, report.csv (one row per case) and report.html with plots made by
// validate/report/plots.py (matplotlib). Without python3/matplotlib the HTML says so and keeps the tables.
#include <filesystem>
#include <nlohmann/json.hpp>

namespace memhier::cli {

void write_report(const nlohmann::json& report, const std::filesystem::path& out, bool plots,
                  const std::filesystem::path& plot_script);

}  // namespace memhier::cli
