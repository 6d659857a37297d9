#include "sectored_cache.h"

#include <bit>

namespace memhier {

SectoredCache::SectoredCache(const CacheGeometry& g)
    : m_g(g), m_pow2_sets(std::has_single_bit(g.sets)) {
  const std::size_t lines = std::size_t{g.sets} * g.ways;
  m_slots.resize(lines);
  m_sets.resize(g.sets);
  std::size_t table = 16;
  while (table < 2 * lines) table *= 2;
  m_table.assign(table, Entry{});
  m_shift = 64U - static_cast<unsigned>(std::countr_zero(table));
  init();
}

void SectoredCache::reset() {
  if (m_taken.size() * 4 > m_slots.size()) {  // most of the cache was used: start over
    init();
    return;
  }
  // Every line in the table sits in a taken slot. Find all their table positions before clearing any (a cleared
  // entry would cut the probe run of the ones after it), then free the slots, relinking each as init() did.
  m_scratch.clear();
  const std::size_t mask = m_table.size() - 1;
  for (std::uint32_t t : m_taken) {
    if (m_slots[t].list == kFree) continue;
    std::size_t i = bucket(m_slots[t].line);
    while (m_table[i].key != m_slots[t].line + 1) i = (i + 1) & mask;
    m_scratch.push_back(i);
  }
  for (std::size_t i : m_scratch) m_table[i] = Entry{};
  for (std::uint32_t t : m_taken) {
    const std::uint32_t set = t / m_g.ways, first = set * m_g.ways;
    m_slots[t] = Slot{};
    m_slots[t].set = set;
    m_slots[t].next = t == first ? kNone : t - 1;
    m_sets[set] = SetState{};
    m_sets[set].free = first + m_g.ways - 1;
  }
  m_taken.clear();
}

void SectoredCache::init() {
  m_taken.clear();
  std::fill(m_table.begin(), m_table.end(), Entry{});
  for (std::uint32_t s = 0; s < m_g.sets; ++s) {
    SetState& st = m_sets[s];
    st = SetState{};
    for (std::uint32_t w = 0; w < m_g.ways; ++w) {
      const std::uint32_t slot = s * m_g.ways + w;
      m_slots[slot] = Slot{};
      m_slots[slot].set = s;
      m_slots[slot].next = st.free;
      st.free = slot;
    }
  }
}

std::uint32_t SectoredCache::find(std::uint64_t line) const {
  const std::size_t mask = m_table.size() - 1;
  for (std::size_t i = bucket(line);; i = (i + 1) & mask) {
    if (m_table[i].key == line + 1) return m_table[i].slot;
    if (m_table[i].key == 0) return kNone;
  }
}

// Linear probing with backward-shift deletion: no tombstones, so lookups never slow down over a long run.
void SectoredCache::table_erase(std::uint64_t line) {
  const std::size_t mask = m_table.size() - 1;
  std::size_t i = bucket(line);
  while (m_table[i].key != line + 1) i = (i + 1) & mask;
  std::size_t hole = i;
  for (std::size_t j = (hole + 1) & mask; m_table[j].key != 0; j = (j + 1) & mask) {
    const std::size_t home = m_table[j].home;
    // Move j into the hole unless its home lies cyclically in (hole, j].
    const bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    m_table[hole] = m_table[j];
    hole = j;
  }
  m_table[hole] = Entry{};
}

void SectoredCache::unlink(std::uint32_t slot) {
  Slot& s = m_slots[slot];
  SetState& st = m_sets[s.set];
  const int l = s.list;
  if (s.prev != kNone) m_slots[s.prev].next = s.next; else st.head[l] = s.next;
  if (s.next != kNone) m_slots[s.next].prev = s.prev; else st.tail[l] = s.prev;
  --st.count[l];
  s.prev = s.next = kNone;
}

void SectoredCache::push_front(std::uint32_t set, std::uint32_t slot, List list) {
  SetState& st = m_sets[set];
  Slot& s = m_slots[slot];
  s.list = list;
  s.prev = kNone;
  s.next = st.head[list];
  if (s.next != kNone) m_slots[s.next].prev = slot; else st.tail[list] = slot;
  st.head[list] = slot;
  ++st.count[list];
}

void SectoredCache::push_back(std::uint32_t set, std::uint32_t slot, List list) {
  SetState& st = m_sets[set];
  Slot& s = m_slots[slot];
  s.list = list;
  s.next = kNone;
  s.prev = st.tail[list];
  if (s.prev != kNone) m_slots[s.prev].next = slot; else st.head[list] = slot;
  st.tail[list] = slot;
  ++st.count[list];
}

void SectoredCache::touch(std::uint32_t slot) {
  const auto list = m_slots[slot].list;
  const std::uint32_t set = m_slots[slot].set;
  if (m_sets[set].head[list] == slot) return;
  unlink(slot);
  push_front(set, slot, list);
}

void SectoredCache::evict(std::uint32_t slot, Evicted& out) {
  Slot& s = m_slots[slot];
  out = {s.line, s.dirty, true};
  table_erase(s.line);
  unlink(slot);
  s.valid = s.dirty = 0;
  s.list = kFree;
}

std::uint32_t SectoredCache::insert(std::uint64_t line, L2Property property, Evicted& out) {
  const std::size_t mask = m_table.size() - 1;
  std::size_t i = bucket(line);
  while (m_table[i].key != 0) i = (i + 1) & mask;
  return insert_at(i, line, property, out);
}

std::uint32_t SectoredCache::access(std::uint64_t line, L2Property property, Evicted& out) {
  const std::size_t mask = m_table.size() - 1;
  for (std::size_t i = bucket(line);; i = (i + 1) & mask) {
    if (m_table[i].key == line + 1) {
      out = {};
      touch(m_table[i].slot);
      return m_table[i].slot;
    }
    if (m_table[i].key == 0) return insert_at(i, line, property, out);
  }
}

// `position`: the empty table entry that ends `line`'s probe run. The line's entry goes there before the victim's is
// erased: erasing first could open a hole earlier in the run, past which a lookup would not look.
std::uint32_t SectoredCache::insert_at(std::size_t position, std::uint64_t line, L2Property property, Evicted& out) {
  out = {};
  const std::uint32_t set = set_of(line);
  SetState& st = m_sets[set];
  const bool persist = property == L2Property::persisting && m_persisting_ways > 0;
  std::uint32_t slot = kNone;
  if (persist && st.count[kPersist] >= m_persisting_ways) {
    slot = st.tail[kPersist];  // the set-aside is full: replace the oldest persisting line
  } else if (st.free != kNone) {
    slot = st.free;
    st.free = m_slots[slot].next;
    m_slots[slot].next = kNone;
    m_taken.push_back(slot);
  } else {
    slot = st.tail[kNormal] != kNone ? st.tail[kNormal] : st.tail[kPersist];
  }
  m_table[position] = {line + 1, slot, static_cast<std::uint32_t>(bucket(line))};
  if (m_slots[slot].list != kFree) evict(slot, out);
  Slot& s = m_slots[slot];
  s.line = line;
  s.valid = s.dirty = 0;
  if (persist) push_front(set, slot, kPersist);
  else if (property == L2Property::streaming) push_back(set, slot, kNormal);  // first to go
  else push_front(set, slot, kNormal);
  return slot;
}

void SectoredCache::demote_persisting() {
  for (std::uint32_t set = 0; set < m_g.sets; ++set) {
    while (m_sets[set].head[kPersist] != kNone) {  // newest first, so the oldest ends up last
      const std::uint32_t slot = m_sets[set].head[kPersist];
      unlink(slot);
      push_back(set, slot, kNormal);  // demoted lines rank below every normal line
    }
  }
}

}  // namespace memhier
