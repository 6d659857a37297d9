// Runs a kernel description warp by warp, SIMT style: an if splits the active mask, a loop runs while any lane is
// still in range, and every access statement emits one warp record with the addresses the CUDA kernel would compute.
// A warp's walk through the statements is an explicit stack of frames, so that it can stop after a number of records
// and go on later: a consumer that takes blocks in parts (BlockTrace::part_records, the simulator) gets each warp's
// first records, and the rest part by part as it issues them, instead of a wave of long blocks whole.
#include <fmt/format.h>
#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <exception>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "desc_model.h"

namespace memhier {
namespace desc {
namespace {

using Lanes64 = std::array<std::int64_t, kWarpSize>;

// Where a warp is in the description: what a recursive walk of its statements would hold on its call stack.
struct Frame {
  enum class Kind : std::uint8_t { body, loop, lane_loop };
  Kind kind = Kind::body;
  bool else_body = false;        // body: its owner's else branch
  int owner = -1;                // body: the statement (Stmt::id) whose body it is, -1 the kernel's; a loop: the loop
  std::uint32_t mask = 0;        // body: its lanes on; a loop: its lanes running (a lane loop's: of its last iteration)
  std::uint32_t issuing = 0;     // body: inside a predicated if, the lanes that reached it (Runner::exec())
  std::uint32_t outer_copy = 0;  // a loop: the unrolled copy of the loops around it
  std::uint64_t next = 0;        // body: its next statement; a loop: the iteration about to start
  std::int64_t at = 0, end = 0, by = 0;  // loop (every lane the same): the counter, its bound and step
};

// A warp stopped between two parts of its records.
struct WarpState {
  std::vector<Frame> stack;
  std::vector<std::array<Lanes64, 3>> lane_loops;  // of the lane loops on the stack, innermost last: value, to, step
  std::vector<LaneValues> variables;               // the scope's slots from Description::fixed_slots on
  std::uint32_t copy = 0;
  // No pending work: a warp stops right after the record that filled its part, which took the work before it.
};

class RunnerPool;

// The warps with records left of a block handed out in parts, each taking its next part on a runner of the pool's.
class DescRest final : public BlockRest {
 public:
  DescRest(std::shared_ptr<RunnerPool> pool, Dim3 index, std::size_t part, std::size_t warps)
      : m_pool(std::move(pool)), m_index(index), m_part(part), m_warps(warps) {}
  bool next(std::size_t w, BlockTrace& out) override;
  std::optional<WarpState>& warp(std::size_t w) { return m_warps[w]; }

 private:
  std::shared_ptr<RunnerPool> m_pool;
  Dim3 m_index;
  std::size_t m_part;
  std::vector<std::optional<WarpState>> m_warps;  // none: done
};

class Runner final : public DescriptionSource {
 public:
  // `pool`: where the blocks it hands out in parts take their later parts; none for a runner that only makes those.
  Runner(std::string yaml, std::string label, std::vector<ParamOverride> overrides, std::shared_ptr<RunnerPool> pool)
      : m_yaml(std::move(yaml)),
        m_label(std::move(label)),
        m_overrides(std::move(overrides)),
        m_d(parse_description(m_yaml, m_label, m_overrides)),
        m_pool(std::move(pool)) {
    number(m_d->body);
  }
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
    while (m_copies.size() + 1 < workers)  // parsed here, on one thread
      m_copies.push_back(std::make_unique<Runner>(m_yaml, m_label, m_overrides, m_pool));
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

  // Warp `w` of block `index`, stopped at `st`: its next records into `out` (emptied, one warp opened), `part` or a
  // few more. Returns whether the warp is done (`st` then means nothing).
  bool resume_part(Dim3 index, std::size_t w, WarpState& st, BlockTrace& out, std::size_t part) {
    out.clear();
    out.begin_warp();
    out.index = index;
    m_block = &out;
    set_block(index);
    if (m_warps.empty()) warp_threads();
    Scope& scope = m_d->scope;
    for (std::size_t d = 0; d < 3; ++d) scope.lanes(m_d->thread_slot[d]) = m_warps[w].thread[d];
    for (int slot = m_d->fixed_slots; slot < scope.size(); ++slot)
      scope.lanes(slot) = st.variables[static_cast<std::size_t>(slot - m_d->fixed_slots)];
    m_copy = st.copy;
    m_pending_work = 0;
    const bool done = resume(st, part);
    out.trim_pool();
    if (done) return true;
    save(st);
    return false;
  }

