#pragma once
// "did you mean" hints for unknown keys and names.
#include <string>
#include <string_view>
#include <vector>

namespace memhier {

// " (did you mean 'x'?)" for the closest candidate within a small edit distance, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates);

}  // namespace memhier
