#pragma once
// KernelLaunch and TraceCounts as JSON: the .mht kernel sections and index, and `trace info --json`.
#include <nlohmann/json.hpp>

#include "memhier/trace.h"

namespace memhier {

nlohmann::json window_to_json(const AccessPolicyWindow& w);
nlohmann::json launch_to_json(const KernelLaunch& launch);
// Throws std::invalid_argument naming the offending field when `j` is not a valid launch.
KernelLaunch launch_from_json(const nlohmann::json& j);
nlohmann::json counts_to_json(const TraceCounts& counts);
TraceCounts counts_from_json(const nlohmann::json& j);

}  // namespace memhier