 private:
  // Numbers the statements of `body` and those inside them, depth first (Stmt::id): a warp's frames name them so, and
  // go on in any runner of the description.
  void number(std::vector<Stmt>& body) {
    for (Stmt& s : body) {
      s.id = static_cast<int>(m_stmts.size());
      m_stmts.push_back(&s);
      number(s.body);
      number(s.else_body);
    }
  }
  void set_block(Dim3 index) {
    Scope& scope = m_d->scope;
    scope.set_uniform(m_d->block_slot[0], index.x);
    scope.set_uniform(m_d->block_slot[1], index.y);
    scope.set_uniform(m_d->block_slot[2], index.z);
  }

  // Fills `block` with block number `b` of the launch (blockIdx linearised, x fastest): each warp's records whole, or
  // where the block asks for parts (part_records), about that many, the warps that have more going on in its rest.
  void generate(std::uint64_t b, BlockTrace& block) {
    const KernelLaunch& k = m_d->launch;
    block.clear();
    block.index = {static_cast<std::uint32_t>(b % k.grid.x), static_cast<std::uint32_t>(b / k.grid.x % k.grid.y),
                   static_cast<std::uint32_t>(b / (std::uint64_t{k.grid.x} * k.grid.y))};
    m_block = &block;
    set_block(block.index);
    if (m_warps.empty()) warp_threads();
    Scope& scope = m_d->scope;
    const std::size_t part = m_pool ? block.part_records : 0;
    std::shared_ptr<DescRest> rest;
    for (std::size_t w = 0; w < m_warps.size(); ++w) {
      block.begin_warp();
      for (int slot = m_d->fixed_slots; slot < scope.size(); ++slot) scope.set_uniform(slot, 0);
      for (std::size_t d = 0; d < 3; ++d) scope.lanes(m_d->thread_slot[d]) = m_warps[w].thread[d];
      m_pending_work = 0;
      m_copy = 0;
      m_state.stack.assign(1, Frame{});
      m_state.stack.back().mask = m_warps[w].mask;
      m_state.lane_loops.clear();
      if (resume(m_state, part)) continue;
      save(m_state);
      if (!rest) rest = std::make_shared<DescRest>(m_pool, block.index, part, m_warps.size());
      rest->warp(w) = std::move(m_state);
      m_state = {};
    }
    block.rest = std::move(rest);
  }

  // What a stopped warp keeps of the runner's state.
  void save(WarpState& st) const {
    Scope& scope = m_d->scope;
    st.variables.resize(static_cast<std::size_t>(scope.size() - m_d->fixed_slots));
    for (int slot = m_d->fixed_slots; slot < scope.size(); ++slot)
      st.variables[static_cast<std::size_t>(slot - m_d->fixed_slots)] = scope.lanes(slot);
    st.copy = m_copy;
    if (m_pending_work != 0) throw std::logic_error("desc::Runner: a warp stopped with work pending");
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
      if (std::bit_cast<std::uint64_t>(v[1]) != bits) return false;  // a thread index's value: it differs at once
      std::uint64_t differ = 0;
      for (const T y : v) differ |= std::bit_cast<std::uint64_t>(y) ^ bits;
      return differ == 0;
    }
    for (; mask != 0; mask &= mask - 1)
      if (v[static_cast<std::size_t>(std::countr_zero(mask))] != x) return false;
    return true;
  }
  // A bit a lane of `v` (a whole warp's values) that is not 0. Two lanes a compare where SSE4.1 has it (the x86-64-v2
  // baseline), instead of a variable shift a lane (an if's condition cost reduction_shared's description 4% of its
  // host instructions so).
  static std::uint32_t nonzero_lanes(const Lanes64& v) {
    std::uint32_t zero = 0;
#if defined(__SSE4_1__)
    const __m128i z = _mm_setzero_si128();
    for (int q = 0; q < kWarpSize / 2; ++q) {
      const __m128i pair = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&v[static_cast<std::size_t>(2 * q)]));
      zero |= static_cast<std::uint32_t>(_mm_movemask_pd(_mm_castsi128_pd(_mm_cmpeq_epi64(pair, z)))) << (2 * q);
    }
#else
    for (int lane = 0; lane < kWarpSize; ++lane)
      zero |= static_cast<std::uint32_t>(v[static_cast<std::size_t>(lane)] == 0) << static_cast<unsigned>(lane);
#endif
    return ~zero;
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

