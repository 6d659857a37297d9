// Runs a kernel description warp by warp, SIMT style: an if splits the active mask, a loop runs while any lane is
// still in range, and every access statement emits one warp record with the addresses the CUDA kernel would compute.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <fstream>
#include <sstream>

#include "desc_model.h"

namespace memhier {
namespace desc {
namespace {

class Runner final : public DescriptionSource {
 public:
  Runner(std::string yaml, std::string label, std::vector<ParamOverride> overrides)
      : m_yaml(std::move(yaml)),
        m_label(std::move(label)),
        m_overrides(std::move(overrides)),
        m_d(parse_description(m_yaml, m_label, m_overrides)) {}
  [[nodiscard]] const DescriptionInfo& info() const override { return m_d->info; }
  [[nodiscard]] const KernelLaunch& launch() const override { return m_d->launch; }

  bool next_kernel(KernelLaunch& launch) override {
    if (m_launches_done == m_d->info.launches) return false;
    ++m_launches_done;
    m_next_block = 0;
    launch = m_d->launch;
    m_in_kernel = true;
    return true;
  }

  bool next_block(BlockTrace& block) override {
    if (!m_in_kernel || m_next_block == m_d->launch.grid.count()) return false;
    generate(m_next_block++, block);
    return true;
  }

  // Blocks are independent (a block's records follow from its index and the parameters), so `threads` runners make
  // them at once, each a run of consecutive blocks: this one and copies parsed from the same text (an expression's
  // parser is bound to its runner's variables). The first failing block, in launch order, raises its error, as
  // next_block() would.
  std::size_t next_blocks(std::span<BlockTrace> out, int threads) override {
    if (!m_in_kernel) return 0;
    const std::size_t n = std::min<std::uint64_t>(out.size(), m_d->launch.grid.count() - m_next_block);
    // Two blocks a runner at least (each copy costs a parse of the description).
    const std::size_t workers = std::min(static_cast<std::size_t>(std::max(threads, 1)), n / 2 + 1);
    if (workers == 1) {
      for (std::size_t i = 0; i < n; ++i) generate(m_next_block++, out[i]);
      return n;
    }
    while (m_copies.size() + 1 < workers)
      m_copies.push_back(std::make_unique<Runner>(m_yaml, m_label, m_overrides));  // parsed here, on one thread
    std::vector<std::size_t> failed(workers, n);  // per worker: the block that failed (n: none)
    std::vector<std::exception_ptr> errors(workers);
    const std::uint64_t first = m_next_block;
    const int team = static_cast<int>(workers);
#pragma omp parallel for num_threads(team) schedule(static, 1)
    for (std::size_t t = 0; t < workers; ++t) {
      Runner& runner = t == 0 ? *this : *m_copies[t - 1];
      for (std::size_t i = t * n / workers; i < (t + 1) * n / workers; ++i) {
        try {
          runner.generate(first + i, out[i]);
        } catch (...) {
          failed[t] = i;
          errors[t] = std::current_exception();
          break;
        }
      }
    }
    for (std::size_t t = 0; t < workers; ++t)
      if (errors[t]) {
        m_next_block = first + failed[t] + 1;
        std::rethrow_exception(errors[t]);
      }
    m_next_block = first + n;
    return n;
  }

 private:
  // Fills `block` with block number `b` of the launch (blockIdx linearised, x fastest).
  void generate(std::uint64_t b, BlockTrace& block) {
    const KernelLaunch& k = m_d->launch;
    block.clear();
    block.index = {static_cast<std::uint32_t>(b % k.grid.x), static_cast<std::uint32_t>(b / k.grid.x % k.grid.y),
                   static_cast<std::uint32_t>(b / (std::uint64_t{k.grid.x} * k.grid.y))};
    m_block = &block;
    Scope& scope = m_d->scope;
    scope.set_uniform(m_d->block_slot[0], block.index.x);
    scope.set_uniform(m_d->block_slot[1], block.index.y);
    scope.set_uniform(m_d->block_slot[2], block.index.z);
    if (m_warps.empty()) warp_threads();
    for (const Warp& warp : m_warps) {
      block.begin_warp();
      for (int slot = m_d->fixed_slots; slot < scope.size(); ++slot) scope.set_uniform(slot, 0);
      for (std::size_t d = 0; d < 3; ++d) scope.lanes(m_d->thread_slot[d]) = warp.thread[d];
      m_pending_work = 0;
      m_copy = 0;
      run(m_d->body, warp.mask);
    }
  }

