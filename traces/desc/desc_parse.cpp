// Kernel description YAML -> Description. Every key is checked; every error names file:line:column and the key.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>

#include "desc_model.h"
#include "memhier/suggest.h"
#include "memhier/units.h"

namespace memhier::desc {
namespace {

constexpr std::uint64_t kGlobalHeapBase = 0x7f0000000000ULL;  // where the first global array goes
constexpr std::uint64_t kGlobalPlacement = 2ULL << 20U;       // cudaMalloc places large buffers on 2 MiB pages
constexpr std::uint32_t kPcStep = 16;                         // SASS instructions are 16 bytes
const char* const kDims[3] = {"x", "y", "z"};

class Parser {
 public:
  Parser(std::string file, const std::vector<ParamOverride>& overrides) : m_overrides(overrides) {
    m_d = std::make_unique<Description>();
    m_d->file = std::move(file);
  }

  std::unique_ptr<Description> run(const std::string& yaml);

 private:
  [[nodiscard]] SourceLocation loc(const YAML::Node& n) const {
    SourceLocation l{m_d->file};
    if (n.Mark().line >= 0) {
      l.line = n.Mark().line + 1;
      l.column = n.Mark().column + 1;
    }
    return l;
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& key, const std::string& message) const {
    throw InputError(loc(n), key, message);
  }
  void check_keys(const YAML::Node& map, const std::vector<std::string_view>& allowed, const std::string& context);
  void check_predicable(std::vector<Stmt>& body, const std::string& key) const;
  [[nodiscard]] std::string scalar(const YAML::Node& n, const std::string& key) const;
  // A mapping's key as a name: `context` says whose key it is (an error for a list or mapping used as one).
  [[nodiscard]] std::string key_name(const YAML::Node& k, const std::string& context) const {
    if (!k.IsScalar()) fail(k, context, "a key must be a name, not a list or mapping");
    return k.Scalar();
  }
  [[nodiscard]] bool boolean(const YAML::Node& n, const std::string& key) const {
    try {
      return n.as<bool>();
    } catch (const YAML::Exception&) {
      fail(n, key, "expected true or false");
    }
  }
  Expression expr(const YAML::Node& n, const std::string& key) { return {scalar(n, key), m_d->scope, loc(n), key}; }
  std::int64_t uniform(const YAML::Node& n, const std::string& key) { return expr(n, key).eval_uniform(m_d->scope); }
  std::uint64_t bytes(const YAML::Node& n, const std::string& key);
  Dim3 dims(const YAML::Node& n, const std::string& key, const Dim3& limit);
  void parse_params(const YAML::Node& n);
  void parse_launch(const YAML::Node& n);
  void parse_arrays(const YAML::Node& n);
  void parse_l2(const YAML::Node& n);
  std::vector<Stmt> parse_body(const YAML::Node& n, const std::string& key);
  Stmt parse_stmt(const YAML::Node& n);
  void parse_access(const YAML::Node& n, const std::string& verb, Stmt& s);
  std::pair<int, Expression> array_ref(const YAML::Node& n, const std::string& key);
  [[nodiscard]] int find_array(const std::string& name, const YAML::Node& n, const std::string& key) const;

