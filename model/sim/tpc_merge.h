#pragma once
// Read misses the two SMs of a TPC make for the same sectors while one of them is in flight reach the L2 once.
//
// Measured on the H100 (validate/results/h100-2026-11-24b/probe, shared_reads.cu under ncu): 264 blocks each reading
// a 64 KiB chunk, no L1 hits in any pattern. Chunks read by no other block: 540,672 L1 sectors, 540,672 L2 sectors
// from L1TEX (lts__t_sectors_srcunit_tex_op_read). Chunks read by blocks 2j and 2j + 1, which the H100 places on the
// two SMs of one TPC (block_placement.cu): 290,636 L2 sectors, 54%. Chunks read by blocks j and j + 66, which run at
// the same time on other TPCs: 540,672 again. So misses merge within a TPC, not across TPCs or at the L2. With the odd
// blocks starting 125, 250, 500, 1000 and 2000 cycles late the share grows to 69, 75, 83, 95 and 100%: a block's reads
// take that long on the GPU. In the simulator they take the cycles their issue takes (warp_scheduler.h), fewer, and
// a late sibling shares none past `window` (the model's edge is sharp where the GPU's is gradual).
//
// Only a launch's first wave is placed in pairs: later blocks go to whichever SM frees a place first, beside a block
// from elsewhere in the grid (validate/results/h100-2026-11-27-sibling-drift, the same on the H200: matmul_tiled
// n=1024's blocks 2j and 2j + 1 share a TPC in 556-564 of 2,048 pairs, about the first wave's 528, and the L2 is spared
// 7.4% of its read misses, where the model merging pairs in every wave spared 25%, now 6.4%; four other suite kernels
// keep 4-18% of their later pairs on one TPC: h100-2026-11-27-suite-placement). So only the first wave's reads merge
// (L2Request::paired).
//
// The replay sees every SM's requests in cycle order (simulate.cpp). A read from an SM finds what its sibling (the
// other SM of the pair: SMs 2t and 2t + 1, as the round-robin placement puts blocks 2j and 2j + 1 there) requested of
// the same line within the last `window` cycles (the L2 latency: until the data are back the request is in flight),
// and only the rest goes on to the L2. The table holds each (line, TPC) pair's latest request per SM, in 4-way sets;
// a pair evicted while still in flight loses its merges (the benchmark gather's victims: 4.1% still in flight; the
// copy's: none).
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "../util/host_prefetch.h"
#include "sim_types.h"

namespace memhier {

class TpcMerge {
 public:
  TpcMerge() : m_sets(kSets) {}
  // Forgets every request (a new slice group or wave: their cycles start over); `window`: cycles a read is in flight.
  void begin(std::uint64_t window) {
    m_window = window;
    if (++m_epoch == 0) {  // after 2^32 replays: clear for real so no old entry matches the restarted count
      std::fill(m_sets.begin(), m_sets.end(), Set{});
      m_epoch = 1;
    }
  }
  // Brings the set of (line, the TPC of SM `sm`) into the host's caches ahead of merged().
  void prefetch(std::uint64_t line, std::size_t sm) const {
    host_prefetch_bytes(&m_sets[set_of(line, static_cast<std::uint32_t>(sm / 2))], sizeof(Set));
  }
  // The sectors of `r`, a read from SM `sm` at r.cycle, that the other SM of its TPC asked for within the window;
  // notes r as in flight.
  std::uint32_t merged(const L2Request& r, std::size_t sm) {
    const auto tpc = static_cast<std::uint32_t>(sm / 2);
    const std::size_t k = sm % 2;
    Entry& e = find(r.line, tpc, r.cycle);
    std::uint32_t out = 0;
    if (e.sectors[1 - k] != 0 && r.cycle - e.cycle[1 - k] <= m_window) out = r.sectors & e.sectors[1 - k];
    const bool own_in_flight = e.sectors[k] != 0 && r.cycle - e.cycle[k] <= m_window;
    e.sectors[k] = static_cast<std::uint8_t>((own_in_flight ? e.sectors[k] : 0U) | r.sectors);
    e.cycle[k] = r.cycle;
    return out;
  }

 private:
  static constexpr std::size_t kSets = 1024, kWays = 4;
  struct Entry {
    std::uint64_t line = 0;
    std::array<std::uint64_t, 2> cycle{};   // of each SM's latest request
    std::uint32_t epoch = 0;                // 0: empty
    std::uint16_t tpc = 0;                  // simulate(): at most 65535 SMs
    std::array<std::uint8_t, 2> sectors{};  // each SM's sectors requested up to that cycle, still in flight
  };
  // 32-byte entries, a set in two host cache lines.
  struct alignas(64) Set {
    std::array<Entry, kWays> ways;
  };
  static_assert(sizeof(Entry) == 32 && sizeof(Set) == 128);
  // The entry of (line, tpc), taken from the set's least recently requested one when absent.
  Entry& find(std::uint64_t line, std::uint32_t tpc, std::uint64_t cycle) {
    Entry* set = m_sets[set_of(line, tpc)].ways.data();
    for (std::size_t w = 0; w < kWays; ++w)
      if (set[w].line == line && set[w].tpc == tpc && set[w].epoch == m_epoch) return set[w];
    // The victim: the last empty (old-epoch) entry, else the first of the least recently requested. As one minimum,
    // without a branch on the entries (a gather's requests take a victim nearly every time, and the host cannot
    // predict which way is oldest): an empty way w scores kWays - 1 - w, below every entry in use, which scores
    // (latest + 1) x kWays + w (cycles < 2^48).
    std::uint64_t best = ~std::uint64_t{0};
    for (std::size_t w = 0; w < kWays; ++w) {
      const std::uint64_t score = set[w].epoch == m_epoch ? (latest(set[w]) + 1) * kWays + w : kWays - 1 - w;
      best = std::min(best, score);
    }
    Entry& victim = set[best >= kWays ? best % kWays : kWays - 1 - best];
    victim = Entry{line, {cycle, cycle}, m_epoch, static_cast<std::uint16_t>(tpc), {0, 0}};
    return victim;
  }
  static std::size_t set_of(std::uint64_t line, std::uint32_t tpc) {
    const std::uint64_t h = (line * 0x9E3779B97F4A7C15ULL) ^ (std::uint64_t{tpc} * 0xC2B2AE3D27D4EB4FULL);
    return static_cast<std::size_t>((h >> 40U) % kSets);
  }
  static std::uint64_t latest(const Entry& e) { return std::max(e.cycle[0], e.cycle[1]); }

  std::uint64_t m_window = 0;
  std::vector<Set> m_sets;
  std::uint32_t m_epoch = 0;
};

}  // namespace memhier
