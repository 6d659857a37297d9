// Accel-Sim .traceg import. Only memory instructions and barriers become records; every other instruction counts as
// work for the warp's next record. Each malformed line is reported as file:line.
#include <fmt/format.h>

#include <charconv>
#include <sstream>

#include "memhier/accelsim.h"
#include "memhier/error.h"

namespace memhier {
namespace fs = std::filesystem;

namespace {

struct Opcode {
  bool memory = false;  // becomes a memory record
  bool barrier = false;
  bool generic = false;  // space decided by the address windows
  AddressSpace space = AddressSpace::global;
  AccessKind kind = AccessKind::load;
  CacheHint hint = CacheHint::none;
};

bool has_modifier(std::string_view op, std::string_view mod) {
  std::size_t at = 0;
  while ((at = op.find(mod, at)) != std::string_view::npos) {
    const std::size_t end = at + mod.size();
    if (at > 0 && op[at - 1] == '.' && (end == op.size() || op[end] == '.')) return true;
    at = end;
  }
  return false;
}

// Returns false when the opcode is not one we know how to read as memory; `memory` false means a plain instruction.
bool classify(std::string_view op, Opcode& out) {
  const std::string_view base = op.substr(0, op.find('.'));
  struct Entry {
    std::string_view name;
    AddressSpace space;
    AccessKind kind;
    bool generic;
  };
  static constexpr Entry kTable[] = {
      {"LDG", AddressSpace::global, AccessKind::load, false},
      {"STG", AddressSpace::global, AccessKind::store, false},
      {"ATOMG", AddressSpace::global, AccessKind::atomic, false},
      {"REDG", AddressSpace::global, AccessKind::reduction, false},
      {"RED", AddressSpace::global, AccessKind::reduction, true},
      {"ATOM", AddressSpace::global, AccessKind::atomic, true},
      {"LD", AddressSpace::global, AccessKind::load, true},
      {"ST", AddressSpace::global, AccessKind::store, true},
      {"LDS", AddressSpace::shared, AccessKind::load, false},
      {"LDSM", AddressSpace::shared, AccessKind::load, false},
      {"STS", AddressSpace::shared, AccessKind::store, false},
      {"ATOMS", AddressSpace::shared, AccessKind::atomic, false},
      {"LDL", AddressSpace::local, AccessKind::load, false},
      {"STL", AddressSpace::local, AccessKind::store, false},
      {"LDC", AddressSpace::constant, AccessKind::load, false},
      {"ULDC", AddressSpace::constant, AccessKind::load, false},
      {"TEX", AddressSpace::texture, AccessKind::load, false},
      {"TLD", AddressSpace::texture, AccessKind::load, false},
      {"TLD4", AddressSpace::texture, AccessKind::load, false},
      {"SULD", AddressSpace::texture, AccessKind::load, false},
      {"SUST", AddressSpace::texture, AccessKind::store, false},
      {"LDGSTS", AddressSpace::global, AccessKind::async_copy, true},
      {"UBLKCP", AddressSpace::global, AccessKind::bulk_copy, false},
      {"UTMALDG", AddressSpace::global, AccessKind::bulk_copy, false},
  };
  out = {};
  if (base == "BAR" && !has_modifier(op, "ARV")) {
    out.barrier = true;
    return true;
  }
  for (const Entry& e : kTable) {
    if (base != e.name) continue;
    out.memory = true;
    out.space = e.space;
    out.kind = e.kind;
    out.generic = e.generic;
    if (has_modifier(op, "CONSTANT"))
      out.hint = CacheHint::nc;
    else if (has_modifier(op, "EF"))
      out.hint = CacheHint::cs;
    else if (has_modifier(op, "BYPASS") || (has_modifier(op, "STRONG") && has_modifier(op, "GPU")))
      out.hint = CacheHint::cg;
    return true;
  }
  return false;
}

}  // namespace

struct AccelSimReader::State {
  fs::path file;
  std::ifstream in;
  int line_no = 0;
  std::string line;
  int version = 0;
  bool lineinfo = false;
  std::uint64_t shared_base = 0;
  std::uint64_t local_base = 0;
  KernelLaunch launch;
  bool in_kernel = false;

  [[noreturn]] void fail(const std::string& message) const { throw InputError({file.string(), line_no}, "", message); }
  bool next_line() {
    if (!std::getline(in, line)) return false;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }

