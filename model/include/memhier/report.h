#pragma once
// Machine-readable forms of library results. JSON field names are the YAML keys / stat names, values in base units
// (bytes, bytes/s, Hz, seconds, cycles).
#include <nlohmann/json.hpp>

#include "memhier/arch.h"
#include "memhier/occupancy.h"
#include "memhier/sim.h"

namespace memhier {

nlohmann::json arch_to_json(const Arch& arch);
nlohmann::json occupancy_to_json(const Occupancy& occupancy);
// The L2 residency control a launch ran with: set_aside_requested_bytes, set_aside_granted_bytes, persisting_ways,
// dirty_ways (dirty lines a set may hold; 0: every way), windows (as in a launch's JSON), left_out.
nlohmann::json residency_to_json(const L2Residency& residency);

}  // namespace memhier
