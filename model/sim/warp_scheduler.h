#pragma once
// The order in which an SM's warps issue their memory instructions, and how often they wait on loads.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../util/host_prefetch.h"
#include "../util/line_allocator.h"
#include "memhier/sim.h"
#include "memhier/trace.h"

namespace memhier {

// What issuing one record costs the SM: cycles of the memory pipeline and, for a load, cycles until its data are back.
struct IssueCost {
  std::uint32_t pipe_cycles = 0;
  std::uint32_t latency = 0;
};

// How often a warp waits on its loads. A warp issues loads until an instruction needs one's value; traces do not say
// which does, so a run of loads of distinct instructions (different pcs) counts as independent (the A and B loads of
// one matmul step, an unrolled loop's loads) and ends at the next store, barrier, non-memory work (it consumes the
// loads), or a load of an instruction already in the run (the next iteration of a loop that was not unrolled, a
// pointer chase). A run with a global or local load waits on memory (load_waits), one of shared loads only on shared
// memory (shared_waits).
class LoadRuns {
 public:
  // A load with no lane on (predicated off) reads nothing and leaves nothing to wait for.
  static bool is_load(const WarpRecord& r) {
    return r.is_memory() && (r.kind == AccessKind::load || r.kind == AccessKind::atomic) &&
           r.space != AddressSpace::constant && r.active_mask != 0;
  }
  // Forgets the run (a new warp in the slot).
  void clear() {
    m_count = 0;
    m_memory = false;
  }
  // Whether issuing `r` needs the values of the loads of the run so far (the warp waits for them first).
  [[nodiscard]] bool consumes(const WarpRecord& r) const {
    if (m_count == 0) return false;
    if (r.work != 0 || !r.is_memory() || r.kind == AccessKind::store || r.kind == AccessKind::reduction) return true;
    return is_load(r) && (m_count == m_pcs.size() ||
                          std::find(m_pcs.begin(), m_pcs.begin() + m_count, r.pc) != m_pcs.begin() + m_count);
  }
  // Notes `r` as issued, `consumed`: consumes(r) (asked when `r` was next, nothing having changed the run since).
  void record(const WarpRecord& r, bool consumed, SimCounters& c) {
    const bool memory =
        r.space == AddressSpace::global || r.space == AddressSpace::local || r.space == AddressSpace::texture;
    if (consumed) m_count = 0;
    if (!is_load(r)) return;
    if (m_count == 0) {
      m_memory = memory;
      ++(memory ? c.load_waits : c.shared_waits);
    } else if (memory && !m_memory) {  // the run now waits on memory
      m_memory = true;
      --c.shared_waits;
      ++c.load_waits;
    }
    m_pcs[m_count++] = r.pc;
  }