  // The warps of a block: lane l of warp w is thread w * 32 + l, x fastest; lanes past the block's threads are off.
  // The same in every block of the launch, so worked out once.
  struct Warp {
    std::array<LaneValues, 3> thread;  // threadIdx.x, .y, .z
    std::uint32_t mask = 0;
  };
  void warp_threads() {
    const KernelLaunch& k = m_d->launch;
    const std::uint64_t threads = k.block.count();
    m_warps.resize(k.warps_per_block());
    for (std::size_t w = 0; w < m_warps.size(); ++w)
      for (std::size_t l = 0; l < kWarpSize; ++l) {
        const std::uint64_t t = w * kWarpSize + l;
        if (t < threads) m_warps[w].mask |= 1U << l;
        m_warps[w].thread[0][l] = static_cast<double>(t % k.block.x);
        m_warps[w].thread[1][l] = static_cast<double>(t / k.block.x % k.block.y);
        m_warps[w].thread[2][l] = static_cast<double>(t / (std::uint64_t{k.block.x} * k.block.y));
      }
  }

  [[noreturn]] void fail(const Expression& e, const EvalError& err) const {
    fail_at(e.where(), e.key(), err.lane, err.message + " in '" + e.text() + "'");
  }
  [[noreturn]] void fail_at(const SourceLocation& where, const std::string& key, int lane,
                            const std::string& message) const {
    Scope& scope = m_d->scope;
    auto v = [&](int slot) { return static_cast<std::int64_t>(scope.lanes(slot)[static_cast<std::size_t>(lane)]); };
    throw InputError(where, key,
                     fmt::format("block ({},{},{}) thread ({},{},{}): {}", v(m_d->block_slot[0]), v(m_d->block_slot[1]),
                                 v(m_d->block_slot[2]), v(m_d->thread_slot[0]), v(m_d->thread_slot[1]),
                                 v(m_d->thread_slot[2]), message));
  }

  [[nodiscard]] std::int64_t eval(const Expression& e, int lane) const {
    try {
      return e.eval_lane(m_d->scope, lane);
    } catch (const EvalError& err) {
      fail(e, err);
    }
  }

  using Lanes64 = std::array<std::int64_t, kWarpSize>;

  // Values of `e` in the lanes of `mask`. When every variable it reads is the same in those lanes (loop counters,
  // parameters, block indices) it is evaluated once: the common case in loops, and 32x cheaper.
  void eval_lanes(const Expression& e, std::uint32_t mask, Lanes64& out) const {
    if (e.variable() >= 0) {  // a variable alone: its values (2^53 at most, as evaluation would check)
      const LaneValues& v = m_d->scope.lanes(e.variable());
      if (exact_in(v, mask)) {
        for_lanes(mask, [&](int lane) {
          out[static_cast<std::size_t>(lane)] = static_cast<std::int64_t>(v[static_cast<std::size_t>(lane)]);
        });
        return;
      }  // else the evaluation below raises the error it would have
    }
    const int first = std::countr_zero(mask);
    bool uniform = true;
    for (int slot : e.used_slots())
      if (!same_in(m_d->scope.lanes(slot), mask)) {
        uniform = false;
        break;
      }
    if (uniform) {
      const std::int64_t x = eval(e, first);
      for_lanes(mask, [&](int lane) { out[static_cast<std::size_t>(lane)] = x; });
      return;
    }
    try {
      e.eval_lanes(m_d->scope, mask, out);
    } catch (const EvalError& err) {
      fail(e, err);
    }
  }

  // Whether the lanes of `mask` hold one value (no lanes: true). Whole warps OR every lane's bits XOR the first's,
  // which the compiler vectorizes: lane values are integers (never -0 or NaN), so equal bits are equal values.
  template <typename T>
  static bool same_in(const std::array<T, kWarpSize>& v, std::uint32_t mask) {
    if (mask == 0) return true;
    const T x = v[static_cast<std::size_t>(std::countr_zero(mask))];
    if (mask == 0xFFFFFFFFU) {
      const auto bits = std::bit_cast<std::uint64_t>(x);
      std::uint64_t differ = 0;
      for (const T y : v) differ |= std::bit_cast<std::uint64_t>(y) ^ bits;
      return differ == 0;
    }
    for (; mask != 0; mask &= mask - 1)
      if (v[static_cast<std::size_t>(std::countr_zero(mask))] != x) return false;
    return true;
  }
  // Whether the lanes of `mask` hold values within +-2^53.
  static bool exact_in(const LaneValues& v, std::uint32_t mask) {
    bool exact = true;
    for_lanes(mask, [&](int lane) { exact &= std::fabs(v[static_cast<std::size_t>(lane)]) <= kMaxExactValue; });
    return exact;
  }

