#pragma once
// Machine-readable forms of library results. JSON field names are the YAML keys / stat names, values in base units
// (bytes, bytes/s, Hz, seconds, cycles).
#include <nlohmann/json.hpp>

#include "memhier/arch.h"
#include "memhier/occupancy.h"

namespace memhier {

nlohmann::json arch_to_json(const Arch& arch);
nlohmann::json occupancy_to_json(const Occupancy& occupancy);

}  // namespace memhier