 private:
  std::array<std::uint32_t, 32> m_pcs{};  // more independent loads than this still wait once per 32
  std::size_t m_count = 0;
  bool m_memory = false;
};

// One SM's warps over a launch, issued in the order the SM would. Blocks take the SM's `places` (as many as occupancy
// lets be resident) in the order they are pushed; when a block's last warp is done, the next block waiting takes its
// place, and its thread slots, at once (the GPU starts a block as soon as one ends instead of waiting for a whole wave:
// validate/results/h100-2026-11-26c). The SM's memory pipeline takes one instruction at a time: `issue(block, record,
// cycle, slot, thread_base)` simulates it and says how many cycles it holds the pipeline (an L1 data-stage pass, shared
// wavefront or constant replay a cycle) and when its data are back. A warp's slot (place by place, then warp by warp)
// puts it on sub-partition slot mod `sub_partitions`; the sub-partitions take the pipeline in turn, each offering its
// oldest warp (lowest slot) that can issue, so within a sub-partition a later warp runs only while every earlier one
// waits; a block that takes a place takes its priority too. On the H100 oldest first keeps more of a kernel's data in
// the caches than going on with the warp that issued last (greedy then oldest, the model until stop 32):
// register_spill, whose 64 warps an SM each store and twice re-read 8 KiB of local data, keeps 57% of its local loads
// in L1 (ncu), 53% oldest first, 36% greedy then oldest; over the eighth suite run the weighted DRAM read error falls
// from 7.0% to 2.9% (validate/results/h100-2026-11-24d). A warp can issue a cycle after its previous instruction, after
// its non-memory work (a cycle an instruction) and, if the instruction consumes pending loads, once their data are
// back; a warp at a barrier waits for every running warp of its block, then the barrier's latency. Stores never wait.
// Async copies (cp.async, bulk copies) do not stall the warp that issues them; the block waits for them at its next
// barrier (cp.async.wait_group or an mbarrier wait, then __syncthreads), so every warp released from a barrier the
// block reached with copies in flight counts an async wait (a double-buffered tile loop: one a tile, for every warp,
// though only one thread issued the bulk copy).
//
// A launch's blocks come in batches (simulate() reads a trace a few waves at a time): run() issues until a place
// frees up with no block left to take it, and the next run() goes on from there with the next batch's blocks, the
// cycle counting on; run(.., last = true) issues everything. A block still running when a batch ends is kept by the
// scheduler (a long one: the records it has left to issue, keep_rest), so the caller may reuse its blocks' storage.
// Aligned, and its vectors in lines of their own (LineVector), as SmFront is: SMs run on all host threads.
class alignas(128) WarpScheduler {
 public:
  // `place_base[p]`: the thread slot (numbered over all SMs, for local memory) of place p's first thread; a block's
  // warps are at most `warps_per_place` (the launch's block size in warps).
  WarpScheduler() = default;  // start() before use
  WarpScheduler(const std::vector<std::uint64_t>& place_base, std::size_t warps_per_place,
                std::uint32_t barrier_latency, std::size_t sub_partitions = 1) {
    start(place_base, warps_per_place, barrier_latency, sub_partitions);
  }
  // Forgets everything for a new launch, keeping the memory it holds (a trace of many short launches would otherwise
  // spend its time building schedulers).
  void start(const std::vector<std::uint64_t>& place_base, std::size_t warps_per_place, std::uint32_t barrier_latency,
             std::size_t sub_partitions = 1) {
    m_base.assign(place_base.begin(), place_base.end());
    m_wpp = warps_per_place;
    m_barrier = barrier_latency;
    m_subs = std::max<std::size_t>(sub_partitions, 1);
    m_places.assign(m_base.size(), Place{});
    if (m_held.size() < m_base.size()) m_held.resize(m_base.size());
    for (BlockTrace& b : m_held) b.compact_strided = true;  // as simulate()'s blocks (they trade places)
    const std::size_t warps = m_base.size() * m_wpp;
    if (warps > (std::size_t{1} << kSlotBits)) throw std::logic_error("WarpScheduler: more than 4096 warps on one SM");
    m_warps.resize(warps);  // each warp is set up as its block takes the place (refill())
    for (BlockTrace& b : m_parts)
      if (!b.records.empty()) b.clear();  // a part left from an earlier launch (held_records())
    // Each slot's place and first thread's offset in it, tabled so that issuing divides by nothing, and remade only
    // when the shape changes: a launch of a few blocks must not touch every warp slot of every SM (on the GPU
    // machine's 16 cores, writing them into the Warps took a fifth of a short launch's time, 500 launches a trace).
    if (m_slot_place.size() != warps || m_slot_place_wpp != m_wpp) {
      m_slot_place.resize(warps);
      m_slot_thread.resize(warps);
      for (std::size_t p = 0, slot = 0; p < m_base.size(); ++p)
        for (std::size_t i = 0; i < m_wpp; ++i, ++slot) {
          m_slot_place[slot] = static_cast<std::uint16_t>(p);  // at most 4096 slots (checked above)
          m_slot_thread[slot] = static_cast<std::uint32_t>(i * kWarpSize);
        }
      m_slot_place_wpp = m_wpp;
    }
    m_ready.assign((warps + 63) / 64, 0);
    if (m_sub_bits.size() != m_ready.size() * m_subs || m_sub_bits_of != m_subs) {
      m_sub_bits.assign(m_ready.size() * m_subs, 0);
      for (std::size_t slot = 0; slot < m_ready.size() * 64; ++slot)
        m_sub_bits[slot / 64 * m_subs + slot % m_subs] |= std::uint64_t{1} << (slot % 64);
      m_sub_bits_of = m_subs;
    }
    m_later.clear();
    // The wheel is empty after a launch (every warp done); made once, and emptied where a bucket still holds a warp.
    if (m_wheel_head.size() != kWheelCycles) m_wheel_head.assign(kWheelCycles, kNoSlot);
    for (std::size_t w = 0; w < m_wheel_used.size(); ++w)
      for (std::uint64_t bits = m_wheel_used[w]; bits != 0; bits &= bits - 1)
        m_wheel_head[w * 64 + static_cast<std::size_t>(std::countr_zero(bits))] = kNoSlot;
    m_wheel_used.fill(0);
    if (m_wheel_next.size() < warps) m_wheel_next.resize(warps);
    m_wheel_at = 0;
    m_queue.clear();
    m_queue_at = m_active = m_live_places = 0;
    m_now = m_resident = 0;
    m_next_sub = 0;
  }