  // f(lane) for each lane of `mask`, lowest first. A whole warp (the common case) takes a plain loop, which the
  // compiler unrolls and vectorizes, instead of stepping from bit to bit.
  template <typename F>
  static void for_lanes(std::uint32_t mask, F&& f) {
    if (mask == 0xFFFFFFFFU) {
      for (int lane = 0; lane < kWarpSize; ++lane) f(lane);
      return;
    }
    while (mask != 0) {
      const int lane = std::countr_zero(mask);
      mask &= mask - 1;
      f(lane);
    }
  }

  // `issuing` is non-zero inside a predicated (if-converted) if: the lanes of the warp that reached it. There every
  // statement issues even when no lane of `mask` is on, as nvcc's predicated instructions do.
  void run(const std::vector<Stmt>& body, std::uint32_t mask, std::uint32_t issuing = 0) {
    for (const Stmt& s : body) {
      if (mask == 0 && issuing == 0) return;
      switch (s.type) {
        case Stmt::Type::let:
          if (mask == 0) break;
          for (const auto& [slot, e] : s.lets) {
            Lanes64 v;
            eval_lanes(e, mask, v);
            LaneValues& dst = m_d->scope.lanes(slot);
            for_lanes(mask, [&](int lane) {
              dst[static_cast<std::size_t>(lane)] = static_cast<double>(v[static_cast<std::size_t>(lane)]);
            });
          }
          break;
        case Stmt::Type::branch: {
          std::uint32_t taken = 0;
          if (mask != 0) {
            Lanes64 v;
            eval_lanes(*s.cond, mask, v);
            for_lanes(mask, [&](int lane) {
              taken |= static_cast<std::uint32_t>(v[static_cast<std::size_t>(lane)] != 0)
                       << static_cast<unsigned>(lane);
            });
          }
          const std::uint32_t issue = s.predicated ? (issuing != 0 ? issuing : mask) : 0;
          run(s.body, taken, issue);
          run(s.else_body, mask & ~taken, issue);
          break;
        }
        case Stmt::Type::loop:
          run_loop(s, mask);
          break;
        case Stmt::Type::access:
          emit_access(s, mask);
          break;
        case Stmt::Type::barrier: {
          WarpRecord r;
          r.record = RecordKind::barrier;
          r.pc = pc(s);
          r.active_mask = mask;
          r.work = take_work();
          m_block->add(r, {});
          break;
        }
        case Stmt::Type::work: {
          std::int64_t most = 0;  // a warp issues an instruction once for all its active lanes
          const std::uint32_t lanes = mask != 0 ? mask : issuing;  // predicated off: issued all the same
          Lanes64 v;
          eval_lanes(*s.bytes, lanes, v);
          for_lanes(lanes, [&](int lane) { most = std::max(most, v[static_cast<std::size_t>(lane)]); });
          if (most < 0) fail_at(s.where, "work", std::countr_zero(lanes), "negative work");
          m_pending_work += static_cast<std::uint64_t>(most);
          break;
        }
      }
    }
  }

  void run_loop(const Stmt& s, std::uint32_t mask) {
    Lanes64 value{}, to{}, step{};
    eval_lanes(*s.from, mask, value);
    eval_lanes(*s.to, mask, to);
    eval_lanes(*s.step, mask, step);
    for_lanes(mask, [&](int lane) {
      if (step[static_cast<std::size_t>(lane)] == 0) fail_at(s.where, "step", lane, "loop step is 0");
    });
    LaneValues& var = m_d->scope.lanes(s.var);
    const std::uint32_t outer_copy = m_copy;
    if (same_in(value, mask) && same_in(to, mask) && same_in(step, mask)) {
      // Every lane runs the same iterations (the usual counted loop): one counter for all of them.
      const auto first = static_cast<std::size_t>(std::countr_zero(mask));
      const std::int64_t end = to[first], by = step[first];
      for (std::int64_t i = 0, at = value[first];; ++i, at += by) {
        m_copy = outer_copy * s.unroll + static_cast<std::uint32_t>(i % s.unroll);
        for_lanes(mask, [&](int lane) { var[static_cast<std::size_t>(lane)] = static_cast<double>(at); });
        if (by > 0 ? at >= end : at <= end) break;
        run(s.body, mask);
      }
      m_copy = outer_copy;
      return;
    }
    for (std::uint32_t i = 0;; ++i) {
      // An unrolled loop's body exists `unroll` times in the binary: copy i % unroll of it runs, at its own pcs.
      m_copy = outer_copy * s.unroll + i % s.unroll;
      std::uint32_t active = 0;
      for_lanes(mask, [&](int lane) {
        const auto l = static_cast<std::size_t>(lane);
        if (step[l] > 0 ? value[l] < to[l] : value[l] > to[l]) active |= 1U << static_cast<unsigned>(lane);
        var[l] = static_cast<double>(value[l]);
      });
      if (active == 0) break;
      run(s.body, active);
      for_lanes(active,
                [&](int lane) { value[static_cast<std::size_t>(lane)] += step[static_cast<std::size_t>(lane)]; });
      mask = active;
    }
    m_copy = outer_copy;
  }

