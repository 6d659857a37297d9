#include "l2_slice.h"

#include <bit>

namespace memhier {

void L2Slice::dram(std::uint64_t address, std::uint64_t bytes, bool write, SimCounters& c) {
  (write ? c.dram_write_bytes : c.dram_read_bytes) += bytes;
  const std::uint64_t row = address / m_spec.dram_row_bytes;
  if (row == m_open_row) ++c.dram_row_hits;
  else ++c.dram_row_misses;
  m_open_row = row;
}

void L2Slice::flush(SimCounters& c) {
  const std::uint64_t line_bytes = m_spec.geometry.line_bytes;
  m_cache.flush([&](std::uint64_t line, std::uint8_t dirty) {
    dram(line * line_bytes, static_cast<std::uint64_t>(std::popcount(dirty)) * m_spec.geometry.sector_bytes, true, c);
  });
}

// One request: some sectors of one line from one warp instruction. A sector that another sector of the same request
// brings in (through the DRAM fetch granularity) still counts as a miss, as ncu counts it.
void L2Slice::access(const L2Request& r, SimCounters& c) {
  const CacheGeometry& g = m_spec.geometry;
  const auto group = static_cast<unsigned>(m_spec.fetch_bytes / g.sector_bytes);
  const std::uint32_t group_mask = (1U << group) - 1U;
  const auto sectors_per_line = static_cast<unsigned>(g.line_bytes / g.sector_bytes);
  std::uint32_t want = r.sectors;
  const bool far = static_cast<int>(r.sm) % m_spec.partitions != m_spec.partition;
  auto n = static_cast<std::uint64_t>(std::popcount(want));
  std::uint32_t slot = m_cache.find(r.line);
  const std::uint32_t before = slot == SetCache::kNone ? 0U : m_cache.valid(slot);
  auto hits = static_cast<std::uint64_t>(std::popcount(want & before));
  if (far) {
    // A request for the other partition's slice is looked up on the near side first (a miss there), then travels
    // in whole fetch granules: ncu counts both lookups (H100: lts sectors = 1.5x the L1 sectors for full lines,
    // 2.0x for isolated sectors; validate/results/h100-2026-11-22/sim_check).
    std::uint32_t promoted = 0;
    if (r.op != L2Op::write)
      for (unsigned first = 0; first < sectors_per_line; first += group)
        if ((want & (group_mask << first)) != 0) promoted |= group_mask << first;
    if (promoted == 0) promoted = want;
    c.l2_far_sectors += static_cast<std::uint64_t>(std::popcount(promoted));
    n += static_cast<std::uint64_t>(std::popcount(promoted));
    hits = static_cast<std::uint64_t>(std::popcount(promoted & before));
    want = promoted;
  }
  switch (r.op) {
    case L2Op::read: c.l2_read_sectors += n; c.l2_read_hits += hits; break;
    case L2Op::write: c.l2_write_sectors += n; c.l2_write_hits += hits; break;
    case L2Op::atom:
    case L2Op::red: c.l2_atom_sectors += n; c.l2_atom_hits += hits; break;
  }
  if (slot != SetCache::kNone) {
    if (hits != 0 && m_cache.persisting(slot)) c.l2_persisting_hits += hits;
    m_cache.touch(slot);
  } else {
    SetCache::Evicted ev;
    slot = m_cache.insert(r.line, r.property, ev);
    if (ev.valid && ev.dirty != 0)
      dram(ev.line * g.line_bytes, static_cast<std::uint64_t>(std::popcount(ev.dirty)) * g.sector_bytes, true, c);
  }
  if (r.op == L2Op::write) {  // full-sector writes need no fetch; byte masks cover partial ones
    m_cache.valid(slot) |= static_cast<std::uint8_t>(want);
    m_cache.dirty(slot) |= static_cast<std::uint8_t>(want);
    return;
  }
  // Fetch each aligned group of sectors (the DRAM granularity) that holds a missing requested sector.
  std::uint32_t missing = want & ~before;
  for (unsigned first = 0; first < sectors_per_line && missing != 0; first += group) {
    const std::uint32_t gm = group_mask << first;
    if ((missing & gm) == 0) continue;
    missing &= ~gm;
    dram(r.line * g.line_bytes + first * g.sector_bytes, m_spec.fetch_bytes, false, c);
    m_cache.valid(slot) |= static_cast<std::uint8_t>(gm & ~static_cast<std::uint32_t>(m_cache.dirty(slot)));
  }
  m_cache.valid(slot) |= static_cast<std::uint8_t>(want);
  if (r.op == L2Op::atom || r.op == L2Op::red) m_cache.dirty(slot) |= static_cast<std::uint8_t>(want);
}

}  // namespace memhier