  std::unique_ptr<Description> m_d;
  const std::vector<ParamOverride>& m_overrides;
  std::uint32_t m_next_pc = kPcStep;
};

void Parser::check_keys(const YAML::Node& map, const std::vector<std::string_view>& allowed,
                        const std::string& context) {
  std::set<std::string> seen;
  for (const auto& kv : map) {
    const auto key = key_name(kv.first, context);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      if (key.find(')') != std::string::npos)
        fail(kv.first, key,
             "looks like the end of an expression cut at a comma: quote expressions with commas inside {...}");
      fail(kv.first, key, fmt::format("unknown key in {}{}", context, did_you_mean(key, allowed)));
    }
    if (!seen.insert(key).second) fail(kv.first, key, "duplicate key");
  }
}

// nvcc if-converts short straight-line branches: a predicated body holds lets, accesses, work and nested ifs (which
// are predicated too), never a loop or a barrier.
void Parser::check_predicable(std::vector<Stmt>& body, const std::string& key) const {
  for (Stmt& s : body) {
    if (s.type == Stmt::Type::loop || s.type == Stmt::Type::barrier)
      throw InputError(s.where, key,
                       fmt::format("a predicated if cannot hold a {} (nvcc if-converts straight-line code only)",
                                   s.type == Stmt::Type::loop ? "loop" : "barrier"));
    if (s.type == Stmt::Type::branch) {
      s.predicated = true;
      check_predicable(s.body, "then");
      check_predicable(s.else_body, "else");
    }
  }
}

std::string Parser::scalar(const YAML::Node& n, const std::string& key) const {
  if (!n.IsScalar()) fail(n, key, "expected a single value (an expression), found a list or mapping");
  auto text = n.as<std::string>();
  if (text.empty()) fail(n, key, "empty value");
  if (std::count(text.begin(), text.end(), '(') != std::count(text.begin(), text.end(), ')'))
    fail(n, key,
         fmt::format("'{}' has unbalanced parentheses; inside YAML [...] or {{...}} a comma ends the value, so quote "
                     "expressions that contain commas: 'ceil_div(n, 256)'",
                     text));
  return text;
}

std::uint64_t Parser::bytes(const YAML::Node& n, const std::string& key) {
  const std::string text = scalar(n, key);
  if (std::isdigit(static_cast<unsigned char>(text.back())) == 0) {
    try {
      return units::parse_bytes(text);
    } catch (const std::invalid_argument& e) {
      fail(n, key, e.what());
    }
  }
  const std::int64_t v = uniform(n, key);
  if (v < 0) fail(n, key, fmt::format("negative size {}", v));
  return static_cast<std::uint64_t>(v);
}

Dim3 Parser::dims(const YAML::Node& n, const std::string& key, const Dim3& limit) {
  std::vector<YAML::Node> parts;
  if (n.IsSequence()) {
    for (const auto& p : n) parts.push_back(p);
  } else {
    parts.push_back(n);
  }
  if (parts.empty() || parts.size() > 3) fail(n, key, "expected 1 to 3 dimensions (x, y, z)");
  std::uint32_t v[3] = {1, 1, 1};
  const std::uint32_t lim[3] = {limit.x, limit.y, limit.z};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::int64_t x = uniform(parts[i], key);
    if (x < 1 || x > lim[i]) fail(parts[i], key, fmt::format("{}.{} = {} outside 1..{}", key, kDims[i], x, lim[i]));
    v[i] = static_cast<std::uint32_t>(x);
  }
  return {v[0], v[1], v[2]};
}

void Parser::parse_params(const YAML::Node& n) {
  if (!n) return;
  if (!n.IsMap()) fail(n, "params", "expected a mapping of name: expression");
  std::set<std::string> seen;
  for (const auto& kv : n) {
    const auto name = key_name(kv.first, "params");
    if (!seen.insert(name).second) fail(kv.first, name, "duplicate parameter");
    if (m_d->scope.find(name) >= 0) fail(kv.first, name, "parameter name clashes with a built-in name");
    const ParamOverride* set = nullptr;
    for (const ParamOverride& o : m_overrides)
      if (o.name == name) set = &o;
    std::int64_t value = 0;
    if (set != nullptr) {
      SourceLocation where{"--set " + name};
      value = Expression(set->expression, m_d->scope, where, name).eval_uniform(m_d->scope);
    } else {
      value = uniform(kv.second, name);
    }
    m_d->scope.set_uniform(m_d->scope.declare(name), static_cast<double>(value));
    m_d->info.params.emplace_back(name, value);
  }
}