  // Statement pcs are below 2^20 (kPcStep apart); unrolled copies sit above.
  [[nodiscard]] std::uint32_t pc(const Stmt& s) const { return s.pc + (m_copy << 20U); }

  std::uint32_t take_work() {
    const auto w = static_cast<std::uint32_t>(std::min<std::uint64_t>(m_pending_work, 0xFFFFFFFFU));
    m_pending_work = 0;
    return w;
  }

  // Address of array[index] for one lane, checked against the array's bounds and the access alignment.
  [[nodiscard]] std::uint64_t address(int array, const Expression& index, std::int64_t i, std::uint32_t size,
                                      int lane) const {
    const DescribedArray& a = m_d->info.arrays[static_cast<std::size_t>(array)];
    const std::uint64_t offset = static_cast<std::uint64_t>(i) * a.element_bytes;
    if (i < 0 || offset + size > a.bytes())
      fail_at(
          index.where(), index.key(), lane,
          fmt::format("{}[{}] is outside the array ({} elements of {} bytes)", a.name, i, a.length, a.element_bytes));
    const std::uint64_t addr = a.base + offset;
    if ((std::has_single_bit(size) ? addr & (size - 1) : addr % size) != 0)
      fail_at(index.where(), index.key(), lane,
              fmt::format("{}[{}] at 0x{:x} is not aligned to its {}-byte access (the GPU would fault)", a.name, i,
                          addr, size));
    return addr;
  }

  void emit_access(const Stmt& s, std::uint32_t mask) {
    const DescribedArray& a = m_d->info.arrays[static_cast<std::size_t>(s.array)];
    WarpRecord r;
    r.pc = pc(s);
    r.active_mask = mask;
    r.kind = s.kind;
    r.hint = s.hint;
    r.space = a.space;
    r.size = static_cast<std::uint8_t>(a.element_bytes * s.vector);
    r.work = take_work();
    std::array<std::uint64_t, kWarpSize> lanes;  // the first n: the active lanes' addresses
    int n = 0;
    if (mask == 0) {  // a predicated-off instruction: issued, no lane accesses memory
      m_block->add(r, {});
      if (s.kind == AccessKind::async_copy) {
        r.space = AddressSpace::shared;
        r.work = 0;
        m_block->add(r, {});
      }
      return;
    }
    if (s.kind == AccessKind::bulk_copy) {
      const int first = std::countr_zero(mask);
      const std::int64_t bytes = eval(*s.bytes, first);
      if (bytes <= 0 || bytes % 16 != 0 || bytes > 0xFFFFFFFF)
        fail_at(s.bytes->where(), "bytes", first,
                fmt::format("bulk copy of {} bytes: a positive multiple of 16", bytes));
      r.bulk_bytes = static_cast<std::uint32_t>(bytes);
      r.size = 16;
      Lanes64 b, from, to;
      eval_lanes(*s.bytes, mask, b);
      eval_lanes(*s.index, mask, from);
      eval_lanes(*s.to_index, mask, to);
      for_lanes(mask, [&](int lane) {
        const auto l = static_cast<std::size_t>(lane);
        if (b[l] != bytes) fail_at(s.where, "bytes", lane, "bulk copy size differs between lanes");
        lanes[static_cast<std::size_t>(n++)] = address(s.array, *s.index, from[l], 16, lane);
        (void)address(s.to_array, *s.to_index, to[l], 16, lane);
      });
      const DescribedArray& src = a;
      for (int i = 0; i < n; ++i)
        if (lanes[static_cast<std::size_t>(i)] + r.bulk_bytes > src.base + src.bytes())
          fail_at(s.where, "bytes", first, fmt::format("bulk copy runs past the end of {}", src.name));
      m_block->add(r, {lanes.data(), static_cast<std::size_t>(n)});
      return;
    }
    Lanes64 idx;
    eval_lanes(*s.index, mask, idx);
    add_record(r, addresses(s.array, *s.index, idx, mask, r.size, lanes));
    if (s.kind == AccessKind::async_copy) {  // the shared-memory write of the same instruction
      eval_lanes(*s.to_index, mask, idx);
      r.space = AddressSpace::shared;
      r.work = 0;
      add_record(r, addresses(s.to_array, *s.to_index, idx, mask, r.size, lanes));
    }
  }

