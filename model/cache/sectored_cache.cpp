#include "sectored_cache.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace memhier {

SectoredCache::SectoredCache(const CacheGeometry& g, bool plru)
    : m_g(g),
      m_plru(plru),
      m_pow2_sets(std::has_single_bit(g.sets)),
      m_set_bits(static_cast<unsigned>(std::countr_zero(g.sets))),
      m_set_count(std::max<std::uint32_t>(g.sets, 1)) {
  if (g.sets == 0 || g.ways == 0) throw std::invalid_argument("SectoredCache: no sets or no ways");
  const std::size_t lines = std::size_t{g.sets} * g.ways;
  if (plru) {
    m_tree = PlruTree(g.ways);  // throws for a shape it cannot model
    m_way_bits = static_cast<unsigned>(std::countr_zero(g.ways));
    m_tags = ZeroedArray<std::uint32_t>(lines);
    m_lines = ZeroedArray<PlruLine>(lines);
    m_plru_sets = ZeroedArray<PlruSet>(g.sets);
    m_recent.resize(std::size_t{1} << kRecentBits);
    return;
  }
  m_slots.resize(lines);
  m_sets.resize(g.sets);
  std::size_t buckets = 2;
  while (buckets * kBucketEntries < 2 * lines) buckets *= 2;
  m_buckets.resize(buckets);
  m_passed.resize(buckets);
  m_bucket_mask = buckets - 1;
  init();
}

void SectoredCache::reset() {
  if (m_plru) {  // the ways in use are the counted ones: only the sets used need clearing
    if (m_taken.size() * 4 > m_plru_sets.size()) {
      std::fill(m_plru_sets.begin(), m_plru_sets.end(), PlruSet{});
    } else {
      for (const std::uint32_t set : m_taken) m_plru_sets[set] = PlruSet{};
    }
    m_taken.clear();
    if (++m_generation == 0) {  // after 2^32 resets: clear for real so that no old entry matches the count restarted
      std::fill(m_recent.begin(), m_recent.end(), Recent{});
      m_generation = 1;
    }
    return;
  }
  if (m_taken.size() * 4 > m_slots.size()) {  // most of the cache was used: start over
    init();
    return;
  }
  // Every indexed line sits in a taken slot: erase those, then free the slots, relinking each as init() did.
  for (std::uint32_t t : m_taken)
    if (m_slots[t].list != kFree) index_erase(m_slots[t].line);
  for (std::uint32_t t : m_taken) {
    const std::uint32_t set = t % m_g.sets, way = t / m_g.sets;
    m_slots[t] = Slot{};
    m_slots[t].set = set;
    m_slots[t].next = way == 0 ? kNone : t - m_g.sets;
    m_sets[set] = SetState{};
    m_sets[set].free = (m_g.ways - 1) * m_g.sets + set;
  }
  m_taken.clear();
}

void SectoredCache::init() {
  m_taken.clear();
  std::fill(m_buckets.begin(), m_buckets.end(), Bucket{});
  std::fill(m_passed.begin(), m_passed.end(), 0);
  for (std::uint32_t s = 0; s < m_g.sets; ++s) {
    SetState& st = m_sets[s];
    st = SetState{};
    for (std::uint32_t w = 0; w < m_g.ways; ++w) {
      const std::uint32_t slot = w * m_g.sets + s;
      m_slots[slot] = Slot{};
      m_slots[slot].set = s;
      m_slots[slot].next = st.free;
      st.free = slot;
    }
  }
}

std::uint32_t SectoredCache::matches(std::size_t b, std::uint32_t t) const {
  const std::array<std::uint32_t, kBucketEntries>& tags = m_buckets[b].tag;
#if defined(__SSE2__)
  // Equal tags give all-ones 32-bit lanes; two saturating packs keep a byte each, whose top bits form the mask.
  const __m128i key = _mm_set1_epi32(static_cast<int>(t));
  const __m128i lo = _mm_cmpeq_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(tags.data())), key);
  const __m128i hi = _mm_cmpeq_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(tags.data() + 4)), key);
  const __m128i bytes = _mm_packs_epi16(_mm_packs_epi32(lo, hi), _mm_setzero_si128());
  return static_cast<std::uint32_t>(_mm_movemask_epi8(bytes)) & 0xFFU;
#else
  std::uint32_t out = 0;
  for (std::uint32_t e = 0; e < kBucketEntries; ++e) out |= (tags[e] == t ? 1U : 0U) << e;
  return out;
#endif
}

SectoredCache::Place SectoredCache::locate(std::uint64_t line, std::uint64_t h) const {
  const std::uint32_t t = tag(h);
  for (std::size_t b = home(h);; b = (b + 1) & m_bucket_mask) {
    for (std::uint32_t m = matches(b, t); m != 0; m &= m - 1) {
      const auto e = static_cast<std::uint32_t>(std::countr_zero(m));
      if (m_slots[m_buckets[b].slot[e]].line == line) return {b, e};
    }
    if (m_passed[b] == 0) return {};
  }
}

