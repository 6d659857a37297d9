// Weighted linear least squares: unknowns x = [overhead, scale_r1, scale_r2, ...]; row i: launches_i in the overhead
// column and bound_seconds_i in its resource's column; both sides divided by measured_i so the fit minimizes relative
// error (a 5 us kernel counts as much as a 5 ms one).
#include "memhier/calibrate.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "memhier/error.h"

namespace memhier {

CalibrationFit fit_timing(const std::vector<TimingMeasurement>& m, double current_launch_overhead, int min_cases) {
  std::map<std::string, int> count;
  for (const auto& t : m)
    if (t.measured_seconds > 0 && t.bound_seconds > 0 && t.bound != "latency") ++count[t.bound];
  std::vector<std::string> resources;
  for (const auto& [r, n] : count)
    if (n >= min_cases) resources.push_back(r);
  std::vector<const TimingMeasurement*> used;
  for (const auto& t : m)
    if (t.measured_seconds > 0 && t.bound_seconds > 0 &&
        std::find(resources.begin(), resources.end(), t.bound) != resources.end())
      used.push_back(&t);
  if (used.size() < resources.size() + 1)
    throw std::runtime_error(
        "calibrate: too few measurements bound by a throughput resource to fit (need one more "
        "than the resources fitted)");
  const auto rows = static_cast<Eigen::Index>(used.size());
  const auto cols = static_cast<Eigen::Index>(resources.size() + 1);
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(rows, cols);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(rows);
  CalibrationFit fit;
  double before = 0;
  for (Eigen::Index i = 0; i < rows; ++i) {
    const TimingMeasurement& t = *used[static_cast<std::size_t>(i)];
    const auto col = std::find(resources.begin(), resources.end(), t.bound) - resources.begin() + 1;
    a(i, 0) = t.launches / t.measured_seconds;
    a(i, col) = t.bound_seconds / t.measured_seconds;
    const double e = (t.launches * current_launch_overhead + t.bound_seconds) / t.measured_seconds - 1;
    before += e * e;
  }
  const Eigen::VectorXd x = a.colPivHouseholderQr().solve(b);
  fit.launch_overhead_seconds = x(0);
  for (std::size_t r = 0; r < resources.size(); ++r) {
    fit.scale[resources[r]] = x(static_cast<Eigen::Index>(r + 1));
    fit.cases[resources[r]] = count[resources[r]];
  }
  const Eigen::VectorXd residual = a * x - b;
  for (Eigen::Index i = 0; i < rows; ++i)
    fit.residuals.emplace_back(used[static_cast<std::size_t>(i)]->name, residual(i));
  fit.rms_relative_error_before = std::sqrt(before / static_cast<double>(rows));
  fit.rms_relative_error_after = std::sqrt(residual.squaredNorm() / static_cast<double>(rows));
  return fit;
}

bool replace_arch_value(std::string& text, const std::string& section, const std::string& key, const std::string& value,
                        const std::string& note) {
  const std::string prefix = "  " + key + ":";
  std::istringstream in(text);
  std::ostringstream out;
  std::string line, current;
  bool done = false, replacing = false;
  while (std::getline(in, line)) {
    const std::size_t indent = line.find_first_not_of(' ');
    const bool comment_only = indent != std::string::npos && line[indent] == '#';
    if (replacing && comment_only && indent > 2) continue;  // the replaced comment's continuation
    replacing = false;
    if (!line.empty() && line[0] != ' ' && line[0] != '#') current = line.substr(0, line.find(':'));
    if (!done && current == section && line.rfind(prefix, 0) == 0) {
      line = fmt::format("{} {:<27}# {}", prefix, value, note);
      done = replacing = true;
    }
    out << line << "\n";
  }
  if (done) text = out.str();
  return done;
}

bool remove_arch_section(std::string& text, const std::string& section, const std::string& note) {
  std::istringstream in(text);
  std::ostringstream out;
  std::string line;
  bool done = false, removing = false;
  while (std::getline(in, line)) {
    if (removing && !line.empty() && line[0] == ' ') continue;  // a key of the section or its comment
    removing = false;
    const std::size_t colon = line.find(':');
    if (!done && colon != std::string::npos && !line.empty() && line[0] != ' ' && line[0] != '#' &&
        line.substr(0, colon) == section) {
      out << "# " << note << "\n";
      done = removing = true;
      continue;
    }
    out << line << "\n";
  }
  if (done) text = out.str();
  return done;
}

}  // namespace memhier
