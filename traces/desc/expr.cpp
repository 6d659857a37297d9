// muparser configured for C integer arithmetic. Values travel as doubles (muparser's type) but every operator keeps
// them integral; magnitudes are limited to 2^53 so they stay exact.
#include "expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>

#include "memhier/suggest.h"
#include "memhier/urand.h"

namespace memhier::desc {
namespace {

thread_local const char* t_error = nullptr;  // set by an operator, checked after Eval

std::int64_t as_int(double v) { return static_cast<std::int64_t>(v); }
double flag(const char* message) {
  if (t_error == nullptr) t_error = message;
  return 0.0;
}

// Every value stays within +-2^53, where doubles hold integers exactly: variables and literals are (as_int() of one
// is then exact and defined), and an operator whose result would not be raises an error rather than go on with a
// rounded value ((2^30 * 2^30 + 1) & 3 would give 0, not 1).
constexpr char kOutside[] = "a value outside +-2^53 on the way (index arithmetic is exact only up to 2^53)";
double within(double r) { return std::fabs(r) <= kMaxExactValue ? r : flag(kOutside); }

double add(double a, double b) { return within(a + b); }
double sub(double a, double b) { return within(a - b); }
double mul(double a, double b) { return within(a * b); }
double div(double a, double b) {
  if (b == 0) return flag("division by zero");
  const std::int64_t q = as_int(a) / as_int(b);  // C truncation, on purpose
  return static_cast<double>(q);
}
double mod(double a, double b) {
  return b == 0 ? flag("remainder by zero") : static_cast<double>(as_int(a) % as_int(b));
}
double shl(double a, double b) {  // a * 2^b is exact in double
  return (b < 0 || b > 62) ? flag("shift count outside 0..62") : within(std::ldexp(a, static_cast<int>(b)));
}
double shr(double a, double b) {
  return (b < 0 || b > 62) ? flag("shift count outside 0..62") : static_cast<double>(as_int(a) >> as_int(b));
}
double band(double a, double b) { return within(static_cast<double>(as_int(a) & as_int(b))); }
double bor(double a, double b) { return within(static_cast<double>(as_int(a) | as_int(b))); }
double bxor(double a, double b) { return within(static_cast<double>(as_int(a) ^ as_int(b))); }
double land(double a, double b) { return (a != 0 && b != 0) ? 1 : 0; }
double lor(double a, double b) { return (a != 0 || b != 0) ? 1 : 0; }
double lt(double a, double b) { return a < b ? 1 : 0; }
double gt(double a, double b) { return a > b ? 1 : 0; }
double le(double a, double b) { return a <= b ? 1 : 0; }
double ge(double a, double b) { return a >= b ? 1 : 0; }
double eq(double a, double b) { return a == b ? 1 : 0; }
double ne(double a, double b) { return a != b ? 1 : 0; }
double neg(double a) { return -a; }
double lnot(double a) { return a == 0 ? 1 : 0; }
double fmin2(double a, double b) { return std::min(a, b); }
double fmax2(double a, double b) { return std::max(a, b); }
double fabs1(double a) { return std::fabs(a); }
double ceil_div(double a, double b) {
  if (b <= 0) return flag("ceil_div by a non-positive number");
  const std::int64_t q = as_int(a) / as_int(b);
  return static_cast<double>(q + ((as_int(a) % as_int(b)) > 0 ? 1 : 0));
}
double urand4(double seed, double k, double lo, double hi) {
  if (hi <= lo) return flag("urand needs lo < hi");
  if (seed < 0 || k < 0) return flag("urand needs a non-negative seed and counter");
  return static_cast<double>(
      urand(static_cast<std::uint64_t>(seed), static_cast<std::uint64_t>(k), as_int(lo), as_int(hi)));
}

// The operators and functions above over the lanes of a warp, for Expression::eval_vector(): `in` points to their
// operands' 32 lanes (in[0] the first: a variable's own lanes, or an earlier result), the result goes to `out`, which
// is in[0] or lanes of its own. Those that fail only on a result past 2^53 run in every lane (a plain loop; a lane
// past it, active or not, sends the expression to evaluation lane by lane, which raises the error only where an
// active lane has it); those that fail on their operands (division by zero, shift counts, ceil_div's divisor, urand's
// range) only in the active lanes, as evaluation lane by lane would, the others keeping their first operand.
using Operands = const double* const*;
template <double (*F)(double)>
void all_lanes1(Operands in, double* out, std::uint32_t /*mask*/) {
  for (std::size_t l = 0; l < kWarpSize; ++l) out[l] = F(in[0][l]);
}
template <double (*F)(double, double)>
void all_lanes2(Operands in, double* out, std::uint32_t /*mask*/) {
  for (std::size_t l = 0; l < kWarpSize; ++l) out[l] = F(in[0][l], in[1][l]);
}
// Whether a value is past the magnitude whose bits are `limit` (2^53 unless said), or NaN, on its bits, as a top bit
// set: a magnitude's bits (sign cleared) order as the magnitudes do, NaN above them all, so limit - bits goes
// negative exactly past it. Or'ed over a warp, it checks the lanes at once where a test lane by lane would keep the
// compiler from vectorizing. (A double template parameter instead: clang 14, which builds the fuzz harness, has none.)
constexpr std::uint64_t kExactBits = std::bit_cast<std::uint64_t>(kMaxExactValue);
std::uint64_t past_exact(double r, std::uint64_t limit = kExactBits) {
  constexpr std::uint64_t kMagnitude = ~std::uint64_t{0} >> 1U;
  return limit - (std::bit_cast<std::uint64_t>(r) & kMagnitude);
}
// add, sub and mul without the check within() makes lane by lane: the warp is checked at once (past_exact).
template <double (*F)(double, double)>
void all_lanes_within(Operands in, double* out, std::uint32_t /*mask*/) {
  std::uint64_t past = 0;
  for (std::size_t l = 0; l < kWarpSize; ++l) {
    const double r = F(in[0][l], in[1][l]);
    past |= past_exact(r);
    out[l] = r;
  }
  if ((past >> 63U) != 0) flag(kOutside);
}
// Whether every lane of `v` is within the magnitude whose bits are `limit`.
bool within_all(const double* v, std::uint64_t limit = kExactBits) {
  std::uint64_t past = 0;
  for (std::size_t l = 0; l < kWarpSize; ++l) past |= past_exact(v[l], limit);
  return (past >> 63U) == 0;
}
// The 32 lanes of `v` (integers) as integers; false if one is past 2^53. Within +-(2^51 - 1) (the common case), on
// their bits: adding 1.5 x 2^52 gives a double in [2^52, 2^53), exact there, whose low bits hold the integer plus
// 2^51, which the compiler vectorizes where it does not a conversion (x86-64-v2 has none to 64-bit integers).
constexpr double kShifter = 6755399441055744.0;  // 1.5 x 2^52: integers below 2^51 sit in its low bits
bool to_integers(const double* v, std::span<std::int64_t, kWarpSize> out) {
  constexpr std::uint64_t kFastBits = std::bit_cast<std::uint64_t>(2251799813685247.0);  // 2^51 - 1
  if (within_all(v, kFastBits)) {
    for (std::size_t l = 0; l < kWarpSize; ++l)
      out[l] = std::bit_cast<std::int64_t>(v[l] + kShifter) - std::bit_cast<std::int64_t>(kShifter);
    return true;
  }
  if (!within_all(v)) return false;
  for (std::size_t l = 0; l < kWarpSize; ++l) out[l] = static_cast<std::int64_t>(v[l]);
  return true;
}
double plus(double a, double b) { return a + b; }
double minus(double a, double b) { return a - b; }
double times(double a, double b) { return a * b; }
template <double (*F)(double, double)>
void active_lanes2(Operands in, double* out, std::uint32_t mask) {
  if (out != in[0]) std::copy_n(in[0], kWarpSize, out);
  for (; mask != 0; mask &= mask - 1) {
    const auto l = static_cast<std::size_t>(std::countr_zero(mask));
    out[l] = F(in[0][l], in[1][l]);
  }
}
void urand_lanes(Operands in, double* out, std::uint32_t mask) {
  if (out != in[0]) std::copy_n(in[0], kWarpSize, out);
  for (; mask != 0; mask &= mask - 1) {
    const auto l = static_cast<std::size_t>(std::countr_zero(mask));
    out[l] = urand4(in[0][l], in[1][l], in[2][l], in[3][l]);
  }
}

// The lane version of each callback IndexParser defines, by the callback's address as muparser's bytecode holds it.
struct LaneCallback {
  mu::erased_fun_type fun;
  int args;
  void (*apply)(const double* const*, double*, std::uint32_t);
};
template <typename F>
mu::erased_fun_type erased(F* f) {
  return reinterpret_cast<mu::erased_fun_type>(f);
}
const std::vector<LaneCallback>& lane_callbacks() {
  static const std::vector<LaneCallback> table = {
      {erased(add), 2, all_lanes_within<plus>},
      {erased(sub), 2, all_lanes_within<minus>},
      {erased(mul), 2, all_lanes_within<times>},
      {erased(div), 2, active_lanes2<div>},
      {erased(mod), 2, active_lanes2<mod>},
      {erased(shl), 2, active_lanes2<shl>},
      {erased(shr), 2, active_lanes2<shr>},
      {erased(band), 2, all_lanes2<band>},
      {erased(bor), 2, all_lanes2<bor>},
      {erased(bxor), 2, all_lanes2<bxor>},
      {erased(land), 2, all_lanes2<land>},
      {erased(lor), 2, all_lanes2<lor>},
      {erased(lt), 2, all_lanes2<lt>},
      {erased(gt), 2, all_lanes2<gt>},
      {erased(le), 2, all_lanes2<le>},
      {erased(ge), 2, all_lanes2<ge>},
      {erased(eq), 2, all_lanes2<eq>},
      {erased(ne), 2, all_lanes2<ne>},
      {erased(fmin2), 2, all_lanes2<fmin2>},
      {erased(fmax2), 2, all_lanes2<fmax2>},
      {erased(ceil_div), 2, active_lanes2<ceil_div>},
      {erased(neg), 1, all_lanes1<neg>},
      {erased(lnot), 1, all_lanes1<lnot>},
      {erased(fabs1), 1, all_lanes1<fabs1>},
      {erased(urand4), 4, urand_lanes},
  };
  return table;
}

// Whether `name` (a token muparser took for a name) is a whole number, decimal or 0x hex, that integer_literal()
// refused for its size.
bool whole_number(const std::string& name) {
  const bool hex = name.size() > 2 && name[0] == '0' && (name[1] == 'x' || name[1] == 'X');
  return std::all_of(name.begin() + (hex ? 2 : 0), name.end(), [&](char c) {
    return hex ? std::isxdigit(static_cast<unsigned char>(c)) != 0 : std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// Integer literals only: decimal or 0x hex.
int integer_literal(const char* expr, int* pos, double* value) {
  const char* p = expr;
  const bool hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
  const int base = hex ? 16 : 10;
  constexpr auto kMost = static_cast<std::uint64_t>(kMaxExactValue);
  std::uint64_t v = 0;  // stops growing past kMost: the literal is then refused
  int n = hex ? 2 : 0;
  for (;; ++n) {
    const auto c = static_cast<unsigned char>(p[n]);
    const int digit = std::isdigit(c) != 0 ? c - '0' : hex && std::isxdigit(c) != 0 ? std::tolower(c) - 'a' + 10 : -1;
    if (digit < 0) break;
    if (v <= kMost) v = v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(digit);
  }
  if (n == (hex ? 2 : 0)) return 0;
  if (std::isalnum(static_cast<unsigned char>(p[n])) != 0 || p[n] == '.' || p[n] == '_') return 0;  // 1.5, 12ab
  if (v > kMost) return 0;  // not exact: Expression() refuses the token, naming it
  *pos += n;
  *value = static_cast<double>(v);
  return 1;
}

class IndexParser final : public mu::ParserBase {
 public:
  IndexParser() {
    AddValIdent(integer_literal);
    InitCharSets();
    InitFun();
    InitConst();
    InitOprt();
  }
  void InitCharSets() override {
    DefineNameChars("0123456789_.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
    DefineOprtChars("+-*^/?<>=!%&|~");
    DefineInfixOprtChars("-!");
  }
  void InitFun() override {
    DefineFun("min", fmin2);
    DefineFun("max", fmax2);
    DefineFun("abs", fabs1);
    // muparser computes a function of constant arguments once, when it compiles (min(2, 3) becomes 2), and
    // Expression() discards what that raises (its variables are not set yet): ceil_div(8, 0) would become a silent
    // 0. So ceil_div, which can fail, runs at evaluation like the operators (DefineOprt does not fold).
    DefineFun("ceil_div", ceil_div, false);
    DefineFun("urand", urand4, false);
  }
  void InitConst() override {}
  void InitOprt() override {
    EnableBuiltInOprt(false);
    // C precedence, loosest first.
    DefineOprt("||", lor, 1);
    DefineOprt("&&", land, 2);
    DefineOprt("|", bor, 3);
    DefineOprt("^", bxor, 4);
    DefineOprt("&", band, 5);
    DefineOprt("==", eq, 6);
    DefineOprt("!=", ne, 6);
    DefineOprt("<", lt, 7);
    DefineOprt(">", gt, 7);
    DefineOprt("<=", le, 7);
    DefineOprt(">=", ge, 7);
    DefineOprt("<<", shl, 8);
    DefineOprt(">>", shr, 8);
    DefineOprt("+", add, 9);
    DefineOprt("-", sub, 9);
    DefineOprt("*", mul, 10);
    DefineOprt("/", div, 10);
    DefineOprt("%", mod, 10);
    DefineInfixOprt("-", neg, 11);
    DefineInfixOprt("!", lnot, 11);
  }
};

}  // namespace

void to_doubles(const std::array<std::int64_t, kWarpSize>& v, LaneValues& out) {
  constexpr auto kShifterBits = std::bit_cast<std::int64_t>(kShifter);
  std::uint64_t outside = 0;
  for (const std::int64_t x : v) outside |= (static_cast<std::uint64_t>(x) + (std::uint64_t{1} << 51U)) >> 52U;
  if (outside == 0) {
    for (std::size_t l = 0; l < kWarpSize; ++l) out[l] = std::bit_cast<double>(v[l] + kShifterBits) - kShifter;
    return;
  }
  for (std::size_t l = 0; l < kWarpSize; ++l) out[l] = static_cast<double>(v[l]);
}

Scope::Scope() : m_current(std::make_unique<double[]>(kMaxVariables)) {}

int Scope::declare(const std::string& name) {
  const int found = find(name);
  if (found >= 0) return found;
  if (m_names.size() == kMaxVariables) throw std::length_error("more than 512 variables");
  m_names.push_back(name);
  m_values.emplace_back();
  m_values.back().fill(0);
  return static_cast<int>(m_names.size()) - 1;
}

int Scope::find(const std::string& name) const {
  for (std::size_t i = 0; i < m_names.size(); ++i)
    if (m_names[i] == name) return static_cast<int>(i);
  return -1;
}

std::vector<std::string_view> Scope::names() const { return {m_names.begin(), m_names.end()}; }

Expression::Expression(const std::string& text, Scope& scope, SourceLocation where, std::string key)
    : m_parser(std::make_unique<IndexParser>()), m_text(text), m_where(std::move(where)), m_key(std::move(key)) {
  try {
    m_parser->SetExpr(text);
    const mu::varmap_type used = m_parser->GetUsedVar();  // a copy: DefineVar resets the parser's own map
    for (const auto& [name, unused] : used) {
      const int slot = scope.find(name);
      if (slot < 0 && std::isdigit(static_cast<unsigned char>(name[0])) != 0 && whole_number(name))
        throw InputError(
            m_where, m_key,
            fmt::format("{} in '{}' is past 2^53 (index expressions are exact integers up to 2^53)", name, text));
      if (slot < 0 && std::isdigit(static_cast<unsigned char>(name[0])) != 0)
        throw InputError(
            m_where, m_key,
            fmt::format("'{}' in '{}' is not an integer: index expressions use integer arithmetic", name, text));
      if (slot < 0)
        throw InputError(m_where, m_key,
                         fmt::format("unknown name '{}' in '{}'{}", name, text, did_you_mean(name, scope.names())));
      m_parser->DefineVar(name, scope.current(slot));
      m_used.push_back(slot);
    }
    t_error = nullptr;
    (void)m_parser->Eval();  // compiles now, so syntax errors surface at load time
    int values = 0;
    (void)m_parser->Eval(values);  // compiled: evaluates again for the count of results
    t_error = nullptr;
    // muparser reads "a, b" as two results and returns the last: x[i, j] would silently index by j.
    if (values != 1)
      throw InputError(m_where, m_key,
                       fmt::format("'{}' gives {} values: an index expression is one (a comma only separates a "
                                   "function's arguments)",
                                   text, values));
    vector_steps(scope);
    if (m_used.size() == 1) {
      const std::size_t from = text.find_first_not_of(" \t"), to = text.find_last_not_of(" \t");
      if (from != std::string::npos && text.substr(from, to - from + 1) == used.begin()->first) m_variable = m_used[0];
    }
  } catch (const mu::ParserError& e) {
    throw InputError(m_where, m_key, fmt::format("in '{}' at character {}: {}", text, e.GetPos() + 1, e.GetMsg()));
  }
}

Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;
Expression::~Expression() = default;

std::int64_t Expression::eval_lane(Scope& scope, int lane) const {
  for (int slot : m_used) scope.load_lane(slot, lane);
  t_error = nullptr;
  double v = 0;
  try {
    v = m_parser->Eval();
  } catch (const mu::ParserError& e) {
    throw EvalError{e.GetMsg(), lane};
  }
  if (t_error != nullptr) throw EvalError{t_error, lane};
  if (!(std::fabs(v) <= kMaxExactValue)) throw EvalError{fmt::format("value {} outside +-2^53", v), lane};
  return static_cast<std::int64_t>(v);
}

// muparser's bytecode is a stack program: values and variables push, a callback (our operators and functions) replaces
// its operands by its result (ParserBase::ParseCmdCodeBulk runs it one lane at a time). Run as 32-lane steps it makes
// the same calls on the same doubles, so the same values; only the bytecode's other tokens (the ternary ?:'s jumps,
// and muparser's own operators and optimized forms, which IndexParser turns off) are left to lane by lane.
void Expression::vector_steps(const Scope& scope) {
  const mu::ParserByteCode& code = m_parser->GetByteCode();
  const mu::SToken* token = code.GetBase();
  std::vector<Step> steps;
  std::size_t depth = 0;
  for (std::size_t i = 0; i < code.GetSize() && token[i].Cmd != mu::cmEND; ++i) {
    const mu::SToken& t = token[i];
    Step step;
    if (t.Cmd == mu::cmVAL) {
      step.kind = Step::Kind::value;
      step.value = t.Val.data2;
      ++depth;
    } else if (t.Cmd == mu::cmVAR) {
      step.kind = Step::Kind::variable;
      step.slot = scope.slot_of(t.Val.ptr);
      if (step.slot < 0) return;
      ++depth;
    } else if (t.Cmd == mu::cmFUNC && t.Fun.cb._pUserData == nullptr) {
      const auto& table = lane_callbacks();
      const auto known = std::find_if(table.begin(), table.end(), [&](const LaneCallback& c) {
        return c.fun == t.Fun.cb._pRawFun && c.args == t.Fun.argc;
      });
      if (known == table.end() || depth < static_cast<std::size_t>(known->args)) return;
      step.kind = Step::Kind::call;
      step.args = known->args;
      step.apply = known->apply;
      depth -= static_cast<std::size_t>(known->args) - 1;
    } else {
      return;
    }
    if (depth > kStackDepth) return;
    steps.push_back(step);
  }
  if (depth != 1) return;
  m_steps = std::move(steps);
}

bool Expression::eval_vector(Scope& scope, std::uint32_t mask, std::span<std::int64_t, kWarpSize> out) const {
  // Each stack entry's lanes: a variable's own (not copied), else a constant's or a result's in `held`.
  std::array<LaneValues, kStackDepth> held;
  std::array<const double*, kStackDepth> stack;
  std::size_t top = 0;  // entries in use
  t_error = nullptr;
  for (const Step& s : m_steps) {
    switch (s.kind) {
      case Step::Kind::value:
        held[top].fill(s.value);
        stack[top] = held[top].data();
        ++top;
        break;
      case Step::Kind::variable:
        stack[top++] = scope.lanes(s.slot).data();
        break;
      case Step::Kind::call: {
        const std::size_t first = top - static_cast<std::size_t>(s.args);
        s.apply(&stack[first], held[first].data(), mask);
        // An error, or a value past 2^53 in some lane: lane by lane finds the lane and raises it. Stopping here
        // also keeps such a value from reaching the next step (where converting it to an integer is undefined).
        if (t_error != nullptr) return false;
        stack[first] = held[first].data();
        top = first + 1;
        break;
      }
    }
  }
  const double* v = stack[0];
  if (mask == 0xFFFFFFFFU) {  // a whole warp (the common case): plain loops, which the compiler vectorizes
    return to_integers(v, out);
  }
  bool exact = true;
  for (std::uint32_t left = mask; left != 0; left &= left - 1)
    exact &= std::fabs(v[std::countr_zero(left)]) <= kMaxExactValue;
  if (!exact) return false;
  for (std::uint32_t left = mask; left != 0; left &= left - 1) {
    const auto l = static_cast<std::size_t>(std::countr_zero(left));
    out[l] = static_cast<std::int64_t>(v[l]);
  }
  return true;
}

void Expression::eval_lanes(Scope& scope, std::uint32_t mask, std::span<std::int64_t, kWarpSize> out) const {
  if (!m_steps.empty() && eval_vector(scope, mask, out)) return;
  for (std::uint32_t left = mask; left != 0; left &= left - 1) {
    const int lane = std::countr_zero(left);
    out[static_cast<std::size_t>(lane)] = eval_lane(scope, lane);
  }
}

std::int64_t Expression::eval_uniform(Scope& scope) const {
  try {
    return eval_lane(scope, 0);
  } catch (const EvalError& e) {
    throw InputError(m_where, m_key, fmt::format("'{}': {}", m_text, e.message));
  }
}

}  // namespace memhier::desc
