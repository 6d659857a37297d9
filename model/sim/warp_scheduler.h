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

#include "memhier/sim.h"
#include "memhier/trace.h"

namespace memhier {

// What issuing one record costs the SM: cycles of the memory pipeline and, for a load, cycles until its data are back.
struct IssueCost {
  std::uint32_t pipe_cycles = 0;
  std::uint32_t latency = 0;
};

struct Resident {
  const BlockTrace* block = nullptr;
  std::uint64_t thread_base = 0;  // thread slot of the block's first thread, numbered over all SMs (local memory)
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
  // Whether issuing `r` needs the values of the loads of the run so far (the warp waits for them first).
  [[nodiscard]] bool consumes(const WarpRecord& r) const {
    if (m_count == 0) return false;
    if (r.work != 0 || !r.is_memory() || r.kind == AccessKind::store || r.kind == AccessKind::reduction) return true;
    return is_load(r) && (m_count == m_pcs.size() ||
                          std::find(m_pcs.begin(), m_pcs.begin() + m_count, r.pc) != m_pcs.begin() + m_count);
  }
  // Notes `r` as issued; returns whether it consumed the run's loads.
  bool record(const WarpRecord& r, SimCounters& c) {
    const bool memory =
        r.space == AddressSpace::global || r.space == AddressSpace::local || r.space == AddressSpace::texture;
    const bool consumed = consumes(r);
    if (consumed) m_count = 0;
    if (!is_load(r)) return consumed;
    if (m_count == 0) {
      m_memory = memory;
      ++(memory ? c.load_waits : c.shared_waits);
    } else if (memory && !m_memory) {  // the run now waits on memory
      m_memory = true;
      --c.shared_waits;
      ++c.load_waits;
    }
    m_pcs[m_count++] = r.pc;
    return consumed;
  }