void Parser::parse_launch(const YAML::Node& n) {
  if (!n || !n.IsMap()) fail(n ? n : YAML::Node(), "launch", "missing 'launch' mapping (grid, block, registers)");
  check_keys(n, {"grid", "block", "cluster", "registers"}, "launch");
  for (const char* required : {"grid", "block", "registers"})
    if (!n[required])
      fail(n, required,
           fmt::format(
               "launch needs '{}'{}", required,
               std::string(required) == "registers" ? " (registers per thread; nvcc -Xptxas -v prints it)" : ""));
  KernelLaunch& k = m_d->launch;
  k.grid = dims(n["grid"], "grid", {0x7FFFFFFFU, 65535, 65535});
  k.block = dims(n["block"], "block", {1024, 1024, 64});
  if (k.block.count() > 1024)
    fail(n["block"], "block", fmt::format("{} threads per block; at most 1024", k.block.count()));
  if (n["cluster"]) k.cluster = dims(n["cluster"], "cluster", {16, 16, 16});
  const std::int64_t regs = uniform(n["registers"], "registers");
  if (regs < 1 || regs > 255)
    fail(n["registers"], "registers", fmt::format("{} registers per thread outside 1..255", regs));
  k.registers_per_thread = static_cast<std::uint32_t>(regs);
  const std::uint32_t v[2][3] = {{k.block.x, k.block.y, k.block.z}, {k.grid.x, k.grid.y, k.grid.z}};
  const char* names[2] = {"blockDim", "gridDim"};
  for (int which = 0; which < 2; ++which)
    for (int i = 0; i < 3; ++i)
      m_d->scope.set_uniform(m_d->scope.declare(fmt::format("{}.{}", names[which], kDims[i])), v[which][i]);
}

void Parser::parse_arrays(const YAML::Node& n) {
  if (!n || !n.IsMap()) fail(n ? n : YAML::Node(), "arrays", "missing 'arrays' mapping");
  std::uint64_t next_global = kGlobalHeapBase;
  std::uint64_t offsets[kAddressSpaceCount] = {};
  std::uint64_t dynamic_shared = 0;
  std::set<std::string> seen;
  std::vector<std::pair<DescribedArray, bool>> dynamic;
  for (const auto& kv : n) {
    const auto name = key_name(kv.first, "arrays");
    if (!seen.insert(name).second) fail(kv.first, name, "duplicate array");
    const YAML::Node& a = kv.second;
    if (!a.IsMap()) fail(a, name, "expected a mapping with element and length");
    check_keys(a, {"element", "length", "space", "align", "base", "dynamic"}, "array '" + name + "'");
    if (!a["element"] || !a["length"]) fail(a, name, "an array needs 'element' (bytes) and 'length' (elements)");
    DescribedArray arr;
    arr.name = name;
    const std::int64_t elem = uniform(a["element"], "element");
    if (elem != 1 && elem != 2 && elem != 4 && elem != 8 && elem != 16)
      fail(a["element"], "element", fmt::format("element size {} is not 1, 2, 4, 8 or 16 bytes", elem));
    arr.element_bytes = static_cast<std::uint32_t>(elem);
    const std::int64_t length = uniform(a["length"], "length");
    if (length < 1) fail(a["length"], "length", fmt::format("length {} must be positive", length));
    arr.length = static_cast<std::uint64_t>(length);
    if (a["space"] && !parse_address_space(scalar(a["space"], "space"), arr.space))
      fail(a["space"], "space", "expected global, shared, local, constant or texture");
    const std::uint64_t align =
        a["align"] ? bytes(a["align"], "align") : std::max<std::uint64_t>(256, arr.element_bytes);
    if (align == 0 || (align & (align - 1)) != 0)
      fail(a["align"], "align", fmt::format("alignment {} is not a power of two", align));
    const bool is_dynamic = a["dynamic"] && boolean(a["dynamic"], "dynamic");
    if (is_dynamic && arr.space != AddressSpace::shared)
      fail(a["dynamic"], "dynamic", "only shared arrays can be dynamic");
    const bool on_heap = arr.space == AddressSpace::global || arr.space == AddressSpace::texture;
    if (a["base"]) {
      if (!on_heap) fail(a["base"], "base", "only global and texture arrays take a fixed base address");
      arr.base = static_cast<std::uint64_t>(uniform(a["base"], "base"));
    } else if (on_heap) {
      const std::uint64_t place = std::max(align, kGlobalPlacement);
      arr.base = (next_global + place - 1) / place * place;
      next_global = arr.base + arr.bytes();
    } else if (!is_dynamic) {
      const std::uint64_t small_align = a["align"] ? align : arr.element_bytes;
      std::uint64_t& off = offsets[static_cast<int>(arr.space)];
      arr.base = (off + small_align - 1) / small_align * small_align;
      off = arr.base + arr.bytes();
    }
    if (is_dynamic) {
      dynamic.emplace_back(arr, true);
    } else {
      m_d->info.arrays.push_back(arr);
    }
  }
  // Dynamic shared memory follows the static part, 16-byte aligned, as the CUDA compiler lays it out.
  std::uint64_t dyn = (offsets[static_cast<int>(AddressSpace::shared)] + 15) / 16 * 16;
  const std::uint64_t dyn_start = dyn;
  for (auto& [arr, unused] : dynamic) {
    arr.base = (dyn + arr.element_bytes - 1) / arr.element_bytes * arr.element_bytes;
    dyn = arr.base + arr.bytes();
    m_d->info.arrays.push_back(arr);
  }
  dynamic_shared = dynamic.empty() ? 0 : dyn - dyn_start;
  KernelLaunch& k = m_d->launch;
  const std::uint64_t shared = offsets[static_cast<int>(AddressSpace::shared)];
  if (shared + dynamic_shared > 228ULL * 1024)
    fail(n, "arrays",
         fmt::format("{} bytes of shared memory per block; no GPU offers more than 227 KiB", shared + dynamic_shared));
  k.static_shared_bytes = static_cast<std::uint32_t>(shared);
  k.dynamic_shared_bytes = static_cast<std::uint32_t>(dynamic_shared);
  k.local_bytes_per_thread = static_cast<std::uint32_t>(offsets[static_cast<int>(AddressSpace::local)]);
  if (offsets[static_cast<int>(AddressSpace::constant)] > 64ULL * 1024)
    fail(n, "arrays", "more than 64 KiB of constant memory");
}