  // Runs the warp at `st` until it has added `limit` records to m_block or a few more (an access adds up to two; 0: no
  // limit), or its statements end. Returns whether they ended.
  bool resume(WarpState& st, std::size_t limit) {
    const std::size_t start = m_block->records.size();
    while (!st.stack.empty()) {
      if (limit != 0 && m_block->records.size() - start >= limit) return false;
      Frame& f = st.stack.back();
      switch (f.kind) {
        case Frame::Kind::body: {
          const std::vector<Stmt>& body = body_of(f);
          if (f.next == body.size() || (f.mask == 0 && f.issuing == 0)) {
            st.stack.pop_back();
            break;
          }
          const Stmt& s = body[f.next++];
          exec(st, s, f.mask, f.issuing);  // by value: exec() may push frames, moving f
          break;
        }
        case Frame::Kind::loop:
          step_loop(st);
          break;
        case Frame::Kind::lane_loop:
          step_lane_loop(st);
          break;
      }
    }
    return true;
  }

  [[nodiscard]] const std::vector<Stmt>& body_of(const Frame& f) const {
    if (f.owner < 0) return m_d->body;
    const Stmt& s = *m_stmts[static_cast<std::size_t>(f.owner)];
    return f.else_body ? s.else_body : s.body;
  }
  static Frame body_frame(int owner, bool else_body, std::uint32_t mask, std::uint32_t issuing) {
    Frame f;
    f.owner = owner;
    f.else_body = else_body;
    f.mask = mask;
    f.issuing = issuing;
    return f;
  }

  // One statement for the lanes of `mask`. `issuing` is non-zero inside a predicated (if-converted) if: the lanes of
  // the warp that reached it. There every statement issues even when no lane of `mask` is on, as nvcc's predicated
  // instructions do.
  void exec(WarpState& st, const Stmt& s, std::uint32_t mask, std::uint32_t issuing) {
    switch (s.type) {
      case Stmt::Type::let:
        if (mask == 0) break;
        for (const auto& [slot, e] : s.lets) {
          Lanes64 v;
          eval_lanes(e, mask, v);
          LaneValues& dst = m_d->scope.lanes(slot);
          if (mask == 0xFFFFFFFFU) {
            to_doubles(v, dst);
          } else {
            for_lanes(mask, [&](int lane) {
              dst[static_cast<std::size_t>(lane)] = static_cast<double>(v[static_cast<std::size_t>(lane)]);
            });
          }
        }
        break;
      case Stmt::Type::branch: {
        std::uint32_t taken = 0;
        if (mask != 0) {
          Lanes64 v;
          eval_lanes(*s.cond, mask, v);
          if (mask == 0xFFFFFFFFU) {
            taken = nonzero_lanes(v);
          } else {  // lanes off hold nothing eval_lanes wrote: not read
            for_lanes(mask, [&](int lane) {
              taken |= static_cast<std::uint32_t>(v[static_cast<std::size_t>(lane)] != 0)
                       << static_cast<unsigned>(lane);
            });
          }
        }
        const std::uint32_t issue = s.predicated ? (issuing != 0 ? issuing : mask) : 0;
        st.stack.push_back(body_frame(s.id, true, mask & ~taken, issue));  // runs second
        st.stack.push_back(body_frame(s.id, false, taken, issue));
        break;
      }
      case Stmt::Type::loop:  // never inside a predicated if (the parser's check): `mask` has a lane on
        start_loop(st, s, mask);
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
        for_lanes(lanes, [&](int lane) {
          const std::int64_t w = v[static_cast<std::size_t>(lane)];
          if (w < 0) fail_at(s.where, "work", lane, fmt::format("negative work ({})", w));
          most = std::max(most, w);
        });
        m_pending_work += static_cast<std::uint64_t>(most);
        break;
      }
    }
  }

