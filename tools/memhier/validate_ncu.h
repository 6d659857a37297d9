#pragma once
// `memhier validate --ncu REPORT.csv TRACE...`: predictions for the user's own program against its ncu profile,
// launch by launch (GPU time and the counters with an ncu counterpart).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "memhier/arch.h"
#include "memhier/sim.h"
#include "memhier/timing.h"
#include "ncu_csv.h"

namespace memhier::cli {

// A kernel's name as both sides can give it, reduced to its identifier: ncu's demangled "void at::native::
// vectorized_elementwise_kernel<4, ...>(int, ...)" and "<unnamed>::coalesced_copy(const float *, float *, long long)"
// -> "vectorized_elementwise_kernel", "coalesced_copy", as a captured trace or a description names them.
std::string kernel_base_name(const std::string& name);
// ncu's "(256, 1, 1)"; nullopt for anything else.
std::optional<Dim3> parse_ncu_dim(const std::string& text);
// The metrics to give ncu --metrics: gpu__time_duration.sum and each counter's (sim_counter_table()), comma-separated.
std::string ncu_metric_list();

// One simulated launch: the trace it came from, its number there, its counts and prediction.
struct NcuRun {
  std::string trace;
  std::size_t launch_index = 0;
  KernelSim sim;
  Prediction prediction;
};
// The comparison of `profiled` (the CSV's launches in ID order) with `runs` (the traces' launches in order, as many):
// per launch its GPU time (measured, predicted, error) and counters; a summary of the time MAPE and each counter's
// traffic-weighted error. InputError naming the CSV line where a pair is not the same kernel, grid and block, or a
// unit is no time unit or a display-scaled one.
nlohmann::json compare_with_ncu(const Arch& arch, const std::vector<NcuLaunch>& profiled,
                                const std::vector<NcuRun>& runs, const std::filesystem::path& csv);

int run_validate_ncu(const std::vector<std::string>& args);

}  // namespace memhier::cli