int Parser::find_array(const std::string& name, const YAML::Node& n, const std::string& key) const {
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i < m_d->info.arrays.size(); ++i) {
    if (m_d->info.arrays[i].name == name) return static_cast<int>(i);
    names.emplace_back(m_d->info.arrays[i].name);
  }
  fail(n, key, fmt::format("unknown array '{}'{}", name, did_you_mean(name, names)));
}

void Parser::parse_l2(const YAML::Node& n) {
  if (!n) return;
  if (!n.IsMap()) fail(n, "l2", "expected a mapping (persisting_set_aside, reset_persisting, windows)");
  check_keys(n, {"persisting_set_aside", "reset_persisting", "windows"}, "l2");
  KernelLaunch& k = m_d->launch;
  if (n["persisting_set_aside"])
    k.persisting_set_aside_bytes = bytes(n["persisting_set_aside"], "persisting_set_aside");
  if (n["reset_persisting"]) k.reset_persisting = boolean(n["reset_persisting"], "reset_persisting");
  if (!n["windows"]) return;
  if (!n["windows"].IsSequence()) fail(n["windows"], "windows", "expected a list of windows");
  for (const auto& w : n["windows"]) {
    if (!w.IsMap()) fail(w, "windows", "expected a mapping (array, offset, bytes, hit_ratio, hit_prop, miss_prop)");
    check_keys(w, {"array", "offset", "bytes", "hit_ratio", "hit_prop", "miss_prop"}, "window");
    if (!w["array"]) fail(w, "array", "a window names the array it covers");
    const DescribedArray& arr =
        m_d->info.arrays[static_cast<std::size_t>(find_array(scalar(w["array"], "array"), w["array"], "array"))];
    if (arr.space != AddressSpace::global) fail(w["array"], "array", "windows cover global memory only");
    AccessPolicyWindow win;
    const std::uint64_t offset = w["offset"] ? bytes(w["offset"], "offset") : 0;
    win.base = arr.base + offset;
    win.bytes = w["bytes"] ? bytes(w["bytes"], "bytes") : arr.bytes() - std::min(offset, arr.bytes());
    if (offset + win.bytes > arr.bytes()) fail(w, "bytes", "window runs past the end of its array");
    if (w["hit_ratio"]) {
      try {
        win.hit_ratio = w["hit_ratio"].as<double>();
      } catch (const YAML::Exception&) {
        fail(w["hit_ratio"], "hit_ratio", "expected a number between 0 and 1");
      }
      if (!(win.hit_ratio >= 0 && win.hit_ratio <= 1))
        fail(w["hit_ratio"], "hit_ratio", "expected a number between 0 and 1");
    }
    if (w["hit_prop"] && !parse_l2_property(scalar(w["hit_prop"], "hit_prop"), win.hit_prop))
      fail(w["hit_prop"], "hit_prop", "expected normal, streaming or persisting");
    if (w["miss_prop"] && (!parse_l2_property(scalar(w["miss_prop"], "miss_prop"), win.miss_prop) ||
                           win.miss_prop == L2Property::persisting))
      fail(w["miss_prop"], "miss_prop",
           "expected normal or streaming (the CUDA runtime refuses persisting for misses)");
    k.windows.push_back(win);
  }
}