  // A loop's frame: one counter when every lane runs the same iterations (the usual counted loop), else each lane's.
  void start_loop(WarpState& st, const Stmt& s, std::uint32_t mask) {
    Lanes64 value{}, to{}, step{};
    eval_lanes(*s.from, mask, value);
    eval_lanes(*s.to, mask, to);
    eval_lanes(*s.step, mask, step);
    for_lanes(mask, [&](int lane) {
      if (step[static_cast<std::size_t>(lane)] == 0) fail_at(s.where, "step", lane, "loop step is 0");
    });
    Frame f;
    f.owner = s.id;
    f.mask = mask;
    f.outer_copy = m_copy;
    if (same_in(value, mask) && same_in(to, mask) && same_in(step, mask)) {
      const auto first = static_cast<std::size_t>(std::countr_zero(mask));
      f.kind = Frame::Kind::loop;
      f.at = value[first];
      f.end = to[first];
      f.by = step[first];
    } else {
      f.kind = Frame::Kind::lane_loop;
      st.lane_loops.push_back({value, to, step});
    }
    st.stack.push_back(f);
  }

  // An unrolled loop's body exists `unroll` times in the binary: iteration i runs copy i % unroll of it, at its own
  // pcs (pc()).
  void set_copy(const Frame& f, const Stmt& s) {
    m_copy = f.outer_copy * s.unroll + static_cast<std::uint32_t>(f.next % s.unroll);
  }

  // The next iteration of the counted loop on top of the stack, or its end.
  void step_loop(WarpState& st) {
    Frame& f = st.stack.back();
    const Stmt& s = *m_stmts[static_cast<std::size_t>(f.owner)];
    set_copy(f, s);
    LaneValues& var = m_d->scope.lanes(s.var);
    const auto at = static_cast<double>(f.at);
    for_lanes(f.mask, [&](int lane) { var[static_cast<std::size_t>(lane)] = at; });
    if (f.by > 0 ? f.at >= f.end : f.at <= f.end) {
      m_copy = f.outer_copy;
      st.stack.pop_back();
      return;
    }
    ++f.next;
    f.at += f.by;
    const std::uint32_t mask = f.mask;
    st.stack.push_back(body_frame(s.id, false, mask, 0));
  }

  // The next iteration of the lane loop on top of the stack (the lanes still in range), or its end.
  void step_lane_loop(WarpState& st) {
    Frame& f = st.stack.back();
    const Stmt& s = *m_stmts[static_cast<std::size_t>(f.owner)];
    // References, not a structured binding: the lambdas below capture them (clang before 16 cannot capture bindings).
    std::array<Lanes64, 3>& loop = st.lane_loops.back();
    Lanes64 &value = loop[0], &to = loop[1], &step = loop[2];
    if (f.next != 0)  // the lanes of the iteration just run step on
      for_lanes(f.mask,
                [&](int lane) { value[static_cast<std::size_t>(lane)] += step[static_cast<std::size_t>(lane)]; });
    set_copy(f, s);
    LaneValues& var = m_d->scope.lanes(s.var);
    std::uint32_t active = 0;
    for_lanes(f.mask, [&](int lane) {
      const auto l = static_cast<std::size_t>(lane);
      if (step[l] > 0 ? value[l] < to[l] : value[l] > to[l]) active |= 1U << static_cast<unsigned>(lane);
      var[l] = static_cast<double>(value[l]);
    });
    if (active == 0) {
      m_copy = f.outer_copy;
      st.lane_loops.pop_back();
      st.stack.pop_back();
      return;
    }
    f.mask = active;
    ++f.next;
    st.stack.push_back(body_frame(s.id, false, active, 0));
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
    // Elements are 1 to 16 bytes, a power of two (parse_description): a shift, which the compiler vectorizes where it
    // does not a 64-bit multiply.
    const auto shift = static_cast<unsigned>(std::countr_zero(a.element_bytes));
    const auto at = [&](std::int64_t i) {
      const std::uint64_t offset = static_cast<std::uint64_t>(i) << shift;
      const std::uint64_t addr = a.base + offset;
      bad |= static_cast<std::uint64_t>(i < 0) | static_cast<std::uint64_t>(offset + size > bytes) | (addr & align);
      return addr;
    };
    if (mask == 0xFFFFFFFFU) {  // a whole warp: lane l's address in out[l]
      for (std::size_t l = 0; l < kWarpSize; ++l) out[l] = at(idx[l]);
      n = kWarpSize;
    } else {
      for_lanes(mask, [&](int lane) { out[n++] = at(idx[static_cast<std::size_t>(lane)]); });
    }
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
    if (n == kWarpSize) {  // a whole warp: a loop of known length, which the compiler vectorizes
      std::uint64_t a = lanes[0];
      for (std::size_t i = 0; i < kWarpSize; ++i, a += stride) off |= lanes[i] ^ a;
    } else {
      for (std::size_t i = 2; i < n; ++i) off |= (lanes[i] - lanes[i - 1]) ^ stride;
    }
    if (off != 0) {
      // A two-dimensional block's rows (runs), where the simulator reads the block: found before the lanes are copied.
      if (m_block->compact_strided && n == kWarpSize) {
        if (const std::optional<LaneRuns> runs = find_lane_runs(lanes)) {
          m_block->add_runs(r, *runs, runs_layout(*runs, r.size));
          return;
        }
      }
      m_block->add(r, lanes);
      return;
    }
    const auto layout = static_cast<std::uint8_t>(kLayoutKnown | (stride <= 32 ? kLayoutDense : 0) |
                                                  (n == 1 || stride == r.size ? kLayoutGapless : 0));
    m_block->add_strided(r, n, lanes[0], stride, layout);
  }

