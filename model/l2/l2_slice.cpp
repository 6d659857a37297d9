#include "l2_slice.h"

#include <algorithm>
#include <bit>

namespace memhier {

void L2Slice::dram(std::uint64_t address, std::uint64_t bytes, bool write, SimCounters& c, bool batched) {
  (write ? c.dram_write_bytes : c.dram_read_bytes) += bytes;
  std::uint64_t within = 0;
  const std::uint64_t row = m_row.divide(address / kLineBytes, within);  // simulate() refuses other line sizes
  // The row's bank, and a write-back's entry: the high half of a multiplicative hash scaled to the table's size.
  const std::uint64_t h = (row * 0x9E3779B97F4A7C15ULL) >> 32U;
  const auto bank = static_cast<std::size_t>((h * m_open_rows.size()) >> 32U);
  m_bank_bytes[bank][write ? 1 : 0] += bytes;
  if (batched) {  // a row its warp instruction's previous line (a read) or its SM's previous write opened
    ++c.dram_row_hits;
    return;
  }
  if (write) {
    WrittenRow& e = m_written_rows[static_cast<std::size_t>((h * m_written_rows.size()) >> 32U)];
    const bool grouped = e.code == ~row && m_writebacks - e.at <= kWriteWindow;
    e = {~row, m_writebacks++};
    if (grouped) {
      ++c.dram_row_hits;
    } else {
      ++c.dram_row_misses;
      ++c.dram_write_row_misses;
    }
    return;
  }
  std::uint64_t& open = m_open_rows[bank];
  if (row == open) {
    ++c.dram_row_hits;
    return;
  }
  ++c.dram_row_misses;
  open = row;
}

// In line in fill(), a call a line fetched otherwise.
[[gnu::always_inline]] inline void L2Slice::dram_fetch(std::uint64_t line, unsigned granules, SimCounters& c,
                                                       bool batched) {
  const std::uint64_t bytes = std::uint64_t{granules} * m_spec.fetch_bytes;
  c.dram_read_bytes += bytes;
  std::uint64_t within = 0;
  const std::uint64_t row = m_row.divide(line, within);
  const std::uint64_t h = (row * 0x9E3779B97F4A7C15ULL) >> 32U;  // as dram()'s
  const auto bank = static_cast<std::size_t>((h * m_open_rows.size()) >> 32U);
  m_bank_bytes[bank][0] += bytes;
  std::uint64_t& open = m_open_rows[bank];
  const bool opens = !batched && row != open;
  c.dram_row_hits += granules - (opens ? 1U : 0U);
  c.dram_row_misses += opens ? 1U : 0U;
  if (opens) open = row;
}

void L2Slice::take_channel_bytes(std::vector<std::uint64_t>& read, std::vector<std::uint64_t>& write) {
  for (std::size_t b = 0; b < m_bank_bytes.size(); ++b) {
    read[m_bank_channel[b]] += m_bank_bytes[b][0];
    write[m_bank_channel[b]] += m_bank_bytes[b][1];
    m_bank_bytes[b] = {0, 0};
  }
}

void L2Slice::flush(SimCounters& c) {
  const std::uint64_t line_bytes = m_spec.geometry.line_bytes;
  m_cache.flush([&](std::uint64_t line, std::uint8_t dirty, bool batched) {
    dram(line * line_bytes, static_cast<std::uint64_t>(std::popcount(dirty)) * m_spec.geometry.sector_bytes, true, c,
         batched);
  });
  m_partials = 0;
  m_partial_order.clear();
}

L2Slice::L2Slice(const L2SliceSpec& spec)
    : m_spec(spec),
      m_cache(spec.geometry, spec.slices),
      m_open_rows(std::max<std::uint32_t>(spec.dram_banks, 1), ~std::uint64_t{0}),
      m_written_rows(kWrittenRows),
      m_fetch_sectors(static_cast<unsigned>(spec.fetch_bytes / spec.geometry.sector_bytes)),
      m_row(std::uint64_t{spec.slices} * std::max<std::uint64_t>(spec.dram_row_bytes / spec.geometry.line_bytes, 1)) {
  for (std::uint32_t s = 0; s < m_granules.size(); ++s) {
    m_granules[s] = static_cast<std::uint8_t>(compute_granules(s));
    m_granule_count[s] =
        static_cast<std::uint8_t>(static_cast<unsigned>(std::popcount(m_granules[s])) / m_fetch_sectors);
  }
  // Bank b of slice i is bank i x banks + b of the device, whose channel is its share of all banks times the channels.
  const std::uint64_t banks = m_open_rows.size(), all = banks * std::max<std::uint32_t>(spec.slices, 1);
  const std::uint64_t channels = std::max<std::uint32_t>(spec.dram_channels, 1);
  for (std::uint64_t b = 0; b < banks; ++b)
    m_bank_channel.push_back(static_cast<std::uint32_t>((std::uint64_t{spec.index} * banks + b) * channels / all));
  m_bank_bytes.assign(banks, {0, 0});
  for (std::uint64_t n = 0; n < m_beats.size(); ++n)
    m_beats[n] = (n * spec.geometry.sector_bytes + spec.slice_width - 1) / spec.slice_width;
}

std::uint32_t L2Slice::compute_granules(std::uint32_t sectors) const {
  const CacheGeometry& g = m_spec.geometry;
  const auto group = static_cast<unsigned>(m_spec.fetch_bytes / g.sector_bytes);
  const std::uint32_t group_mask = (1U << group) - 1U;
  const auto sectors_per_line = static_cast<unsigned>(g.line_bytes / g.sector_bytes);
  std::uint32_t out = 0;
  for (unsigned first = 0; first < sectors_per_line; first += group)
    if ((sectors & (group_mask << first)) != 0) out |= group_mask << first;
  return out;
}

// Inlined into the lookups, a call a missed line (cachegrind, the benchmark gather: 1.5% of the host instructions went
// to the call's register saves and restores).
[[gnu::always_inline]] inline std::uint32_t L2Slice::allocate(const L2Request& r, L2Property property, SimCounters& c) {
  const std::uint32_t slot = m_cache.victim(r.set, property);
  if (m_cache.holds_line(slot)) {
    const SetCache::State old = m_cache.state(slot);
    // Its partly written sectors are written back with its other dirty data; a dirty line homed here goes to DRAM.
    m_partials -= static_cast<std::uint64_t>(std::popcount(old.partial));
    if (old.dirty != 0)
      dram(m_cache.line(slot) * m_spec.geometry.line_bytes,
           static_cast<std::uint64_t>(std::popcount(old.dirty)) * m_spec.geometry.sector_bytes, true, c,
           old.batched != 0);
  }
  m_cache.fill(slot, r.line, r.set, property);
  return slot;
}

// ncu's lts__t_sectors_op_write_lookup_hit equals lts__t_sectors_op_write on every H100 suite kernel, cold streaming
// copies included (validate/results/h100-2026-11-22/report): a write allocates its sectors without a fetch and counts
// as a hit. Reads and atomics hit only on valid sectors. Each lookup occupies the slice for whole beats, an atomic or
// a reduction for a beat a sector (count_atomic). H100, every line in L2 (validate/results/h100-2026-11-28-l2atomics):
// a warp's 4-byte reductions to 32 sectors take 7.50 ps a lookup device-wide, as reads do (7.58), its 4-byte atomics
// (the old values returned) 9.96 ps, l2.atom_beat_cost read beats; atomics to each word of one line take 12.4 ps a
// sector looked up, which whole beats (half a beat a sector) would put under half of what they take. (Reductions to
// each word of a line take 7.38 ps a sector, about the time of whole-line reads and writes: the probe's address
// arithmetic binds those three, 68-72% of the issue slots busy, so they neither support nor contradict a beat a
// sector.)
//
// Each kind of request has its own path (a switch on the kind here, not a test of it at every step: cachegrind,
// `memhier simulate` of the benchmark copy and gather, 4.2% and 5.0% fewer host instructions than one near() and one
// home() for every kind).
void L2Slice::serve(L2Slice* group, int partitions, const L2Request& r, SimCounters& c) {
  const int home = r.home, from = r.from;
  const bool far = home != from;
  switch (r.op) {
    case L2Op::read:
      if (!far) {
        if (r.sectors != 0) group[home].home_read<false>(r, r.sectors, c);
      } else if (const std::uint32_t forward = group[from].near_read(r, c); forward != 0) {
        group[home].home_read<true>(r, forward, c);
      }
      return;  // a read leaves the other partitions' copies as they are
    case L2Op::write:
      if ((far ? group[from].near_write(r, c) : r.sectors) != 0) group[home].home_write(r, far, c);
      break;
    case L2Op::atom:
    case L2Op::red:
      if ((far ? group[from].near_atomic(r, c) : r.sectors) != 0) group[home].home_atomic(r, far, c);
      break;
  }
  // The data changed: copies elsewhere are stale (near_*() dropped or refreshed the requester's).
  for (int p = 0; p < partitions; ++p)
    if (p != home && p != from) group[p].drop_copy(r);
}

// The copy keeps what a read brings back (whole fetch granules) and the sectors a write wrote whole: the home slice
// owns the dirty data, the copy is clean. A line entering as a copy never persists: the set-aside holds a window's
// lines once, at home. On the H100 a 16 MiB persisting buffer read by SMs of both partitions keeps most of its benefit
// in 5 set-aside ways (15.6 MiB), which copies counted against the set-aside would overrun by half
// (validate/results/h100-2026-11-22f/probe/persisting_l2.json: s14_hot16 63.9 us a launch, no window 77.7, 6 ways
// 61.4).
[[gnu::always_inline]] inline std::uint32_t L2Slice::near_read(const L2Request& r, SimCounters& c) {
  const std::uint32_t slot = m_cache.find(r.line, r.set);
  const auto sectors = static_cast<std::uint64_t>(std::popcount(r.sectors));
  if (slot == SetCache::kNone) {
    count_read(sectors, 0, c);
    const L2Property copy = r.property == L2Property::persisting ? L2Property::normal : r.property;
    m_cache.valid(allocate(r, copy, c)) = static_cast<std::uint8_t>(granules(r.sectors));
    return r.sectors;
  }
  const std::uint32_t have = m_cache.valid(slot);
  const auto hits = static_cast<std::uint64_t>(std::popcount(r.sectors & have));
  count_read(sectors, hits, c);
  if (m_cache.persisting(slot)) c.l2_persisting_hits += hits;
  m_cache.touch(slot);
  const std::uint32_t missing = r.sectors & ~have;
  m_cache.valid(slot) |= static_cast<std::uint8_t>(granules(missing));
  return missing;
}

// Copies of written lines take room as those of read ones do: on the H100 a steady copy kernel runs out of L2 where
// reads alone do, at about 32 MiB of footprint, not at the ~40 MiB it would if writes left none
// (validate/results/h100-2026-11-24/probe: l2cap_copy 32 MiB misses 25% of its reads, l2cap_read 32 MiB 23%). A line
// written only in part takes its way too: without it the suite's transpose_naive and softmax_naive write 7-22% less
// to DRAM (further from ncu; validate/results/h100-2026-11-24f).
[[gnu::always_inline]] inline std::uint32_t L2Slice::near_write(const L2Request& r, SimCounters& c) {
  const std::uint32_t slot = m_cache.find(r.line, r.set);
  count_write(static_cast<std::uint64_t>(std::popcount(r.sectors)), c);
  const auto kept = static_cast<std::uint8_t>(full_sectors(r.words) & r.sectors);
  if (slot != SetCache::kNone) {
    m_cache.touch(slot);
    m_cache.valid(slot) |= kept;
  } else {
    const L2Property copy = r.property == L2Property::persisting ? L2Property::normal : r.property;
    m_cache.valid(allocate(r, copy, c)) = kept;
  }
  return r.sectors;  // a write goes on to the home slice whole
}

// Atomics and reductions run at home: a copy here would be stale. ncu counts the lookup a hit, as a write's (H100,
// lines in L2 that atomics of both partitions keep changing, so no copy holds them: every atomic and reduction lookup
// a hit, 1.5 a sector; validate/results/h100-2026-11-28-l2atomics).
std::uint32_t L2Slice::near_atomic(const L2Request& r, SimCounters& c) {
  const auto sectors = static_cast<std::uint64_t>(std::popcount(r.sectors));
  count_atomic(r.op, sectors, sectors, c);
  drop_copy(r);
  return r.sectors;
}

void L2Slice::drop_copy(const L2Request& r) {
  const std::uint32_t slot = m_cache.find(r.line, r.set);
  if (slot == SetCache::kNone) return;
  end_partial(slot, 0xFU);
  m_cache.invalidate(slot);
}

// Some sectors of one line from one warp instruction. A sector that another sector of the same request brings in
// (through the DRAM fetch granularity) still counts as a miss, as ncu counts it. A far read travels in whole fetch
// granules (H100 lts sectors for isolated far sectors: 2.0x the L1 sectors; sim_check); a far write, atomic or
// reduction in its own sectors (H100, a 4-byte atomic or reduction to each of 32 sectors: 1.50 lookups an L1 sector;
// validate/results/h100-2026-11-28-l2atomics).
template <bool kFar>
[[gnu::always_inline]] inline void L2Slice::home_read(const L2Request& r, std::uint32_t sectors, SimCounters& c) {
  const std::uint32_t want = kFar ? granules(sectors) : sectors;
  const auto n = static_cast<std::uint64_t>(std::popcount(want));
  if (kFar) c.l2_far_sectors += n;
  const Found f = look_up(r, want, c);
  count_read(n, f.hits, c);
  fill(r, f.slot, want, f.before, c);
}

void L2Slice::home_atomic(const L2Request& r, bool far, SimCounters& c) {
  const std::uint32_t want = r.sectors;
  const auto n = static_cast<std::uint64_t>(std::popcount(want));
  if (far) c.l2_far_sectors += n;
  const Found f = look_up(r, want, c);
  count_atomic(r.op, n, f.hits, c);
  const bool was_clean = m_cache.dirty(f.slot) == 0;
  fill(r, f.slot, want, f.before, c);
  m_cache.dirty(f.slot) |= static_cast<std::uint8_t>(want);
  if (was_clean) limit_dirty(r.set, f.slot, c);
}

[[gnu::always_inline]] inline L2Slice::Found L2Slice::look_up(const L2Request& r, std::uint32_t want, SimCounters& c) {
  Found f{m_cache.find(r.line, r.set), 0, 0};
  if (f.slot != SetCache::kNone) {
    f.before = m_cache.valid(f.slot);
    f.hits = static_cast<std::uint64_t>(std::popcount(want & f.before));
    if (f.hits != 0 && m_cache.persisting(f.slot)) c.l2_persisting_hits += f.hits;
    m_cache.touch(f.slot);
  } else {
    f.slot = allocate(r, r.property, c);
  }
  return f;
}

// Each aligned group of sectors (the DRAM granularity) that holds a missing wanted sector is fetched; the written
// words of those sectors merge with the fetched bytes.
[[gnu::always_inline]] inline void L2Slice::fill(const L2Request& r, std::uint32_t slot, std::uint32_t want,
                                                 std::uint32_t before, SimCounters& c) {
  SetCache::State& st = m_cache.state(slot);
  const std::uint32_t missing = want & ~before;
  if (const std::uint32_t fetch = granules(missing); fetch != 0) {
    dram_fetch(r.line, m_granule_count[missing], c, r.row_follows != 0);
    end_partial(slot, fetch);
    st.valid |= static_cast<std::uint8_t>(fetch);
  }
  st.valid |= static_cast<std::uint8_t>(want);
}

[[gnu::always_inline]] inline void L2Slice::home_write(const L2Request& r, bool far, SimCounters& c) {
  const std::uint32_t want = r.sectors;
  const auto n = static_cast<std::uint64_t>(std::popcount(want));
  if (far) c.l2_far_sectors += n;
  count_write(n, c);
  std::uint32_t slot = m_cache.find(r.line, r.set);
  if (slot != SetCache::kNone) {
    // A write finds a sector written in part as much as a whole one.
    if (m_cache.persisting(slot))
      c.l2_persisting_hits +=
          static_cast<std::uint64_t>(std::popcount(want & (m_cache.valid(slot) | m_cache.partial(slot))));
    m_cache.touch(slot);
  } else {
    slot = allocate(r, r.property, c);
  }
  // No fetch: sectors written whole become valid, others wait for their other words.
  SetCache::State& st = m_cache.state(slot);
  const bool was_clean = st.dirty == 0;
  const std::uint32_t fresh = want & ~static_cast<std::uint32_t>(st.valid);
  if (fresh != 0) {
    // A stream's stores, here without a call: every sector written whole and none written in part before (so none
    // holds words) become valid and nothing else changes. write_words() takes the rest.
    if ((st.partial & fresh) == 0 && (full_sectors(r.words) & fresh) == fresh) {
      st.valid |= static_cast<std::uint8_t>(fresh);
    } else {
      write_words(slot, r.line, fresh, r.words);
    }
  }
  st.dirty |= static_cast<std::uint8_t>(want);
  st.batched |= r.row_follows;
  if (was_clean) limit_dirty(r.set, slot, c);
  if (m_spec.partial_sectors_max != 0 && m_partials > m_spec.partial_sectors_max) fill_partials(c);
}

// The H100 writes back data a steady write-only kernel leaves dirty once its footprint passes about 24 MiB, half the
// L2, where reads of the same footprint (copies included) still hit: l2cap_write 24 MiB writes 18% of its bytes back
// to DRAM a launch, 28 MiB 67%, 32 MiB 95%, while l2cap_read 24 MiB misses 2% of its reads and 28 MiB 8%
// (validate/results/h100-2026-11-24/probe). A set holding at most half its ways dirty gives that edge (24.4 MiB with
// lines spread evenly), without changing a read's or a copy's, whose dirty halves are smaller (archs/h100.yaml
// l2.dirty_fraction_max).
void L2Slice::write_back(std::uint32_t old, SimCounters& c) {
  const CacheGeometry& g = m_spec.geometry;
  dram(m_cache.line(old) * g.line_bytes, static_cast<std::uint64_t>(std::popcount(m_cache.dirty(old))) * g.sector_bytes,
       true, c, m_cache.batched(old) != 0);
  end_partial(old, m_cache.partial(old));  // its written words are in DRAM now; the slice holds none of those sectors
  m_cache.dirty(old) = 0;
  m_cache.batched(old) = 0;
}

void L2Slice::write_words(std::uint32_t slot, std::uint64_t line, std::uint32_t sectors, std::uint32_t words) {
  std::uint8_t& partial = m_cache.partial(slot);
  std::uint32_t& held = m_cache.words(slot);
  for (std::uint32_t left = sectors; left != 0; left &= left - 1) {
    const auto s = static_cast<std::uint32_t>(std::countr_zero(left));
    const std::uint32_t shift = 8 * s, bit = 1U << s;
    // What a sector not written in part holds in `held` means nothing (SetCache::words).
    const std::uint32_t before = (partial & bit) != 0 ? held : 0U;
    const std::uint32_t w = ((before | words) >> shift) & 0xFFU;
    held &= ~(0xFFU << shift);
    if (w == 0xFFU) {  // complete
      m_cache.valid(slot) |= static_cast<std::uint8_t>(bit);
      if ((partial & bit) != 0) --m_partials;
      partial &= static_cast<std::uint8_t>(~bit);
      continue;
    }
    held |= w << shift;
    if ((partial & bit) != 0) continue;
    partial |= static_cast<std::uint8_t>(bit);
    ++m_partials;
    if (m_spec.partial_sectors_max == 0) continue;
    m_partial_order.push_back({line, slot, s});
    // Entries of sectors completed or gone since pile up; drop them once they are as many as the live ones.
    if (m_partial_order.size() > 2 * (m_partials + 1024)) {
      std::erase_if(m_partial_order, [&](const Partial& e) {
        return m_cache.line(e.slot) != e.line || (m_cache.partial(e.slot) >> e.sector & 1U) == 0;
      });
    }
  }
}

void L2Slice::end_partial(std::uint32_t slot, std::uint32_t sectors) {
  std::uint8_t& partial = m_cache.partial(slot);
  const std::uint32_t gone = partial & sectors;
  if (gone == 0) return;
  m_partials -= static_cast<std::uint64_t>(std::popcount(gone));
  partial &= static_cast<std::uint8_t>(~gone);  // their words in SetCache::words() mean nothing from now
}

// The H100's L2 (US patent 9,110,809 describes the mechanism: partial writes counted, fills issued past a threshold):
// the oldest partly written sector, and any other of its fetch granule, goes to DRAM with its written bytes and comes
// back whole and clean. The sectors coming back are written into the slice, and ncu counts each as a write lookup
// that misses: lts__t_sectors_op_write exceeds the 1.5 lookups an L1 store sector of its partition's copy and its
// home by about the DRAM bytes read / 32, neither from the SMs nor from the other partition
// (validate/results/h100-2026-11-26e: stores of 1 to 4 words into 32-byte structures the L2 lacks, 2.30-1.74 an L1
// store sector; this count gives 2.48-1.74; validate/results/h100-2026-11-24f: pw_open's 8 words in groups of 1024 to
// 4096 sectors, 1.536-1.598, this count 1.530-1.603, lookup hits as many as the other lookups).
void L2Slice::fill_partials(SimCounters& c) {
  const CacheGeometry& g = m_spec.geometry;
  while (m_partials > m_spec.partial_sectors_max && !m_partial_order.empty()) {
    const Partial e = m_partial_order.front();
    m_partial_order.pop_front();
    if (m_cache.line(e.slot) != e.line || (m_cache.partial(e.slot) >> e.sector & 1U) == 0) continue;  // stale
    const std::uint32_t first = e.sector / m_fetch_sectors * m_fetch_sectors;
    const std::uint32_t granule = ((1U << m_fetch_sectors) - 1U) << first;
    const std::uint32_t written = m_cache.partial(e.slot) & granule;
    dram(e.line * g.line_bytes + e.sector * g.sector_bytes,
         static_cast<std::uint64_t>(std::popcount(written)) * g.sector_bytes, true, c);
    dram(e.line * g.line_bytes + first * g.sector_bytes, m_spec.fetch_bytes, false, c);
    c.l2_write_sectors += m_fetch_sectors;  // the fetched sectors written in: lookups that miss
    c.l2_beats += m_beats[m_fetch_sectors];
    c.l2_write_beats += m_beats[m_fetch_sectors];
    end_partial(e.slot, written);
    m_cache.dirty(e.slot) &= static_cast<std::uint8_t>(~written);
    m_cache.valid(e.slot) |= static_cast<std::uint8_t>(granule);
    ++c.l2_partial_fills;
  }
}

}  // namespace memhier