 private:
  std::array<std::uint32_t, 32> m_pcs{};  // more independent loads than this still wait once per 32
  std::size_t m_count = 0;
  bool m_memory = false;
};

// Issues one SM's share of a wave in the order the SM would, and returns the resident warps it held. The SM's memory
// pipeline takes one instruction at a time: `issue(block, record, cycle, slot, thread_base)` simulates it and says
// how many cycles it holds the pipeline (an L1 data-stage pass, shared wavefront or constant replay a cycle) and when
// its data are back. Warps are picked oldest first: each cycle the oldest (lowest slot) warp that can issue does, so a
// younger warp runs only while every older one waits. On the H100 this keeps more of a kernel's data in the caches
// than going on with the warp that issued last (greedy then oldest, the model until stop 32): register_spill, whose 64
// warps an SM each store and twice re-read 8 KiB of local data, keeps 57% of its local loads in L1 (ncu), 53% oldest
// first, 36% greedy then oldest; over the eighth suite run the weighted DRAM read error falls from 7.0% to 2.9%
// (validate/results/h100-2026-11-24d). A warp can issue a cycle after its previous instruction,
// after its non-memory work (a cycle an instruction) and, if the instruction consumes pending loads, once their data
// are back; a warp at a barrier waits for every running warp of its block, then the barrier's latency. Stores never
// wait. `hint(block, record)` is told the record the issuing warp will probably issue next (a host-cache prefetch).
// Async copies (cp.async, bulk copies) do not stall the warp that issues them; the block waits for them at its next
// barrier (cp.async.wait_group or an mbarrier wait, then __syncthreads), so every warp released from a barrier the
// block reached with copies in flight counts an async wait (a double-buffered tile loop: one a tile, for every warp,
// though only one thread issued the bulk copy).
template <typename Issue, typename Hint>
std::uint64_t schedule_warps(const std::vector<Resident>& blocks, std::uint32_t barrier_latency, SimCounters& counters,
                             Issue&& issue, Hint&& hint) {
  struct Warp {
    const BlockTrace* block;
    std::size_t block_index;
    std::size_t next, end;
    std::uint64_t thread_base;
    std::uint64_t pending = 0;  // cycle the loads of the current run are all back
    bool at_barrier = false;
    LoadRuns runs;
  };
  // Scratch kept per host thread: an SM's share of a wave is small, so allocating it afresh would cost more than it.
  thread_local std::vector<Warp> warps;
  thread_local std::vector<std::uint32_t> arrived, live;
  thread_local std::vector<std::uint8_t> copying;  // per block: async copies issued since its last barrier
  thread_local std::vector<std::uint64_t> ready;
  warps.clear();
  arrived.assign(blocks.size(), 0);
  live.assign(blocks.size(), 0);
  copying.assign(blocks.size(), 0);
  for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
    const BlockTrace& b = *blocks[bi].block;
    for (std::size_t w = 0; w < b.warp_count(); ++w) {
      warps.push_back(
          {&b, bi, b.warp_begin[w], b.warp_begin[w + 1], blocks[bi].thread_base + w * kWarpSize, 0, false, {}});
      if (b.warp_begin[w] != b.warp_begin[w + 1]) ++live[bi];
    }
  }
  // Warps that can issue now (a bit per slot; a lower slot is older) and, by cycle, those that can later: a min-heap
  // of (cycle, slot) packed in one key, cycle << 12 | slot (arch validation: at most 4096 warps an SM). A cycle past
  // 2^52 is kept as 2^52 - 1: the wave then issues past the 2^48 cycles simulate() accepts, and fails there.
  constexpr unsigned kSlotBits = 12;
  constexpr std::uint64_t kLastCycle = (std::uint64_t{1} << (64 - kSlotBits)) - 1;
  if (warps.size() > (std::size_t{1} << kSlotBits))
    throw std::logic_error("schedule_warps: more than 4096 warps on one SM");
  ready.assign((warps.size() + 63) / 64, 0);
  thread_local std::vector<std::uint64_t> later;
  later.clear();
  auto wake_cycle = [](std::uint64_t key) { return key >> kSlotBits; };
  auto wake_slot = [](std::uint64_t key) { return static_cast<std::uint32_t>(key & ((1U << kSlotBits) - 1U)); };
  auto pop_later = [&] {
    std::pop_heap(later.begin(), later.end(), std::greater<>());
    later.pop_back();
  };
  std::uint64_t now = 0;
  auto schedule = [&](std::uint32_t slot, std::uint64_t at) {
    if (at <= now)
      ready[slot / 64] |= std::uint64_t{1} << (slot % 64);
    else {
      later.push_back(std::min(at, kLastCycle) << kSlotBits | slot);
      std::push_heap(later.begin(), later.end(), std::greater<>());
    }
  };
  auto earliest = [&](const Warp& w, std::uint64_t after) {  // when `w` may issue its next record
    const WarpRecord& r = w.block->records[w.next];
    std::uint64_t at = after + r.work;
    if (w.runs.consumes(r)) at = std::max(at, w.pending);
    return at;
  };
  std::size_t active = 0;
  for (std::size_t slot = 0; slot < warps.size(); ++slot)
    if (warps[slot].next != warps[slot].end) {
      ++active;
      schedule(static_cast<std::uint32_t>(slot), earliest(warps[slot], 0));
    }
  while (active != 0) {
    while (!later.empty() && wake_cycle(later.front()) <= now) {
      const std::uint32_t woken = wake_slot(later.front());
      ready[woken / 64] |= std::uint64_t{1} << (woken % 64);
      pop_later();
    }
    std::uint32_t slot = ~0U;
    for (std::size_t i = 0; i < ready.size() && slot == ~0U; ++i)
      if (ready[i] != 0)
        slot = static_cast<std::uint32_t>(i * 64 + static_cast<std::size_t>(std::countr_zero(ready[i])));
    if (slot == ~0U) {  // nobody can issue: skip to the next wake-up (barrier waits always end: see below)
      if (later.empty()) throw std::logic_error("schedule_warps: warps left but none can ever issue");
      now = wake_cycle(later.front());
      continue;
    }
    ready[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
    Warp& w = warps[slot];
    const WarpRecord& r = w.block->records[w.next++];
    if (w.next != w.end) hint(*w.block, w.block->records[w.next]);
    const IssueCost cost = issue(*w.block, r, now, slot, w.thread_base);
    if (w.runs.record(r, counters)) w.pending = 0;
    if (LoadRuns::is_load(r)) w.pending = std::max(w.pending, now + cost.latency);
    const std::uint64_t issued_at = now;
    now += std::max<std::uint32_t>(cost.pipe_cycles, 1);
    const std::size_t b = w.block_index;
    if ((r.kind == AccessKind::async_copy || r.kind == AccessKind::bulk_copy) && r.space == AddressSpace::global &&
        r.active_mask != 0)
      copying[b] = 1;
    if (w.next == w.end) {  // finished: no longer holds up its block's barriers
      --active;
      --live[b];
    } else if (!r.is_memory()) {
      w.at_barrier = true;
      ++arrived[b];
    } else {
      schedule(slot, earliest(w, issued_at + 1));
    }
    if (arrived[b] != 0 && arrived[b] >= live[b]) {  // every running warp of the block is at the barrier
      for (std::size_t o = 0; o < warps.size(); ++o)
        if (warps[o].block_index == b && warps[o].at_barrier) {
          warps[o].at_barrier = false;
          counters.async_waits += copying[b];
          schedule(static_cast<std::uint32_t>(o), earliest(warps[o], issued_at + barrier_latency));
        }
      arrived[b] = 0;
      copying[b] = 0;
    }
  }
  return warps.size();
}

}  // namespace memhier