  // The addresses of array[idx[lane]] for the lanes of `mask`, into `out`. All lanes are computed and checked at
  // once; where one is outside the array or misaligned, address() lane by lane raises the first one's error.
  std::span<const std::uint64_t> addresses(int array, const Expression& index, const Lanes64& idx, std::uint32_t mask,
                                           std::uint32_t size, std::array<std::uint64_t, kWarpSize>& out) const {
    const DescribedArray& a = m_d->info.arrays[static_cast<std::size_t>(array)];
    const std::uint64_t bytes = a.bytes();
    const bool pow2 = std::has_single_bit(size);
    const std::uint64_t align = pow2 ? size - 1 : 0;
    std::size_t n = 0;
    std::uint64_t bad = pow2 ? 0 : 1;  // other sizes: checked lane by lane
    for_lanes(mask, [&](int lane) {
      const std::int64_t i = idx[static_cast<std::size_t>(lane)];
      const std::uint64_t offset = static_cast<std::uint64_t>(i) * a.element_bytes;
      const std::uint64_t addr = a.base + offset;
      bad |= static_cast<std::uint64_t>(i < 0) | static_cast<std::uint64_t>(offset + size > bytes) | (addr & align);
      out[n++] = addr;
    });
    if (bad != 0) {
      n = 0;
      for_lanes(mask,
                [&](int lane) { out[n++] = address(array, index, idx[static_cast<std::size_t>(lane)], size, lane); });
    }
    return {out.data(), n};
  }

  // Appends a memory record with its active lanes' addresses. Lanes a fixed stride apart (most accesses: x[i],
  // tile[ty][tx], a column walk) go in as first address and stride, with the layout that stride gives (as the .mht
  // decoder adds its strided records): a block the simulator fills keeps them compact (BlockTrace::compact_strided).
  void add_record(const WarpRecord& r, std::span<const std::uint64_t> lanes) {
    const std::size_t n = lanes.size();
    const std::uint64_t stride = n > 1 ? lanes[1] - lanes[0] : 0;
    std::uint64_t off = 0;
    for (std::size_t i = 2; i < n; ++i) off |= (lanes[i] - lanes[i - 1]) ^ stride;
    if (off != 0) {
      m_block->add(r, lanes);
      m_block->compact_last_runs();  // a two-dimensional block's rows, where the simulator reads the block
      return;
    }
    const auto layout = static_cast<std::uint8_t>(kLayoutKnown | (stride <= 32 ? kLayoutDense : 0) |
                                                  (n == 1 || stride == r.size ? kLayoutGapless : 0));
    m_block->add_strided(r, n, lanes[0], stride, layout);
  }

  std::string m_yaml, m_label;  // what m_d was parsed from, for the copies next_blocks() makes
  std::vector<ParamOverride> m_overrides;
  std::unique_ptr<Description> m_d;
  std::vector<std::unique_ptr<Runner>> m_copies;
  std::uint32_t m_launches_done = 0;
  std::uint64_t m_next_block = 0;
  bool m_in_kernel = false;
  BlockTrace* m_block = nullptr;
  std::uint64_t m_pending_work = 0;
  std::vector<Warp> m_warps;  // warp_threads()'s
  std::uint32_t m_copy = 0;   // which unrolled copy of the enclosing loops runs (mixed radix over their unroll counts)
};

}  // namespace
}  // namespace desc

ParamOverride parse_param_override(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw InputError({"--set"}, text, "expected name=expression, e.g. --set n=4096");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::unique_ptr<DescriptionSource> load_kernel_description_string(const std::string& yaml, const std::string& label,
                                                                  const std::vector<ParamOverride>& overrides) {
  return std::make_unique<desc::Runner>(yaml, label, overrides);
}

std::unique_ptr<DescriptionSource> load_kernel_description(const std::filesystem::path& path,
                                                           const std::vector<ParamOverride>& overrides) {
  std::ifstream in(path);
  if (!in) throw InputError({path.string()}, "", "cannot open the kernel description");
  std::ostringstream text;
  text << in.rdbuf();
  return load_kernel_description_string(text.str(), path.string(), overrides);
}

}  // namespace memhier
