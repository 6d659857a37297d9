// libFuzzer target for kernel descriptions' index expressions (traces/desc/expr.h): any text compiles or fails with an
// InputError, never a crash; and for lane values and an active mask taken from the input, a warp's lanes evaluated at
// once (Expression::eval_lanes, muparser's bytecode run over 32 lanes) give exactly what evaluating them one by one
// gives (eval_lane): the same values, or the same first failing lane with the same message. A difference aborts.
//
// Input: the expression up to the first newline (at most 256 bytes), then 4 bytes of mask (little-endian; all lanes
// when short), then for each of the variables a, b, c, d and each lane 3 bytes: a 16-bit value and a shift of 0 to 37
// (values up to 2^52, as variables hold at most 2^53).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../traces/desc/expr.h"
#include "memhier/error.h"

namespace {

using memhier::kWarpSize;
using memhier::desc::EvalError;
using memhier::desc::Expression;
using memhier::desc::Scope;

struct Outcome {
  std::array<std::int64_t, kWarpSize> values{};
  int lane = -1;  // the failing lane, -1 when none failed
  std::string message;
};

[[noreturn]] void differ(const std::string& text, std::uint32_t mask, const char* what, int lane) {
  std::fprintf(stderr, "expr_fuzz: '%s' mask %08x: lane-by-lane and warp-wide evaluation differ (%s, lane %d)\n",
               text.c_str(), mask, what, lane);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* newline = static_cast<const std::uint8_t*>(std::memchr(data, '\n', std::min<std::size_t>(size, 257)));
  if (newline == nullptr) return 0;
  const std::string text(data, newline);
  const std::uint8_t* p = newline + 1;
  const std::uint8_t* end = data + size;
  auto byte = [&]() -> std::uint8_t { return p < end ? *p++ : 0; };
  std::uint32_t mask = 0xFFFFFFFFU;
  if (end - p >= 4) {
    mask = 0;
    for (int i = 0; i < 4; ++i) mask |= static_cast<std::uint32_t>(byte()) << (8 * i);
  }
  Scope scope;
  for (const char* name : {"a", "b", "c", "d"}) {
    const int slot = scope.declare(name);
    for (std::size_t l = 0; l < kWarpSize; ++l) {
      const auto v = static_cast<std::int16_t>(byte() | byte() << 8);
      const int shift = byte() % 38;
      scope.lanes(slot)[l] = static_cast<double>(static_cast<std::int64_t>(v) * (std::int64_t{1} << shift));
    }
  }
  std::unique_ptr<Expression> e;
  try {
    e = std::make_unique<Expression>(text, scope, memhier::SourceLocation{"fuzz"}, "index");
  } catch (const memhier::InputError&) {
    return 0;
  }
  Outcome one, all;
  for (std::uint32_t left = mask; left != 0 && one.lane < 0; left &= left - 1) {
    const int lane = std::countr_zero(left);
    try {
      one.values[static_cast<std::size_t>(lane)] = e->eval_lane(scope, lane);
    } catch (const EvalError& err) {
      one.lane = err.lane;
      one.message = err.message;
    }
  }
  try {
    e->eval_lanes(scope, mask, all.values);
  } catch (const EvalError& err) {
    all.lane = err.lane;
    all.message = err.message;
  }
  if (one.lane != all.lane) differ(text, mask, "failing lane", all.lane);
  if (one.lane >= 0) {
    if (one.message != all.message) differ(text, mask, "message", one.lane);
    return 0;
  }
  for (std::uint32_t left = mask; left != 0; left &= left - 1) {
    const auto lane = static_cast<std::size_t>(std::countr_zero(left));
    if (one.values[lane] != all.values[lane]) differ(text, mask, "value", static_cast<int>(lane));
  }
  return 0;
}
