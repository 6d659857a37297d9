#pragma once
#include <string>
#include <vector>

namespace memhier::cli {

int run_archs(const std::vector<std::string>& args);
int run_occupancy(const std::vector<std::string>& args);
int run_trace(const std::vector<std::string>& args);
int run_capture(const std::vector<std::string>& args);  // trace capture
int run_simulate(const std::vector<std::string>& args);
int run_predict(const std::vector<std::string>& args);
int run_validate(const std::vector<std::string>& args);
int run_calibrate(const std::vector<std::string>& args);
int run_sweep(const std::vector<std::string>& args);

}  // namespace memhier::cli