std::pair<int, Expression> Parser::array_ref(const YAML::Node& n, const std::string& key) {
  const std::string text = scalar(n, key);
  const auto open = text.find('[');
  std::string name = text.substr(0, open);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  std::string index = "0";
  if (open != std::string::npos) {
    if (text.back() != ']') fail(n, key, fmt::format("'{}': expected array[index]", text));
    index = text.substr(open + 1, text.size() - open - 2);
  }
  const int a = find_array(name, n, key);
  return {a, Expression(index, m_d->scope, loc(n), key)};
}

void Parser::parse_access(const YAML::Node& n, const std::string& verb, Stmt& s) {
  s.type = Stmt::Type::access;
  const bool copy = s.kind == AccessKind::async_copy || s.kind == AccessKind::bulk_copy;
  std::vector<std::string_view> allowed{verb, "vector", "hint"};
  if (copy) allowed.emplace_back("to");
  if (s.kind == AccessKind::bulk_copy) allowed.emplace_back("bytes");
  check_keys(n, allowed, verb);
  auto [array, index] = array_ref(n[verb], verb);
  s.array = array;
  s.index.emplace(std::move(index));
  const DescribedArray& arr = m_d->info.arrays[static_cast<std::size_t>(array)];
  if (n["vector"]) {
    const std::int64_t v = uniform(n["vector"], "vector");
    if (v < 1 || (v & (v - 1)) != 0 || v * arr.element_bytes > 16)
      fail(n["vector"], "vector",
           fmt::format("vector of {} x {}-byte elements: accesses are 1 to 16 bytes", v, arr.element_bytes));
    s.vector = static_cast<std::uint32_t>(v);
  }
  if (n["hint"] && !parse_cache_hint(scalar(n["hint"], "hint"), s.hint))
    fail(n["hint"], "hint", "expected default, cg, cs or nc");
  if (s.kind == AccessKind::atomic || s.kind == AccessKind::reduction) {
    if (arr.space != AddressSpace::global && arr.space != AddressSpace::shared)
      fail(n[verb], verb, "atomics and reductions work on global or shared arrays");
  } else if (s.kind == AccessKind::store && arr.space == AddressSpace::constant) {
    fail(n[verb], verb, "constant memory is read-only in a kernel");
  }
  if (copy) {
    if (arr.space != AddressSpace::global) fail(n[verb], verb, "copies read a global array");
    if (!n["to"]) fail(n, "to", fmt::format("{} needs 'to: shared_array[index]'", verb));
    auto [to, to_index] = array_ref(n["to"], "to");
    if (m_d->info.arrays[static_cast<std::size_t>(to)].space != AddressSpace::shared)
      fail(n["to"], "to", "copies write a shared array");
    s.to_array = to;
    s.to_index.emplace(std::move(to_index));
    const std::uint32_t size = arr.element_bytes * s.vector;
    if (s.kind == AccessKind::async_copy && size != 4 && size != 8 && size != 16)
      fail(n[verb], verb, fmt::format("cp.async copies 4, 8 or 16 bytes per thread, not {}", size));
  }
  if (s.kind == AccessKind::bulk_copy) {
    if (!n["bytes"]) fail(n, "bytes", "bulk_copy needs 'bytes' (a multiple of 16)");
    s.bytes.emplace(expr(n["bytes"], "bytes"));
  }
}

