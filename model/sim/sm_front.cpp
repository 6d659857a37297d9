#include "sm_front.h"

#include <algorithm>

#include "../smem/bank_model.h"

namespace memhier {

SmFront::SmFront(const SmFrontSpec& spec, const PolicyMap& policy, int sm)
    : to_slice(static_cast<std::size_t>(spec.slices)), m_spec(spec), m_policy(policy), m_l1(spec.l1), m_sm(sm) {}

// Slices by an XOR fold of the line address, as the hardware hashes addresses over slices (its exact function is
// undocumented); consecutive lines spread over all slices.
int SmFront::slice_of(std::uint64_t sector, int slices) {
  std::uint64_t line = sector >> 2U;
  line ^= (line >> 7U) ^ (line >> 14U) ^ (line >> 21U);
  return static_cast<int>(line % static_cast<std::uint64_t>(slices));
}

void SmFront::send(std::uint64_t sector, L2Op op) {
  const L2Property p = m_policy.empty() ? L2Property::normal : m_policy.property(sector * 32);
  to_slice[static_cast<std::size_t>(slice_of(sector, m_spec.slices))].push_back(
      {m_round, m_order++, sector, static_cast<std::uint16_t>(m_sm), op, p});
}

void SmFront::issue(const BlockTrace& b, const WarpRecord& r, std::uint64_t round, std::uint32_t slot,
                    std::uint64_t thread_base) {
  SimCounters& c = counters;
  m_round = round;
  m_order = static_cast<std::uint64_t>(m_sm) << 48U | static_cast<std::uint64_t>(slot) << 32U;
  ++c.warp_instructions;
  c.work += r.work;
  if (!r.is_memory()) {
    ++c.barriers;
    return;
  }
  std::span<const std::uint64_t> a = b.lane_addresses(r);
  switch (r.space) {
    case AddressSpace::shared: {
      int n = 0;
      for (std::uint32_t m = r.active_mask; m != 0; m &= m - 1) m_lanes[static_cast<std::size_t>(n++)] = static_cast<std::uint8_t>(std::countr_zero(m));
      const BankResult w = shared_wavefronts({m_lanes.data(), a.size()}, a, r.size, m_spec.banks, m_spec.bank_bytes);
      const bool st = r.kind == AccessKind::store || r.kind == AccessKind::async_copy;
      (st ? c.shared_st_requests : c.shared_ld_requests) += 1;
      (st ? c.shared_st_wavefronts : c.shared_ld_wavefronts) += w.wavefronts;
      (st ? c.shared_st_bank_conflicts : c.shared_ld_bank_conflicts) += w.conflicts();
      return;
    }
    case AddressSpace::constant: {
      std::copy(a.begin(), a.end(), m_mapped.begin());
      std::sort(m_mapped.begin(), m_mapped.begin() + static_cast<std::ptrdiff_t>(a.size()));
      ++c.constant_requests;
      c.constant_serialized += static_cast<std::uint64_t>(
          std::unique(m_mapped.begin(), m_mapped.begin() + static_cast<std::ptrdiff_t>(a.size())) - m_mapped.begin());
      return;
    }
    case AddressSpace::local: {
      // Word k of thread t lives at base + (k * threads + t) * 4: the same offset across a warp is contiguous.
      std::size_t i = 0;
      for (std::uint32_t m = r.active_mask; m != 0; m &= m - 1, ++i) {
        const std::uint64_t t = thread_base + static_cast<std::uint64_t>(std::countr_zero(m));
        m_mapped[i] = m_spec.local_base + ((a[i] / 4) * m_spec.threads_in_grid + t) * 4 + a[i] % 4;
      }
      global_access(r, {m_mapped.data(), a.size()});
      return;
    }
    case AddressSpace::global:
    case AddressSpace::texture:
      global_access(r, a);
      return;
  }
}

void SmFront::global_access(const WarpRecord& r, std::span<const std::uint64_t> a) {
  SimCounters& c = counters;
  if (r.kind == AccessKind::bulk_copy) {  // the TMA engine reads through L2 into shared memory
    for (std::uint64_t base : a)
      for (std::uint64_t s = base >> 5U; s < (base + r.bulk_bytes + 31) >> 5U; ++s) {
        ++c.l1_bypass_sectors;
        send(s, L2Op::read);
      }
    return;
  }
  coalesce(a, r.size, m_sectors);
  const auto sectors = static_cast<std::uint64_t>(m_sectors.count);
  const bool local = r.space == AddressSpace::local;
  switch (r.kind) {
    case AccessKind::store:
      (local ? c.local_st_requests : c.global_st_requests) += 1;
      (local ? c.local_st_sectors : c.global_st_sectors) += sectors;
      for (int i = 0; i < m_sectors.count; ++i) {
        const std::uint64_t s = m_sectors.sector[static_cast<std::size_t>(i)];
        if (m_spec.l1_enabled) {  // write-through: a resident line is updated, a missing one is not allocated
          const std::uint32_t slot = m_l1.find(s >> 2U);
          if (slot != SectoredCache::kNone) m_l1.valid(slot) |= 1U << (s & 3U);
        }
        send(s, L2Op::write);
      }
      return;
    case AccessKind::atomic:
    case AccessKind::reduction: {
      const bool atom = r.kind == AccessKind::atomic;
      (atom ? c.global_atom_requests : c.global_red_requests) += 1;
      (atom ? c.global_atom_sectors : c.global_red_sectors) += sectors;
      c.l1_bypass_sectors += sectors;
      for (int i = 0; i < m_sectors.count; ++i) send(m_sectors.sector[static_cast<std::size_t>(i)], atom ? L2Op::atom : L2Op::red);
      return;
    }
    case AccessKind::load:
    case AccessKind::async_copy:
    case AccessKind::bulk_copy:
      break;
  }
  (local ? c.local_ld_requests : c.global_ld_requests) += 1;
  (local ? c.local_ld_sectors : c.global_ld_sectors) += sectors;
  if (r.hint == CacheHint::cg || !m_spec.l1_enabled) {
    c.l1_bypass_sectors += sectors;
    for (int i = 0; i < m_sectors.count; ++i) send(m_sectors.sector[static_cast<std::size_t>(i)], L2Op::read);
    return;
  }
  const L2Property l1_property = r.hint == CacheHint::cs ? L2Property::streaming : L2Property::normal;
  for (int i = 0; i < m_sectors.count; ++i) {
    const std::uint64_t s = m_sectors.sector[static_cast<std::size_t>(i)];
    const std::uint32_t bit = 1U << (s & 3U);
    ++c.l1_sector_lookups;
    std::uint32_t slot = m_l1.find(s >> 2U);
    if (slot != SectoredCache::kNone && (m_l1.valid(slot) & bit) != 0) {
      ++c.l1_sector_hits;
      m_l1.touch(slot);
      continue;
    }
    if (slot == SectoredCache::kNone) {
      SectoredCache::Evicted ev;  // write-through L1: nothing to write back
      slot = m_l1.insert(s >> 2U, l1_property, ev);
    } else {
      m_l1.touch(slot);
    }
    m_l1.valid(slot) |= bit;
    send(s, L2Op::read);
  }
}

}  // namespace memhier