  std::string m_yaml, m_label;  // what m_d was parsed from, for the copies next_blocks() makes
  std::vector<ParamOverride> m_overrides;
  std::unique_ptr<Description> m_d;
  std::shared_ptr<RunnerPool> m_pool;
  std::vector<const Stmt*> m_stmts;  // by Stmt::id
  WarpState m_state;                 // of the warp being generated
  std::vector<std::unique_ptr<Runner>> m_copies;
  std::uint32_t m_launches_done = 0;
  std::uint64_t m_next_block = 0;
  bool m_in_kernel = false;
  BlockTrace* m_block = nullptr;
  std::uint64_t m_pending_work = 0;
  std::vector<Warp> m_warps;  // warp_threads()'s
  std::uint32_t m_copy = 0;   // which unrolled copy of the enclosing loops runs (mixed radix over their unroll counts)
};

// Runners of one description for the later parts of its blocks, one a thread at a time, made as threads ask for them.
class RunnerPool {
 public:
  RunnerPool(std::string yaml, std::string label, std::vector<ParamOverride> overrides)
      : m_yaml(std::move(yaml)), m_label(std::move(label)), m_overrides(std::move(overrides)) {}
  std::unique_ptr<Runner> take() {
    {
      const std::lock_guard<std::mutex> lock(m_mutex);
      if (!m_idle.empty()) {
        std::unique_ptr<Runner> r = std::move(m_idle.back());
        m_idle.pop_back();
        return r;
      }
    }
    return std::make_unique<Runner>(m_yaml, m_label, m_overrides, nullptr);  // parsed outside the lock
  }
  void give(std::unique_ptr<Runner> r) {
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_idle.push_back(std::move(r));
  }

 private:
  std::string m_yaml, m_label;
  std::vector<ParamOverride> m_overrides;
  std::mutex m_mutex;
  std::vector<std::unique_ptr<Runner>> m_idle;
};

bool DescRest::next(std::size_t w, BlockTrace& out) {
  out.clear();
  out.begin_warp();
  if (w >= m_warps.size() || !m_warps[w]) return false;
  std::unique_ptr<Runner> runner = m_pool->take();
  bool done = false;
  try {
    done = runner->resume_part(m_index, w, *m_warps[w], out, m_part);
  } catch (...) {
    m_pool->give(std::move(runner));
    throw;
  }
  m_pool->give(std::move(runner));
  if (done) m_warps[w].reset();
  return !out.records.empty();
}

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
  return std::make_unique<desc::Runner>(yaml, label, overrides,
                                        std::make_shared<desc::RunnerPool>(yaml, label, overrides));
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
