#pragma once
// Regular expressions over kernel names and case ids (--kernel, validate's --only, the tracer's MEMHIER_TRACE_KERNEL),
// in ECMAScript syntax. libstdc++'s default matcher recurses once a character of the name: '.*gemm.*' overflowed the
// stack on a name of about 50,000 characters, a segmentation fault (in the tracer, inside the user's program). Its
// polynomial mode (a GNU extension: a Thompson NFA without back-references) takes time linear in the name and a stack
// bounded by the pattern, and gives the same answer to "does the pattern occur in the name".
#include <regex>
#include <stdexcept>
#include <string>

namespace memhier {

// Throws std::invalid_argument saying what is wrong with a pattern it cannot take, a back-reference included.
inline std::regex name_regex(const std::string& pattern) {
  try {
#if defined(__GLIBCXX__)
    return std::regex(pattern, std::regex::ECMAScript | std::regex_constants::__polynomial);
#else
    return std::regex(pattern, std::regex::ECMAScript);
#endif
  } catch (const std::regex_error&) {
    try {
      std::regex plain(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& syntax) {
      throw std::invalid_argument(syntax.what());  // the pattern's own error
    }
    throw std::invalid_argument(
        "back-references (\\1) are not taken: names are matched in time linear in their length");
  }
}

}  // namespace memhier
