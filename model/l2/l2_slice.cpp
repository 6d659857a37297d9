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
  m_cache.flush([&](std::uint64_t line, std::uint32_t dirty) {
    dram(line * line_bytes, static_cast<std::uint64_t>(std::popcount(dirty)) * m_spec.geometry.sector_bytes, true, c);
  });
}

void L2Slice::access(const L2Request& r, SimCounters& c) {
  const CacheGeometry& g = m_spec.geometry;
  const std::uint64_t sectors_per_line = g.line_bytes / g.sector_bytes;
  const std::uint64_t line = r.sector / sectors_per_line;
  const auto bit = 1U << static_cast<unsigned>(r.sector % sectors_per_line);
  if (static_cast<int>(r.sm) % m_spec.partitions != m_spec.partition) ++c.l2_far_sectors;
  std::uint32_t slot = m_cache.find(line);
  const std::uint64_t request = r.order >> 32U;  // sm and warp slot: one instruction
  if (r.round != m_request_round || request != m_request_id || line != m_request_line) {
    m_request_round = r.round;
    m_request_id = request;
    m_request_line = line;
    m_valid_before = slot == SectoredCache::kNone ? 0 : m_cache.valid(slot);
  }
  const bool hit = slot != SectoredCache::kNone && (m_valid_before & bit) != 0;
  switch (r.op) {
    case L2Op::read: ++c.l2_read_sectors; c.l2_read_hits += hit ? 1 : 0; break;
    case L2Op::write: ++c.l2_write_sectors; c.l2_write_hits += hit ? 1 : 0; break;
    case L2Op::atom:
    case L2Op::red: ++c.l2_atom_sectors; c.l2_atom_hits += hit ? 1 : 0; break;
  }
  if (slot != SectoredCache::kNone) {
    if (hit && m_cache.persisting(slot)) ++c.l2_persisting_hits;
    m_cache.touch(slot);
  } else {
    SectoredCache::Evicted ev;
    slot = m_cache.insert(line, r.property, ev);
    if (ev.valid && ev.dirty != 0)
      dram(ev.line * g.line_bytes, static_cast<std::uint64_t>(std::popcount(ev.dirty)) * g.sector_bytes, true, c);
  }
  if (r.op == L2Op::write) {  // full-sector writes need no fetch; byte masks cover partial ones
    m_cache.valid(slot) |= bit;
    m_cache.dirty(slot) |= bit;
    return;
  }
  if (!hit && (m_cache.valid(slot) & bit) == 0) {  // fetch the aligned group the DRAM granularity brings in
    const std::uint64_t group = m_spec.fetch_bytes / g.sector_bytes;
    const std::uint64_t first = (r.sector % sectors_per_line) / group * group;
    const auto mask = static_cast<std::uint32_t>(((1ULL << group) - 1) << first);
    dram(r.sector * g.sector_bytes / m_spec.fetch_bytes * m_spec.fetch_bytes, m_spec.fetch_bytes, false, c);
    m_cache.valid(slot) |= mask & ~m_cache.dirty(slot);
    m_cache.valid(slot) |= bit;
  }
  if (r.op == L2Op::atom || r.op == L2Op::red) m_cache.dirty(slot) |= bit;
}

}  // namespace memhier
