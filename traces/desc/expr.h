#pragma once
// Integer index expressions of kernel descriptions, evaluated with muparser under C integer rules: literals are
// integers, `/` truncates, `%` is C's remainder, and comparisons, logic, shifts and bit operators behave as in CUDA C.
// Variables are 32-lane vectors (one value per thread of a warp); an expression is evaluated one lane at a time, or
// over all lanes at once by running muparser's compiled bytecode a step at a time on 32-lane vectors (eval_lanes).
#include <muParserBase.h>

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "memhier/error.h"
#include "memhier/trace.h"

namespace memhier::desc {

using LaneValues = std::array<double, kWarpSize>;

// The largest magnitude a value may take (2^53): beyond it doubles skip integers, and evaluation raises an error.
inline constexpr double kMaxExactValue = 9007199254740992.0;

// out = v, a whole warp's integers as doubles (the inverse of evaluation's conversion to integers, expr.cpp): within
// [-2^51, 2^51) on their bits, which the compiler vectorizes where x86-64-v2 has no 64-bit integer conversion (a
// let's conversion lane by lane cost reduction_shared's description 2% of its host instructions); others lane by lane.
void to_doubles(const std::array<std::int64_t, kWarpSize>& v, LaneValues& out);

// Named variables and their per-lane values.
class Scope {
 public:
  Scope();
  // Returns the slot of `name`, creating it when absent.
  int declare(const std::string& name);
  [[nodiscard]] int find(const std::string& name) const;  // -1 when absent
  [[nodiscard]] std::vector<std::string_view> names() const;
  [[nodiscard]] int size() const { return static_cast<int>(m_names.size()); }  // variables declared
  LaneValues& lanes(int slot) { return m_values[static_cast<std::size_t>(slot)]; }
  void set_uniform(int slot, double v) { m_values[static_cast<std::size_t>(slot)].fill(v); }
  double* current(int slot) { return &m_current[static_cast<std::size_t>(slot)]; }
  // The slot whose current() is `p`, or -1.
  [[nodiscard]] int slot_of(const double* p) const {
    const std::ptrdiff_t i = p - m_current.get();
    return i >= 0 && i < static_cast<std::ptrdiff_t>(m_names.size()) ? static_cast<int>(i) : -1;
  }
  void load_lane(int slot, int lane) {
    m_current[static_cast<std::size_t>(slot)] =
        m_values[static_cast<std::size_t>(slot)][static_cast<std::size_t>(lane)];
  }

 private:
  static constexpr std::size_t kMaxVariables = 512;
  std::vector<std::string> m_names;
  std::vector<LaneValues> m_values;
  std::unique_ptr<double[]> m_current;  // muparser binds to these addresses, so they never move
};

// Raised by evaluation (division by zero, non-integral or huge values), with the lane it happened in.
struct EvalError {
  std::string message;
  int lane;
};

class Expression {
 public:
  // Compiles `text` against `scope`; errors name `where` (the YAML scalar) and `key`.
  Expression(const std::string& text, Scope& scope, SourceLocation where, std::string key);
  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;
  ~Expression();

  // Value in one lane. Throws EvalError.
  [[nodiscard]] std::int64_t eval_lane(Scope& scope, int lane) const;
  // Values in the lanes of `mask` (out[lane]); throws the EvalError of the lowest lane that fails, as eval_lane()
  // lane by lane would.
  void eval_lanes(Scope& scope, std::uint32_t mask, std::span<std::int64_t, kWarpSize> out) const;
  // Value with every variable it uses uniform across lanes (parameters, launch shape). Throws InputError.
  [[nodiscard]] std::int64_t eval_uniform(Scope& scope) const;
  [[nodiscard]] const std::string& text() const { return m_text; }
  [[nodiscard]] const SourceLocation& where() const { return m_where; }
  [[nodiscard]] const std::string& key() const { return m_key; }
  [[nodiscard]] const std::vector<int>& used_slots() const { return m_used; }
  // The slot of the variable when the expression is that variable's name alone (`x[i]`'s `i`), whose value in a lane
  // is the variable's there: a caller may read it without evaluating. -1 otherwise.
  [[nodiscard]] int variable() const { return m_variable; }
  // Whether eval_lanes() runs all lanes at once (else it evaluates them one by one).
  [[nodiscard]] bool vectorized() const { return !m_steps.empty(); }

 private:
  // One step of the expression over all 32 lanes at once (vector_steps()).
  struct Step {
    enum class Kind : std::uint8_t { value, variable, call };
    Kind kind = Kind::value;
    int slot = -1;     // variable: its scope slot
    int args = 0;      // call: operands taken from the stack (1 to 4)
    double value = 0;  // value: the constant
    // call: on the stack's top `args` entries (their lanes), into the first one's lanes of its own
    void (*apply)(const double* const* in, double* out, std::uint32_t mask) = nullptr;
  };
  // muparser's compiled form (its bytecode, a stack program) as 32-lane steps; empty where it holds a token this
  // does not run (the ternary ?:), and the expression is evaluated lane by lane.
  void vector_steps(const Scope& scope);
  static constexpr std::size_t kStackDepth = 16;  // deeper expressions are evaluated lane by lane
  [[nodiscard]] bool eval_vector(Scope& scope, std::uint32_t mask, std::span<std::int64_t, kWarpSize> out) const;

  std::unique_ptr<mu::ParserBase> m_parser;
  std::vector<Step> m_steps;
  std::vector<int> m_used;
  int m_variable = -1;
  std::string m_text;
  SourceLocation m_where;
  std::string m_key;
};

}  // namespace memhier::desc