Stmt Parser::parse_stmt(const YAML::Node& n) {
  Stmt s;
  s.where = loc(n);
  if (n.IsScalar() && n.as<std::string>() == "barrier") {
    s.type = Stmt::Type::barrier;
  } else if (!n.IsMap() || n.size() == 0) {
    fail(n, "body", "a statement is a mapping such as 'load: x[i]', 'if: ...', 'for: ...', or the word barrier");
  }
  if (s.type == Stmt::Type::barrier) {
    s.pc = m_next_pc;
    m_next_pc += kPcStep;
    m_d->info.pc_lines[s.pc] = s.where.line;
    return s;
  }
  const auto verb = key_name(n.begin()->first, "body");
  if (verb == "let") {
    check_keys(n, {"let"}, "let");
    if (!n["let"].IsMap()) fail(n["let"], "let", "expected a mapping of name: expression");
    for (const auto& kv : n["let"]) {
      const auto name = key_name(kv.first, "let");
      Expression e = expr(kv.second, name);  // compiled before the name exists: 'i: i + 1' needs an earlier i
      const int slot = m_d->scope.find(name);
      if (slot >= 0 && slot < m_d->fixed_slots)
        fail(kv.first, name, "built-in names and parameters cannot be assigned");
      s.lets.emplace_back(m_d->scope.declare(name), std::move(e));
    }
    s.type = Stmt::Type::let;
  } else if (verb == "if") {
    check_keys(n, {"if", "then", "else", "predicated"}, "if");
    s.type = Stmt::Type::branch;
    s.cond.emplace(expr(n["if"], "if"));
    if (!n["then"]) fail(n, "then", "'if' needs a 'then' list");
    if (n["predicated"]) {
      const YAML::Node& p = n["predicated"];
      if (!p.IsScalar() || !YAML::convert<bool>::decode(p, s.predicated))
        fail(p, "predicated", "expected true or false");
    }
    s.body = parse_body(n["then"], "then");
    if (n["else"]) s.else_body = parse_body(n["else"], "else");
    if (s.predicated) {
      check_predicable(s.body, "then");
      check_predicable(s.else_body, "else");
    }
  } else if (verb == "for") {
    check_keys(n, {"for", "from", "to", "step", "unroll", "do"}, "for");
    s.type = Stmt::Type::loop;
    const std::string var = scalar(n["for"], "for");
    s.from.emplace(n["from"] ? expr(n["from"], "from") : Expression("0", m_d->scope, loc(n), "from"));
    if (!n["to"]) fail(n, "to", "'for' needs 'to' (the loop runs while var < to)");
    s.to.emplace(expr(n["to"], "to"));
    s.step.emplace(n["step"] ? expr(n["step"], "step") : Expression("1", m_d->scope, loc(n), "step"));
    if (m_d->scope.find(var) >= 0 && m_d->scope.find(var) < m_d->fixed_slots)
      fail(n["for"], "for", "built-in names and parameters cannot be loop variables");
    s.var = m_d->scope.declare(var);
    if (n["unroll"]) {
      const std::int64_t u = uniform(n["unroll"], "unroll");
      if (u < 1 || u > 256)
        fail(n["unroll"], "unroll", fmt::format("unroll {}: expected 1 to 256 copies of the body", u));
      s.unroll = static_cast<std::uint32_t>(u);
    }
    if (!n["do"]) fail(n, "do", "'for' needs a 'do' list");
    s.body = parse_body(n["do"], "do");
  } else if (verb == "work") {
    check_keys(n, {"work"}, "work");
    s.type = Stmt::Type::work;
    s.bytes.emplace(expr(n["work"], "work"));
  } else if (verb == "barrier") {
    check_keys(n, {"barrier"}, "barrier");
    s.type = Stmt::Type::barrier;
  } else {
    if (!parse_access_kind(verb, s.kind))
      fail(
          n.begin()->first, verb,
          fmt::format("unknown statement{}", did_you_mean(verb, {"let", "if", "for", "work", "barrier", "load", "store",
                                                                 "atomic", "reduction", "async_copy", "bulk_copy"})));
    parse_access(n, verb, s);
  }
  if (s.type == Stmt::Type::access || s.type == Stmt::Type::barrier) {
    s.pc = m_next_pc;
    m_next_pc += kPcStep;
    m_d->info.pc_lines[s.pc] = s.where.line;
  }
  return s;
}

