#pragma once
// Helpers shared by the tests: shipped files and the error a bad input produces.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "memhier/arch_loader.h"
#include "memhier/error.h"

namespace test {

inline std::filesystem::path arch_dir() { return MEMHIER_TEST_ARCH_DIR; }

// A kernel whose warp 1 indexes past its array from its 301st load on (thread 32 first, at x[2300]), warp 0 never:
// an error a block read in parts meets only in a later part.
inline constexpr const char* kLateOutOfBounds = R"(kernel: late
launch: {grid: 1, block: 64, registers: 16}
arrays: {x: {element: 4, length: 1000}}
body:
  - for: k
    to: 400
    do:
      - load: x[threadIdx.x % 32 + k + 2000 * (threadIdx.x / 32) * (k / 300)]
)";

// Equal to 1e-9 relative. doctest's default Approx adds an absolute 1.2e-5 (its scale of 1), which would let any two
// times in microseconds pass.
inline doctest::Approx exactly(double v) { return doctest::Approx(v).epsilon(1e-9).scale(0); }

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The shipped h100.yaml with one line replaced (or removed when `with` is empty); fails the test if `line` is absent.
inline std::string h100_with(const std::string& line, const std::string& with) {
  std::string text = read_text(arch_dir() / "h100.yaml");
  auto at = text.find(line);
  REQUIRE_MESSAGE(at != std::string::npos, "fixture line not found: " << line);
  auto end = text.find('\n', at);
  text.replace(at, end - at, with);
  return text;
}

// Loads `yaml` and returns the InputError it must raise.
inline memhier::InputError load_error(const std::string& yaml, const std::string& label = "bad.yaml") {
  try {
    memhier::load_arch_string(yaml, label);
  } catch (const memhier::InputError& e) {
    return e;
  }
  FAIL("expected an InputError");
  return memhier::InputError({}, "", "unreachable");
}

}  // namespace test
