// muparser configured for C integer arithmetic. Values travel as doubles (muparser's type) but every operator keeps
// them integral; magnitudes are limited to 2^53 so they stay exact.
#include "expr.h"

#include <fmt/format.h>

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

double add(double a, double b) { return a + b; }
double sub(double a, double b) { return a - b; }
double mul(double a, double b) { return a * b; }
double div(double a, double b) {
  if (b == 0) return flag("division by zero");
  const std::int64_t q = as_int(a) / as_int(b);  // C truncation, on purpose
  return static_cast<double>(q);
}
double mod(double a, double b) {
  return b == 0 ? flag("remainder by zero") : static_cast<double>(as_int(a) % as_int(b));
}
double shl(double a, double b) {  // a * 2^b is exact in double; the +-2^53 check after Eval catches overflow
  return (b < 0 || b > 62) ? flag("shift count outside 0..62") : std::ldexp(a, static_cast<int>(b));
}
double shr(double a, double b) {
  return (b < 0 || b > 62) ? flag("shift count outside 0..62") : static_cast<double>(as_int(a) >> as_int(b));
}
double band(double a, double b) { return static_cast<double>(as_int(a) & as_int(b)); }
double bor(double a, double b) { return static_cast<double>(as_int(a) | as_int(b)); }
double bxor(double a, double b) { return static_cast<double>(as_int(a) ^ as_int(b)); }
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

// Integer literals only: decimal or 0x hex.
int integer_literal(const char* expr, int* pos, double* value) {
  const char* p = expr;
  std::uint64_t v = 0;
  int n = 0;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    n = 2;
    while (std::isxdigit(static_cast<unsigned char>(p[n])) != 0 && n < 18) {
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(p[n])));
      v = v * 16 + static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
      ++n;
    }
    if (n == 2) return 0;
  } else {
    while (std::isdigit(static_cast<unsigned char>(p[n])) != 0 && n < 16)
      v = v * 10 + static_cast<std::uint64_t>(p[n++] - '0');
    if (n == 0) return 0;
  }
  if (std::isalnum(static_cast<unsigned char>(p[n])) != 0 || p[n] == '.' || p[n] == '_') return 0;  // 1.5, 12ab
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
    DefineFun("ceil_div", ceil_div);
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
    t_error = nullptr;
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

std::int64_t Expression::eval_uniform(Scope& scope) const {
  try {
    return eval_lane(scope, 0);
  } catch (const EvalError& e) {
    throw InputError(m_where, m_key, fmt::format("'{}': {}", m_text, e.message));
  }
}

}  // namespace memhier::desc