  std::uint64_t hex(std::string_view t, const char* what) const {
    if (t.starts_with("0x") || t.starts_with("0X")) t.remove_prefix(2);
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v, 16);
    if (ec != std::errc() || end != t.data() + t.size() || t.empty())
      fail(fmt::format("bad {} '{}' (hex expected)", what, t));
    return v;
  }
  std::int64_t dec(std::string_view t, const char* what) const {
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v, 10);
    if (ec != std::errc() || end != t.data() + t.size() || t.empty()) fail(fmt::format("bad {} '{}'", what, t));
    return v;
  }
  Dim3 dim(const std::string& v) const {
    unsigned x = 0, y = 0, z = 0;
    char c1 = 0, c2 = 0, c3 = 0, c4 = 0;
    std::istringstream ss(v);
    if (!(ss >> c1 >> x >> c2 >> y >> c3 >> z >> c4) || c1 != '(' || c2 != ',' || c3 != ',' || c4 != ')' || x == 0 ||
        y == 0 || z == 0)
      fail(fmt::format("bad dimensions '{}' (expected (x,y,z))", v));
    return {x, y, z};
  }

  void read_header();
  bool read_block(BlockTrace& block);
  void read_instruction(BlockTrace& block, std::uint64_t& work);
  bool in_shared(std::uint64_t a) const {
    return shared_base != 0 && a >= shared_base && a < shared_base + (1ULL << 24U);
  }
  bool in_local(std::uint64_t a) const { return local_base != 0 && a >= local_base && a < local_base + (1ULL << 32U); }
};

AccelSimReader::AccelSimReader(const fs::path& path) : m_state(std::make_unique<State>()) {
  std::error_code ec;
  fs::path list = path;
  if (fs::is_directory(path, ec)) list = path / "kernelslist.g";
  if (list.extension() == ".traceg") {
    m_files.push_back(list);
    return;
  }
  std::ifstream in(list);
  if (!in) throw InputError({list.string()}, "", "cannot open the Accel-Sim kernel list");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.starts_with("Memcpy") || line.starts_with("#")) continue;
    if (!line.ends_with(".traceg")) throw InputError({list.string(), n}, "", fmt::format("unexpected line '{}'", line));
    fs::path f = line;
    m_files.push_back(f.is_absolute() ? f : list.parent_path() / f);
  }
}

AccelSimReader::~AccelSimReader() = default;

void AccelSimReader::State::read_header() {
  bool have_name = false, have_grid = false, have_block = false;
  version = 0;
  launch = {};
  launch.source = file.string();
  while (next_line()) {
    if (line.starts_with("#BEGIN_TB")) break;
    if (!line.starts_with("-")) continue;
    const auto eq = line.find(" = ");
    if (eq == std::string::npos) fail(fmt::format("header line without ' = ': '{}'", line));
    const std::string key = line.substr(1, eq - 1);
    const std::string value = line.substr(eq + 3);
    if (key == "kernel name") {
      launch.name = value;
      have_name = true;
    } else if (key == "grid dim") {
      launch.grid = dim(value);
      have_grid = true;
    } else if (key == "block dim") {
      launch.block = dim(value);
      have_block = true;
      if (launch.block.count() > 1024) fail(fmt::format("block of {} threads", launch.block.count()));
    } else if (key == "shmem") {
      const std::int64_t bytes = dec(value, "shmem");
      if (bytes < 0 || bytes > 0xFFFFFFFFLL) fail(fmt::format("shmem {}: not a size in bytes", bytes));
      launch.static_shared_bytes = static_cast<std::uint32_t>(bytes);
    } else if (key == "nregs") {
      const std::int64_t registers = dec(value, "nregs");
      if (registers < 0 || registers > 255) fail(fmt::format("nregs {}: a thread has 0 to 255 registers", registers));
      launch.registers_per_thread = static_cast<std::uint32_t>(registers);
    } else if (key == "shmem base_addr") {
      shared_base = hex(value, "shmem base_addr");
    } else if (key == "local mem base_addr") {
      local_base = hex(value, "local mem base_addr");
    } else if (key == "accelsim tracer version") {
      version = static_cast<int>(dec(value, "tracer version"));
      if (version < 3 || version > 5)
        fail(fmt::format("Accel-Sim tracer version {}; this reader handles 3 to 5", version));
    } else if (key == "enable lineinfo") {
      lineinfo = dec(value, "enable lineinfo") != 0;
    } else if (key == "binary version") {
      launch.captured_arch = "sm_" + value;
    }
  }
  if (!have_name || !have_grid || !have_block) fail("header lacks '-kernel name', '-grid dim' or '-block dim'");
  if (version == 0) fail("header lacks '-accelsim tracer version' (versions 3 to 5 are read)");
}

