#pragma once
// Refitting timing constants from measured kernels (Eigen least squares). Each measurement gives the measured time of
// a run, its launch count and the time the current model gives each resource; the fit finds the launch overhead and
// a scale per throughput resource so that  measured ~= launches x overhead + scale[bound] x term[bound],  minimizing
// relative error. A scale s on a resource means its throughput was 1/s of what the arch file says.
#include <map>
#include <string>
#include <vector>

namespace memhier {

struct TimingMeasurement {
  std::string name;
  double measured_seconds = 0;
  int launches = 1;
  std::string bound;         // the resource the current model says binds
  double bound_seconds = 0;  // that resource's time in the current model (all launches of the run)
};

struct CalibrationFit {
  double launch_overhead_seconds = 0;
  std::map<std::string, double> scale;   // resource -> factor on its time (only resources with enough cases)
  std::map<std::string, int> cases;      // resource -> cases bound by it that entered the fit
  double rms_relative_error_before = 0;  // of the cases in the fit, with the current model
  double rms_relative_error_after = 0;
  std::vector<std::pair<std::string, double>> residuals;  // case -> relative error after the fit
};

// Resources bound in fewer than `min_cases` measurements keep scale 1 and their cases are left out.
CalibrationFit fit_timing(const std::vector<TimingMeasurement>& m, double current_launch_overhead, int min_cases = 2);

// In arch YAML text, replaces the value of `section.key` (a key indented two spaces under a top-level `section:`),
// keeping the key's indentation, with `note` as the line's comment; the old comment goes, with the comment-only lines
// that continue it (indented past the key). Comment lines at the key's indentation or less belong to what follows and
// stay. Returns false (text unchanged) where the key is absent.
bool replace_arch_value(std::string& text, const std::string& section, const std::string& key, const std::string& value,
                        const std::string& note);

// In arch YAML text, replaces the top-level mapping `section:` and its indented lines (keys and their comments) with
// the comment line `# note`. Lines after it that are not indented (the next section, a comment at column 0) stay.
// Returns false (text unchanged) where the section is absent.
bool remove_arch_section(std::string& text, const std::string& section, const std::string& note);

}  // namespace memhier