void SectoredCache::index_insert(std::uint64_t h, std::uint32_t slot) {
  std::size_t b = home(h);
  std::uint32_t free = matches(b, 0);
  while (free == 0) {  // a full bucket: on to the next
    ++m_passed[b];
    b = (b + 1) & m_bucket_mask;
    free = matches(b, 0);
  }
  const auto e = static_cast<std::uint32_t>(std::countr_zero(free));
  m_buckets[b].tag[e] = tag(h);
  m_buckets[b].slot[e] = slot;
}

void SectoredCache::index_erase(std::uint64_t line) {
  const std::uint64_t h = hash(line);
  const Place p = locate(line, h);
  m_buckets[p.bucket].tag[p.entry] = 0;
  for (std::size_t b = home(h); b != p.bucket; b = (b + 1) & m_bucket_mask) --m_passed[b];
}

std::uint32_t SectoredCache::plru_access(std::uint64_t line, L2Property property, Evicted* out) {
  const std::uint32_t set = set_of(line);
  const std::uint32_t slot = plru_find(line, set);
  m_recent_on = slot != kNone;
  if (slot == kNone) return plru_insert(line, set, property, out);
  if (out != nullptr) *out = {};
  plru_touch(slot);
  m_recent[recent_index(line)] = {line, slot, m_generation};
  return slot;
}

std::uint32_t SectoredCache::find(std::uint64_t line) const {
  if (m_plru) return plru_find(line, set_of(line));
  const Place p = locate(line, hash(line));
  return p.entry == kBucketEntries ? kNone : m_buckets[p.bucket].slot[p.entry];
}

void SectoredCache::unlink(std::uint32_t slot) {
  Slot& s = m_slots[slot];
  SetState& st = m_sets[s.set];
  const int l = s.list;
  if (s.prev != kNone)
    m_slots[s.prev].next = s.next;
  else
    st.head[l] = s.next;
  if (s.next != kNone)
    m_slots[s.next].prev = s.prev;
  else
    st.tail[l] = s.prev;
  --st.count[l];
  s.prev = s.next = kNone;
}

void SectoredCache::push_front(std::uint32_t set, std::uint32_t slot, List list) {
  SetState& st = m_sets[set];
  Slot& s = m_slots[slot];
  s.list = list;
  s.prev = kNone;
  s.next = st.head[list];
  if (s.next != kNone)
    m_slots[s.next].prev = slot;
  else
    st.tail[list] = slot;
  st.head[list] = slot;
  ++st.count[list];
}

void SectoredCache::push_back(std::uint32_t set, std::uint32_t slot, List list) {
  SetState& st = m_sets[set];
  Slot& s = m_slots[slot];
  s.list = list;
  s.next = kNone;
  s.prev = st.tail[list];
  if (s.prev != kNone)
    m_slots[s.prev].next = slot;
  else
    st.head[list] = slot;
  st.tail[list] = slot;
  ++st.count[list];
}

void SectoredCache::touch(std::uint32_t slot) {
  if (m_plru) {
    plru_touch(slot);
    return;
  }
  const auto list = m_slots[slot].list;
  const std::uint32_t set = m_slots[slot].set;
  if (m_sets[set].head[list] == slot) return;
  unlink(slot);
  push_front(set, slot, list);
}

void SectoredCache::evict(std::uint32_t slot, Evicted& out) {
  Slot& s = m_slots[slot];
  out = {s.line, s.dirty, true};
  index_erase(s.line);
  unlink(slot);
  s.valid = s.dirty = 0;
  s.list = kFree;
}

std::uint32_t SectoredCache::insert(std::uint64_t line, L2Property property, Evicted& out) {
  if (m_plru) return plru_insert(line, set_of(line), property, &out);
  return insert_new(line, hash(line), property, out);
}

// The victim's entry goes before the new line's is made (it may free room in the new line's bucket).
std::uint32_t SectoredCache::insert_new(std::uint64_t line, std::uint64_t h, L2Property property, Evicted& out) {
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
    slot = next_slot(set);
  }
  if (m_slots[slot].list != kFree) evict(slot, out);
  index_insert(h, slot);
  Slot& s = m_slots[slot];
  s.line = line;
  s.valid = s.dirty = 0;
  if (persist)
    push_front(set, slot, kPersist);
  else if (property == L2Property::streaming)
    push_back(set, slot, kNormal);  // first to go
  else
    push_front(set, slot, kNormal);
  return slot;
}

void SectoredCache::demote_persisting() {
  if (m_plru) return;  // no persisting lines
  for (std::uint32_t set = 0; set < m_g.sets; ++set) {
    while (m_sets[set].head[kPersist] != kNone) {  // newest first, so the oldest ends up last
      const std::uint32_t slot = m_sets[set].head[kPersist];
      unlink(slot);
      push_back(set, slot, kNormal);  // demoted lines rank below every normal line
    }
  }
}

}  // namespace memhier