bool AccelSimReader::next_kernel(KernelLaunch& launch) {
  if (m_next == m_files.size()) return false;
  State& s = *m_state;
  s.file = m_files[m_next++];
  s.in = std::ifstream(s.file);
  if (!s.in) throw InputError({s.file.string()}, "", "cannot open the Accel-Sim trace");
  s.line_no = 0;
  s.read_header();
  s.in_kernel = true;
  launch = s.launch;
  return true;
}

bool AccelSimReader::next_block(BlockTrace& block) {
  State& s = *m_state;
  if (!s.in_kernel) return false;
  return s.read_block(block);
}

bool AccelSimReader::State::read_block(BlockTrace& block) {
  // The header reader stops on the first #BEGIN_TB; later blocks start here.
  if (!line.starts_with("#BEGIN_TB")) {
    while (next_line() && !line.starts_with("#BEGIN_TB")) {
      if (!line.empty()) fail(fmt::format("expected #BEGIN_TB, found '{}'", line));
    }
    if (!in) {
      in_kernel = false;
      return false;
    }
  }
  block.clear();
  while (next_line() && line.empty()) {
  }
  if (!in || !line.starts_with("thread block = ")) fail("expected 'thread block = x,y,z' after #BEGIN_TB");
  Dim3 idx;
  if (std::sscanf(line.c_str(), "thread block = %u,%u,%u", &idx.x, &idx.y, &idx.z) != 3) fail("bad thread block line");
  if (idx.x >= launch.grid.x || idx.y >= launch.grid.y || idx.z >= launch.grid.z) fail("thread block outside the grid");
  block.index = idx;
  const std::uint32_t warps = launch.warps_per_block();
  std::uint64_t work = 0;
  int warp = -1;
  // The warp's `insts = n` (n instruction lines follow; Accel-Sim reads exactly n) and the lines read since: a count
  // that disagrees is a damaged file, not a shorter warp.
  std::int64_t declared = -1, seen = 0;
  auto check_count = [&] {
    if (declared >= 0 && seen != declared)
      fail(fmt::format("warp {} has {} instruction lines where its 'insts' line says {}", warp, seen, declared));
  };
  while (next_line()) {
    if (line.starts_with("#END_TB")) {
      check_count();
      if (work != 0 && block.records.size() > block.warp_begin[block.warp_begin.size() - 2])
        block.records.back().work += static_cast<std::uint32_t>(work);  // trailing instructions of the last warp
      while (block.warp_count() < warps) block.begin_warp();
      line.clear();
      return true;
    }
    if (line.starts_with("warp = ")) {
      const auto w = dec(std::string_view(line).substr(7), "warp");
      if (w <= warp || w >= static_cast<std::int64_t>(warps))
        fail(fmt::format("warp {} out of order or beyond the block's {} warps", w, warps));
      check_count();
      declared = -1;
      seen = 0;
      if (work != 0 && block.warp_count() > 0 && block.records.size() > block.warp_begin[block.warp_begin.size() - 2])
        block.records.back().work += static_cast<std::uint32_t>(work);
      work = 0;
      while (block.warp_count() <= static_cast<std::size_t>(w)) block.begin_warp();
      warp = static_cast<int>(w);
      continue;
    }
    if (line.empty()) continue;
    if (line.starts_with("insts = ")) {
      if (warp < 0 || declared >= 0 || seen != 0) fail("'insts = ' not right after its 'warp = ' line");
      declared = dec(std::string_view(line).substr(8), "insts");
      continue;
    }
    if (warp < 0) fail("instruction before any 'warp = ' line");
    read_instruction(block, work);
    ++seen;
  }
  fail("file ends inside a thread block (no #END_TB)");
}