std::vector<Stmt> Parser::parse_body(const YAML::Node& n, const std::string& key) {
  if (!n.IsSequence()) fail(n, key, "expected a list of statements");
  std::vector<Stmt> out;
  for (const auto& item : n) out.push_back(parse_stmt(item));
  return out;
}

std::unique_ptr<Description> Parser::run(const std::string& yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw InputError({m_d->file, e.mark.line + 1, e.mark.column + 1}, "", "YAML syntax error: " + e.msg);
  }
  if (!root.IsMap())
    throw InputError({m_d->file}, "", "a kernel description is a YAML mapping (kernel, launch, arrays, body)");
  check_keys(root, {"kernel", "description", "params", "launch", "arrays", "l2", "launches", "body"},
             "kernel description");
  if (!root["kernel"]) throw InputError({m_d->file, 1, 1}, "kernel", "missing 'kernel' (the kernel's name)");
  m_d->info.kernel = scalar(root["kernel"], "kernel");
  if (root["description"]) m_d->info.summary = scalar(root["description"], "description");
  for (std::size_t i = 0; i < m_overrides.size(); ++i) {
    const ParamOverride& o = m_overrides[i];
    for (std::size_t j = 0; j < i; ++j)  // which should win is the user's to say
      if (m_overrides[j].name == o.name)
        throw InputError({"--set " + o.name}, o.name,
                         fmt::format("given twice: '{}', then '{}'", m_overrides[j].expression, o.expression));
    if (!root["params"] || !root["params"][o.name]) {
      std::vector<std::string_view> names;
      if (root["params"] && root["params"].IsMap())
        for (const auto& kv : root["params"]) names.push_back(kv.first.Scalar());
      throw InputError({"--set " + o.name}, o.name,
                       fmt::format("'{}' has no parameter '{}'{}", m_d->file, o.name, did_you_mean(o.name, names)));
    }
  }
  Scope& scope = m_d->scope;
  int axis = 0;
  for (const char* d : kDims) m_d->thread_slot[axis++] = scope.declare(fmt::format("threadIdx.{}", d));
  axis = 0;
  for (const char* d : kDims) m_d->block_slot[axis++] = scope.declare(fmt::format("blockIdx.{}", d));
  for (const char* d : kDims) scope.declare(fmt::format("blockDim.{}", d));
  for (const char* d : kDims) scope.declare(fmt::format("gridDim.{}", d));
  scope.set_uniform(scope.declare("warpSize"), kWarpSize);
  parse_params(root["params"]);
  m_d->fixed_slots = static_cast<int>(scope.names().size());
  parse_launch(root["launch"]);
  parse_arrays(root["arrays"]);
  parse_l2(root["l2"]);
  if (root["launches"]) {
    const std::int64_t l = uniform(root["launches"], "launches");
    if (l < 1 || l > 1000000) fail(root["launches"], "launches", "expected 1 to 1000000 launches");
    m_d->info.launches = static_cast<std::uint32_t>(l);
  }
  if (!root["body"]) throw InputError({m_d->file, 1, 1}, "body", "missing 'body' (the statements every thread runs)");
  m_d->body = parse_body(root["body"], "body");
  m_d->launch.name = m_d->info.kernel;
  m_d->launch.source = m_d->file;
  return std::move(m_d);
}

}  // namespace

std::unique_ptr<Description> parse_description(const std::string& yaml, const std::string& file,
                                               const std::vector<ParamOverride>& overrides) {
  try {
    return Parser(file, overrides).run(yaml);
  } catch (const YAML::Exception& e) {  // a conversion no check above foresaw: still the file and place
    throw InputError({file, e.mark.line + 1, e.mark.column + 1}, "", "YAML: " + e.msg);
  }
}

}  // namespace memhier::desc

namespace memhier {

std::vector<std::string> description_param_names(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError({path.string()}, "", "cannot open the kernel description");
  YAML::Node root;
  try {
    root = YAML::Load(in);
  } catch (const YAML::Exception& e) {
    throw InputError({path.string(), e.mark.line + 1, e.mark.column + 1}, "", "YAML syntax error: " + e.msg);
  }
  std::vector<std::string> names;
  if (root.IsMap() && root["params"] && root["params"].IsMap())
    for (const auto& kv : root["params"]) names.push_back(kv.first.Scalar());
  return names;
}

}  // namespace memhier
