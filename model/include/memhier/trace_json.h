#pragma once
// KernelLaunch and TraceCounts as JSON: the .mht kernel sections and index, and `trace info --json`; JSON as text.
#include <nlohmann/json.hpp>

#include "memhier/trace.h"

namespace memhier {

nlohmann::json window_to_json(const AccessPolicyWindow& w);
nlohmann::json launch_to_json(const KernelLaunch& launch);
// Throws std::invalid_argument naming the offending field when `j` is not a valid launch.
KernelLaunch launch_from_json(const nlohmann::json& j);
nlohmann::json counts_to_json(const TraceCounts& counts);
TraceCounts counts_from_json(const nlohmann::json& j);
// `j` as text (`indent` as nlohmann::json::dump's): bytes that are not UTF-8, as in a Latin-1 file or kernel name,
// become U+FFFD instead of ending the program in nlohmann's type_error 316. Every JSON the project writes goes
// through it.
std::string json_text(const nlohmann::json& j, int indent = -1);
// `s` as json_text() writes it: each sequence that is not UTF-8 replaced by U+FFFD (a Latin-1 kernel name as a .mht
// stores it); `s` itself when it is UTF-8.
std::string utf8_text(const std::string& s);

}  // namespace memhier