void AccelSimReader::State::read_instruction(BlockTrace& block, std::uint64_t& work) {
  std::vector<std::string_view> t;
  std::string_view rest(line);
  while (!rest.empty()) {
    const auto b = rest.find_first_not_of(" \t");
    if (b == std::string_view::npos) break;
    rest.remove_prefix(b);
    const auto e = rest.find_first_of(" \t");
    t.push_back(rest.substr(0, e));
    rest.remove_prefix(e == std::string_view::npos ? rest.size() : e);
  }
  std::size_t i = lineinfo ? 1 : 0;
  auto need = [&](std::size_t n) {
    if (t.size() < i + n) fail("instruction line ends early");
  };
  need(3);
  WarpRecord r;
  const std::uint64_t pc = hex(t[i++], "pc");
  r.pc = static_cast<std::uint32_t>(pc);
  const std::uint64_t mask = hex(t[i++], "mask");
  if (mask > 0xFFFFFFFFULL || pc > 0xFFFFFFFFULL) fail("pc or mask does not fit 32 bits");
  r.active_mask = static_cast<std::uint32_t>(mask);
  const std::int64_t dsts = dec(t[i++], "destination count");
  if (dsts < 0 || dsts > 8) fail(fmt::format("{} destination registers", dsts));
  need(static_cast<std::size_t>(dsts) + 2);
  i += static_cast<std::size_t>(dsts);
  const std::string_view op = t[i++];
  const std::int64_t srcs = dec(t[i++], "source count");
  if (srcs < 0 || srcs > 8) fail(fmt::format("{} source registers", srcs));
  need(static_cast<std::size_t>(srcs) + 1);
  i += static_cast<std::size_t>(srcs);
  const std::int64_t width = dec(t[i++], "memory width");
  Opcode o;
  const bool known = classify(op, o);
  if (o.barrier) {
    r.record = RecordKind::barrier;
    r.work = static_cast<std::uint32_t>(std::min<std::uint64_t>(work, 0xFFFFFFFFU));
    work = 0;
    block.add(r, {});
    return;
  }
  if (width == 0 || (known && !o.memory)) {
    ++work;
    return;
  }
  if (!known) fail(fmt::format("memory instruction '{}' of unknown kind", op));
  if (width != 1 && width != 2 && width != 4 && width != 8 && width != 16) fail(fmt::format("memory width {}", width));
  if (r.active_mask == 0) fail("memory instruction with an empty mask");
  need(1);
  const std::int64_t mode = dec(t[i++], "address mode");
  const int n = std::popcount(r.active_mask);
  std::array<std::uint64_t, kWarpSize> a{};
  if (mode == 0) {
    need(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) a[static_cast<std::size_t>(k)] = hex(t[i++], "address");
  } else if (mode == 1) {
    need(2);
    a[0] = hex(t[i++], "base address");
    const std::int64_t stride = dec(t[i++], "stride");
    for (int k = 1; k < n; ++k)
      a[static_cast<std::size_t>(k)] = a[static_cast<std::size_t>(k - 1)] + static_cast<std::uint64_t>(stride);
  } else if (mode == 2) {
    need(static_cast<std::size_t>(n));
    a[0] = hex(t[i++], "base address");
    for (int k = 1; k < n; ++k)
      a[static_cast<std::size_t>(k)] =
          a[static_cast<std::size_t>(k - 1)] + static_cast<std::uint64_t>(dec(t[i++], "delta"));
  } else {
    fail(fmt::format("address mode {} (0, 1 or 2 expected)", mode));
  }
  // Whatever follows (the optional immediate) carries no address.
  r.size = static_cast<std::uint8_t>(width);
  r.kind = o.kind;
  r.hint = o.hint;
  r.space = o.space;
  if (o.generic) {
    if (in_shared(a[0]))
      r.space = AddressSpace::shared;
    else if (in_local(a[0]))
      r.space = AddressSpace::local;
  }
  if (r.kind == AccessKind::bulk_copy) r.bulk_bytes = static_cast<std::uint32_t>(width);
  const std::uint64_t window = r.space == AddressSpace::shared  ? shared_base
                               : r.space == AddressSpace::local ? local_base
                                                                : 0;
  for (int k = 0; k < n; ++k) {
    auto& addr = a[static_cast<std::size_t>(k)];
    if (window != 0 && addr >= window) addr -= window;  // generic -> offset in the window
  }
  r.work = static_cast<std::uint32_t>(std::min<std::uint64_t>(work, 0xFFFFFFFFU));
  work = 0;
  block.add(r, {a.data(), static_cast<std::size_t>(n)});
}

}  // namespace memhier