  void push(BlockTrace* b) {
    if (b->warp_count() > m_wpp) throw std::logic_error("WarpScheduler: a block of more warps than a place holds");
    m_queue.push_back(b);
  }
  // Whether a block is resident or waiting.
  [[nodiscard]] bool busy() const { return m_active != 0 || m_queue_at < m_queue.size() || m_live_places != 0; }
  // Blocks of at least this many records that run on into the next batch leave the scheduler only the records they
  // have left (a wave of shorter ones is at most a few tens of MB).
  static constexpr std::size_t kKeepRest = 1024;
  // Records in the scheduler's own storage: those of the blocks that ran on past a batch's end (a block done since
  // keeps its storage until the next batch's end replaces it).
  [[nodiscard]] std::size_t held_records() const {
    std::size_t n = 0;
    for (const BlockTrace& b : m_held) n += b.records.size();
    for (const BlockTrace& b : m_parts) n += b.records.size();
    return n;
  }
  // The most warps resident at once during the last run() (those of the blocks in places).
  [[nodiscard]] std::uint64_t resident_warps() const { return m_resident; }
  // The cycle the next instruction issues at, or later: after a run() stopped full, every instruction issued so far
  // issued before it.
  [[nodiscard]] std::uint64_t now() const { return m_now; }

  template <typename Issue>
  void run(SimCounters& counters, Issue&& issue, bool last) {
    run(counters, issue, last, [] { return false; });
  }
  // As above; `full()` is asked before each instruction, and true stops the run there (the SM's requests fill what a
  // round of a batch may hold: simulate.cpp): run() then returns true, and the next run() goes on from that
  // instruction with the blocks it was given (the caller keeps those it pushed and has not seen started: they stay
  // queued).
  template <typename Issue, typename Full>
  bool run(SimCounters& counters, Issue&& issue, bool last, Full&& full) {
    m_resident = 0;
    for (std::size_t p = 0; p < m_places.size(); ++p)
      if (m_places[p].block == nullptr) refill(p);
    note_resident();
    bool pause = false, stopped = false;
    while (m_active != 0 && !pause) {
      if (full()) {
        stopped = true;
        break;
      }
      wake_until_now();
      const std::uint32_t slot = pick();
      if (slot == ~0U) {  // nobody can issue: skip to the next wake-up (barrier waits always end: see below)
        m_now = next_wake();
        continue;
      }
      m_ready[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
      Warp& w = m_warps[slot];
      const std::size_t p = m_slot_place[slot];
      Place& place = m_places[p];
      const BlockTrace& block = *w.trace;  // the block's, or a part of the warp's records (next_part())
      const WarpRecord& r = block.records[w.next++];
      const IssueCost cost = issue(block, r, m_now, slot, m_base[p] + m_slot_thread[slot]);
      if (w.consumes) w.pending = 0;
      w.runs.record(r, w.consumes, counters);
      if (LoadRuns::is_load(r)) w.pending = std::max(w.pending, m_now + cost.latency);
      const std::uint64_t issued_at = m_now;
      m_now += std::max<std::uint32_t>(cost.pipe_cycles, 1);
      if ((r.kind == AccessKind::async_copy || r.kind == AccessKind::bulk_copy) && r.space == AddressSpace::global &&
          r.active_mask != 0)
        place.copying = 1;
      // Finished (no part left: `r` stays valid, as parts alternate between two buffers): no longer holds up its
      // block's barriers.
      if (w.next == w.end && !next_part(w, slot, *place.block)) {
        --m_active;
        if (--place.live == 0) {
          --m_live_places;
          place.block = nullptr;
          pause = !refill(p) && !last;
          note_resident();
        }
      } else if (!r.is_memory()) {
        w.at_barrier = true;
        ++place.arrived;
      } else {
        schedule(slot, earliest(w, *w.trace, issued_at + 1));
      }
      if (place.arrived != 0 && place.arrived >= place.live) {  // every running warp of the block is at the barrier
        for (std::size_t o = p * m_wpp; o < (p + 1) * m_wpp; ++o)
          if (m_warps[o].at_barrier) {
            m_warps[o].at_barrier = false;
            counters.async_waits += place.copying;
            schedule(static_cast<std::uint32_t>(o), earliest(m_warps[o], *m_warps[o].trace, issued_at + m_barrier));
          }
        place.arrived = 0;
        place.copying = 0;
      }
    }
    if (m_active == 0) {  // every block that came is done: the places are free for the next batch's
      m_queue.clear();
      m_queue_at = 0;
      return false;
    }
    // Blocks go on in the next batch: keep the running ones' traces, forget the ones done. A block of kKeepRest
    // records or more leaves only those it has left to issue (keep_rest); a shorter one is moved whole (its trace
    // swapped with one of the scheduler's: copying the rest of transpose_tiled's blocks at each batch's end cost 4% of
    // its host instructions). A run stopped full goes on with the same batch, whose blocks the caller keeps.
    for (std::size_t p = 0; p < m_places.size(); ++p) {
      BlockTrace* b = m_places[p].block;
      if (b == nullptr || stopped) continue;
      if (b->records.size() >= kKeepRest) {
        keep_rest(p);
      } else if (b != &m_held[p]) {
        std::swap(m_held[p], *b);
        m_places[p].block = &m_held[p];
        for (std::size_t i = p * m_wpp; i < (p + 1) * m_wpp; ++i)
          if (m_warps[i].trace == b) m_warps[i].trace = &m_held[p];
      }
    }
    m_queue.erase(m_queue.begin(), m_queue.begin() + static_cast<std::ptrdiff_t>(m_queue_at));
    m_queue_at = 0;
    return stopped;
  }

 private:
  struct Warp {
    const BlockTrace* trace = nullptr;  // whose records [next, end) the warp issues: its block's or a part's
    std::size_t next = 0, end = 0;
    std::uint64_t pending = 0;  // cycle the loads of the current run are all back
    bool at_barrier = false;
    bool consumes = false;  // whether records[next] consumes the run's loads (earliest() asked)
    LoadRuns runs;
  };
  struct Place {
    BlockTrace* block = nullptr;  // none: free
    std::uint32_t live = 0;       // warps not done
    std::uint32_t arrived = 0;    // warps at the barrier
    std::uint8_t copying = 0;     // async copies issued since its last barrier
  };
  // Warps that can issue now (a bit per slot; a lower slot is older) and, by cycle, those that can later. A warp that
  // can issue within kWheelCycles cycles of the first cycle not yet woken (m_wheel_at) waits in that cycle's bucket of
  // a timing wheel (a list of slots a cycle, linked through m_wheel_next; a bit a bucket that holds any); later ones
  // (long non-memory work) in a min-heap of (cycle, slot) packed in one key, cycle << 12 | slot (arch validation: at
  // most 4096 warps an SM). A cycle past 2^52 is kept as 2^52 - 1: the launch then issues past the 2^48 cycles
  // simulate() accepts, and fails there. (The heap alone cost the benchmark copy 128 host instructions a warp
  // instruction: every load's warp waited in it for its data.)
  static constexpr unsigned kSlotBits = 12;
  static constexpr std::uint64_t kLastCycle = (std::uint64_t{1} << (64 - kSlotBits)) - 1;
  static constexpr std::size_t kWheelCycles = 1024;  // more than any latency an arch gives a load (hundreds)
  static constexpr std::uint16_t kNoSlot = 0xFFFF;
  static std::uint64_t wake_cycle(std::uint64_t key) { return key >> kSlotBits; }
  static std::uint32_t wake_slot(std::uint64_t key) {
    return static_cast<std::uint32_t>(key & ((1U << kSlotBits) - 1U));
  }
  void ready(std::uint32_t slot) { m_ready[slot / 64] |= std::uint64_t{1} << (slot % 64); }
  void schedule(std::uint32_t slot, std::uint64_t at) {
    if (at <= m_now) {
      ready(slot);
    } else if (at - m_wheel_at < kWheelCycles) {  // at > m_now >= m_wheel_at - 1
      const std::size_t b = at % kWheelCycles;
      m_wheel_next[slot] = m_wheel_head[b];
      m_wheel_head[b] = static_cast<std::uint16_t>(slot);
      m_wheel_used[b / 64] |= std::uint64_t{1} << (b % 64);
    } else {
      m_later.push_back(std::min(at, kLastCycle) << kSlotBits | slot);
      std::push_heap(m_later.begin(), m_later.end(), std::greater<>());
    }
  }
  // Every warp waiting for a cycle up to m_now is ready.
  void wake_until_now() {
    if (m_now >= m_wheel_at) {
      // The buckets of cycles m_wheel_at to m_now (all of them, when that is the whole wheel), word by word of the
      // used bits.
      std::uint64_t at = m_wheel_at;
      const std::uint64_t end = m_now - m_wheel_at >= kWheelCycles ? m_wheel_at + kWheelCycles : m_now + 1;
      while (at < end) {
        const std::size_t b = at % kWheelCycles;
        const std::uint64_t bits = m_wheel_used[b / 64] >> (b % 64);
        if (bits == 0) {
          at += 64 - b % 64;
          continue;
        }
        at += static_cast<std::uint64_t>(std::countr_zero(bits));
        if (at >= end) break;
        const std::size_t k = at % kWheelCycles;
        for (std::uint16_t s = m_wheel_head[k]; s != kNoSlot; s = m_wheel_next[s]) ready(s);
        m_wheel_head[k] = kNoSlot;
        m_wheel_used[k / 64] &= ~(std::uint64_t{1} << (k % 64));
        ++at;
      }
      m_wheel_at = m_now + 1;
    }
    while (!m_later.empty() && wake_cycle(m_later.front()) <= m_now) {
      ready(wake_slot(m_later.front()));
      std::pop_heap(m_later.begin(), m_later.end(), std::greater<>());
      m_later.pop_back();
    }
  }
  // The first cycle after m_now a warp waits for (some warp does: barrier waits always end).
  [[nodiscard]] std::uint64_t next_wake() const {
    std::uint64_t next = m_later.empty() ? ~std::uint64_t{0} : wake_cycle(m_later.front());
    // The wheel's first used bucket from m_wheel_at on, around once.
    const std::size_t from = m_wheel_at % kWheelCycles;
    for (std::size_t i = 0; i <= m_wheel_used.size(); ++i) {
      const std::size_t w = (from / 64 + i) % m_wheel_used.size();
      std::uint64_t bits = m_wheel_used[w];
      if (i == 0) bits &= ~std::uint64_t{0} << (from % 64);                         // the first word from `from` on
      if (i == m_wheel_used.size()) bits &= (std::uint64_t{1} << (from % 64)) - 1;  // the same word, below it
      if (bits == 0) continue;
      const std::size_t b = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
      next = std::min<std::uint64_t>(next, m_wheel_at + (b + kWheelCycles - from) % kWheelCycles);
      break;
    }
    if (next == ~std::uint64_t{0}) throw std::logic_error("WarpScheduler: warps left but none can ever issue");
    return next;
  }
  // When `w` may issue its next record; notes whether that record consumes the run's loads (nothing changes the run
  // before it issues).
  static std::uint64_t earliest(Warp& w, const BlockTrace& b, std::uint64_t after) {
    const WarpRecord& r = b.records[w.next];
    std::uint64_t at = after + r.work;
    w.consumes = w.runs.consumes(r);
    if (w.consumes) at = std::max(at, w.pending);
    return at;
  }
  // The warp that issues now, ~0 if none can: each sub-partition offers its oldest ready warp, and they take the
  // memory pipeline in turn (the one after the sub-partition that issued last goes first).
  std::uint32_t pick() {
    if (m_subs == 1) {
      for (std::size_t i = 0; i < m_ready.size(); ++i)
        if (m_ready[i] != 0)
          return static_cast<std::uint32_t>(i * 64 + static_cast<std::size_t>(std::countr_zero(m_ready[i])));
      return ~0U;
    }
    // Sub-partitions counted round without a division (a 64-bit divide's latency on every instruction issued).
    for (std::size_t t = 0, k = m_next_sub; t < m_subs; ++t, k = k + 1 == m_subs ? 0 : k + 1) {
      for (std::size_t i = 0; i < m_ready.size(); ++i) {
        const std::uint64_t mine = m_ready[i] & m_sub_bits[i * m_subs + k];
        if (mine != 0) {
          m_next_sub = k + 1 == m_subs ? 0 : k + 1;
          return static_cast<std::uint32_t>(i * 64 + static_cast<std::size_t>(std::countr_zero(mine)));
        }
      }
    }
    return ~0U;
  }
  // Puts the next waiting block with work in free place p, its warps issuing from now; false if none is left (a block
  // whose warps have nothing to issue is done as it comes).
  bool refill(std::size_t p) {
    while (m_queue_at < m_queue.size()) {
      BlockTrace* b = m_queue[m_queue_at++];
      if (m_queue_at < m_queue.size()) prefetch_block(*m_queue[m_queue_at]);
      if (m_queue_at + 1 < m_queue.size()) host_prefetch(m_queue[m_queue_at + 1]);
      Place& place = m_places[p];
      place = {b, 0, 0, 0};
      for (std::size_t i = 0; i < m_wpp; ++i) {
        Warp& w = m_warps[p * m_wpp + i];
        w.trace = b;
        w.next = w.end = w.pending = 0;
        w.at_barrier = false;
        w.runs.clear();
        if (i < b->warp_count()) {
          w.next = b->warp_begin[i];
          w.end = b->warp_begin[i + 1];
        }
        if (w.next == w.end && (i >= b->warp_count() || !next_part(w, p * m_wpp + i, *b))) continue;
        ++place.live;
        ++m_active;
        schedule(static_cast<std::uint32_t>(p * m_wpp + i), earliest(w, *b, m_now));
      }
      if (place.live != 0) {
        ++m_live_places;
        return true;
      }
      place.block = nullptr;
    }
    return false;
  }
  // The next block waiting's warp table, first records and first addresses into the host cache as a block takes a
  // place, and the one after's trace: a batch's blocks were decoded long before and have left the host's caches
  // (transpose_tiled 73.1 -> 70.6 ms, the stream 93.8 -> 92.8, memhier_bench_sim one thread, this VM).
  static void prefetch_block(const BlockTrace& b) {
    if (!b.warp_begin.empty()) host_prefetch(b.warp_begin.data());
    host_prefetch_bytes(b.records.data(), std::min<std::size_t>(b.records.size() * sizeof(WarpRecord), 2048));
    host_prefetch_bytes(b.addresses.data(), std::min<std::size_t>(b.addresses.size() * sizeof(std::uint64_t), 1024));
  }
  // Warp `w` (at `slot`) of `block` has issued its records: its next part, if the block came in parts (BlockRest), into
  // the slot's part buffer it is not reading (`r` of the record just issued stays valid); false if it has none left.
  bool next_part(Warp& w, std::size_t slot, const BlockTrace& block) {
    if (!block.rest) return false;
    if (m_parts.size() < 2 * m_warps.size()) {  // made the first time a block in parts comes
      m_parts.resize(2 * m_warps.size());
      for (BlockTrace& b : m_parts) b.compact_strided = true;  // SmFront reads lanes through a LaneBuffer
    }
    BlockTrace& part = m_parts[2 * slot + (w.trace == &m_parts[2 * slot] ? 1 : 0)];
    if (!block.rest->next(m_slot_thread[slot] / kWarpSize, part)) return false;
    w.trace = &part;
    w.next = part.warp_begin[0];
    w.end = part.warp_begin[1];
    return w.next != w.end;
  }
  // Place p's block runs on into the next batch: m_held[p] becomes the records its warps have left to issue (with
  // their pool entries), in storage of their own (a warp issuing a part of its records goes on with it: the part is
  // the scheduler's), and the rest of a block in parts. Holding the whole block, as until stop 40, kept the records
  // issued too. matmul_naive at n=1024 (4 waves of blocks of 8 warps x 2049 records; oldest first leaves the later
  // places' blocks 45-70% to go when an SM's first block ends): 2.08 -> 1.84 GB peak, a wave of blocks being 0.9 GB.
  void keep_rest(std::size_t p) {
    const BlockTrace& from = *m_places[p].block;
    const std::size_t warps = from.warp_count();
    std::size_t records = 0, entries = 0;
    for (std::size_t i = 0; i < warps; ++i) {
      const Warp& w = m_warps[p * m_wpp + i];
      if (w.trace != &from) continue;
      records += w.end - w.next;
      for (std::size_t k = w.next; k < w.end; ++k) entries += BlockTrace::pool_entries(from.records[k]);
    }
    BlockTrace rest;
    rest.index = from.index;
    rest.compact_strided = from.compact_strided;
    rest.part_records = from.part_records;
    rest.rest = from.rest;
    rest.records.reserve(records);
    rest.addresses.reserve(entries);
    rest.warp_begin.reserve(warps + 1);
    rest.warp_begin.push_back(0);
    for (std::size_t i = 0; i < warps; ++i) {
      Warp& w = m_warps[p * m_wpp + i];
      if (w.trace != &from) {
        rest.warp_begin.push_back(static_cast<std::uint32_t>(rest.records.size()));
        continue;
      }
      const std::size_t next = rest.records.size();
      for (std::size_t k = w.next; k < w.end; ++k) {
        WarpRecord r = from.records[k];
        const auto first = from.addresses.begin() + r.address_index;
        r.address_index = static_cast<std::uint32_t>(rest.addresses.size());
        rest.addresses.insert(rest.addresses.end(), first,
                              first + static_cast<std::ptrdiff_t>(BlockTrace::pool_entries(r)));
        if (r.is_memory()) rest.lanes += static_cast<std::size_t>(r.active_lanes());
        rest.records.push_back(r);
      }
      rest.warp_begin.push_back(static_cast<std::uint32_t>(rest.records.size()));
      w.next = next;
      w.end = rest.records.size();
      w.trace = &m_held[p];
    }
    m_held[p] = std::move(rest);  // `from` may be m_held[p]: read whole above
    m_places[p].block = &m_held[p];
  }
  void note_resident() {
    std::uint64_t warps = 0;
    for (const Place& place : m_places)
      if (place.block != nullptr) warps += place.block->warp_count();
    m_resident = std::max(m_resident, warps);
  }

  LineVector<std::uint64_t> m_base;
  std::size_t m_wpp = 0;
  std::uint32_t m_barrier = 0;
  std::size_t m_subs = 1;  // sub-partitions: warp slot s is on sub-partition s mod m_subs
  LineVector<Place> m_places;
  std::vector<BlockTrace> m_held;           // traces of blocks running on from an earlier batch, a place each
  std::vector<BlockTrace> m_parts;          // of a block in parts: two a warp slot, in turn, for the warp's records
  LineVector<Warp> m_warps;                 // place p's warps at slots p * m_wpp ...
  LineVector<std::uint16_t> m_slot_place;   // per slot: slot / m_wpp
  LineVector<std::uint32_t> m_slot_thread;  // per slot: slot % m_wpp x 32
  std::size_t m_slot_place_wpp = 0;         // the m_wpp they were made for
  LineVector<BlockTrace*> m_queue;
  std::size_t m_queue_at = 0;
  std::size_t m_active = 0;  // warps with records left
  std::size_t m_live_places = 0;
  std::uint64_t m_now = 0;
  std::uint64_t m_resident = 0;
  std::size_t m_next_sub = 0;            // the sub-partition whose warp goes first next
  LineVector<std::uint64_t> m_sub_bits;  // of each ready word, the bits of each sub-partition's slots
  std::size_t m_sub_bits_of = 0;         // the sub-partitions m_sub_bits was made for
  LineVector<std::uint64_t> m_ready, m_later;
  LineVector<std::uint16_t> m_wheel_head, m_wheel_next;  // per bucket its first slot, per slot the next (kNoSlot: none)
  std::array<std::uint64_t, kWheelCycles / 64> m_wheel_used{};
  std::uint64_t m_wheel_at = 0;  // the first cycle whose waiting warps are not ready yet
};

}  // namespace memhier
