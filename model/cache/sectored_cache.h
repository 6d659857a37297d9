#pragma once
// A sectored set-associative cache, used for each SM's L1 (the L2 slices use SetCache, set_cache.h). Replacement is
// LRU or tree pseudo-LRU per set:
// - LRU: lines are found through one hash index (line address -> slot), so a lookup costs the same at 448 ways (an
//   L1 whose capacity is split over 4 sets) as at 16. Each set keeps two lists, persisting lines and the rest;
//   persisting lines may hold at most `persisting_ways` of a set, other lines may use every way no persisting line
//   holds.
// - PLRU (a power-of-two number of ways, at most 32): a binary tree of bits over the set's ways; each access points
//   the bits on its way to the other half, and the victim is the way the bits lead to. A streaming line enters without
//   moving them (the next victim). No persisting lines (an L1 has none). On the H100 a cyclic working set just over
//   the L1's capacity keeps part of its hits, falling to none at about 1.3 times the capacity (one warp: 224 KiB of
//   L1, 240 KiB read four times 31.6%, 272 KiB 6.6%, 288 KiB 0.2%; validate/results/h100-2026-11-24g), which LRU,
//   keeping all or nothing, cannot give; 16-way tree PLRU gives the edge of 1024 threads within 0.9 points
//   (validate/results/h100-2026-11-24e). With so few ways a lookup compares the set's tags, one host cache line of
//   them, and an eviction needs no index: the victim is found in the set it replaces.
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../util/host_prefetch.h"
#include "../util/zeroed_array.h"
#include "memhier/trace.h"
#include "placement.h"
#include "plru_tree.h"

namespace memhier {

struct CacheGeometry {
  std::uint64_t line_bytes = 128;
  std::uint64_t sector_bytes = 32;
  std::uint32_t sets = 1;
  std::uint32_t ways = 1;
  friend bool operator==(const CacheGeometry&, const CacheGeometry&) = default;
};

class SectoredCache {
 public:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFU;

  // `plru`: tree pseudo-LRU (ways: a power of two up to 32) instead of LRU. Throws std::invalid_argument for a
  // shape it cannot model.
  explicit SectoredCache(const CacheGeometry& g, bool plru = false);

  struct Evicted {
    std::uint64_t line = 0;   // line number (address / line bytes)
    std::uint32_t dirty = 0;  // dirty sector mask
    bool valid = false;
    std::uint32_t partial = 0;  // sectors written in part (SetCache only; see partial())
    bool batched = false;       // SetCache only: see batched()
  };

  // Slot holding `line`, or kNone.
  [[nodiscard]] std::uint32_t find(std::uint64_t line) const;
  // Everything a lookup reads, into the host's caches: PLRU, every set's tags, lines and tree bits (the H100's L1 at
  // its largest: 8 + 32 + 1 KiB); LRU, the index and every slot and set.
  void warm() const {
    auto fetch = [](const auto& v) { host_prefetch_bytes(v.data(), v.size() * sizeof(v[0])); };
    if (m_plru) {
      fetch(m_tags);
      fetch(m_lines);
      fetch(m_plru_sets);
      return;
    }
    fetch(m_buckets);
    fetch(m_passed);
    fetch(m_slots);
    fetch(m_sets);
  }
  // Marks the slot most recently used.
  void touch(std::uint32_t slot);
  // Allocates a slot for `line` (absent) with the given property; fills `out` with the victim if one was evicted.
  std::uint32_t insert(std::uint64_t line, L2Property property, Evicted& out);
  // find() then touch() if present, else insert(), with one probe of the table.
  std::uint32_t access(std::uint64_t line, L2Property property, Evicted& out) { return access(line, property, &out); }
  // As access(), for a caller that has no use for the victim (a write-through L1): PLRU then does not read it, which
  // a gather's L1 waited on (perf: most of the time inserting).
  std::uint32_t access(std::uint64_t line, L2Property property) { return access(line, property, nullptr); }
  [[nodiscard]] std::uint32_t& valid(std::uint32_t slot) { return m_plru ? m_lines[slot].valid : m_slots[slot].valid; }
  [[nodiscard]] std::uint32_t& dirty(std::uint32_t slot) { return m_plru ? m_lines[slot].dirty : m_slots[slot].dirty; }
  [[nodiscard]] bool persisting(std::uint32_t slot) const { return !m_plru && m_slots[slot].list == kPersist; }
  // Persisting lines may fill at most this many ways of a set (0: none).
  void set_persisting_ways(std::uint32_t ways) { m_persisting_ways = ways; }
  // cudaCtxResetPersistingL2Cache: every persisting line becomes normal.
  void demote_persisting();
  // Empties the cache in time proportional to the slots used since the last reset (an L1 reused by the next launch
  // of a short kernel costs what the kernel put in it, not its capacity).
  void reset();
  [[nodiscard]] const CacheGeometry& geometry() const { return m_g; }
  [[nodiscard]] bool plru() const { return m_plru; }
  // A line's set. A power-of-two count: the XOR of the line number's log2(sets)-bit digits; others: place_in_sets()
  // (placement.h). Either way consecutive lines take the sets in turn (a whole run of `sets` lines one each) and lines
  // a power of two apart spread too: the H100's L1 keeps every re-read of one warp walking 64 or 128 KiB at strides of
  // 2 to 64 lines (validate/results/h100-2026-11-24g), which the low bits alone would crowd into 1 or 2 of 4 sets.
  [[nodiscard]] std::uint32_t set_of(std::uint64_t line) const {
    if (!m_pow2_sets) return static_cast<std::uint32_t>(place_in_sets(line, m_set_count));
    if (m_set_bits == 0) return 0;
    std::uint64_t x = line;
    if (std::has_single_bit(m_set_bits)) {  // 1, 2, 4, ... bits: fold halves down to the digit width
      for (unsigned shift = 32; shift >= m_set_bits; shift >>= 1U) x ^= x >> shift;
    } else {
      for (std::uint64_t rest = line >> m_set_bits; rest != 0; rest >>= m_set_bits) x ^= rest;
    }
    return static_cast<std::uint32_t>(x & (m_g.sets - 1U));
  }

 private:
  enum List : std::uint8_t { kNormal = 0, kPersist = 1, kFree = 2 };
  struct Slot {
    std::uint64_t line = 0;
    std::uint32_t prev = kNone, next = kNone;
    std::uint32_t valid = 0, dirty = 0;
    std::uint32_t set = 0;  // slot % sets, kept (unlink and touch would divide on every access)
    List list = kFree;
  };
  struct SetState {
    std::uint32_t head[2] = {kNone, kNone};  // most recently used
    std::uint32_t tail[2] = {kNone, kNone};  // least recently used
    std::uint32_t count[2] = {0, 0};         // lines in each list
    std::uint32_t free = kNone;              // free slots chained through next
  };
  // The slot a normal line entering `set` takes (LRU): a free one, else the least recent line.
  [[nodiscard]] std::uint32_t next_slot(std::uint32_t set) const {
    const SetState& st = m_sets[set];
    if (st.free != kNone) return st.free;
    return st.tail[kNormal] != kNone ? st.tail[kNormal] : st.tail[kPersist];
  }

  void init();  // every slot free, the index empty
  void unlink(std::uint32_t slot);
  void push_front(std::uint32_t set, std::uint32_t slot, List list);
  void push_back(std::uint32_t set, std::uint32_t slot, List list);
  void evict(std::uint32_t slot, Evicted& out);
  // Takes a slot for `line` (absent from the index), evicting its set's victim if it must, and indexes it.
  std::uint32_t insert_new(std::uint64_t line, std::uint64_t h, L2Property property, Evicted& out);

  // PLRU. Way w of set s is slot s x ways + w: a set's tags are one run (16 ways: 64 bytes). A set's ways fill from
  // the last down, counted (PlruSet::filled), so the ways in use are the top `filled` ones and a reset only clears
  // the counts and bits.
  struct PlruSet {
    std::uint32_t tree = 0;    // bit n set when node n's older half is its second (plru_tree.h)
    std::uint32_t filled = 0;  // ways in use
  };
  struct PlruLine {
    std::uint64_t line = 0;
    std::uint32_t valid = 0, dirty = 0;
  };
  // The way a line entering `set` takes: the next free one, else the victim.
  [[nodiscard]] std::uint32_t plru_next_way(std::uint32_t set) const {
    const PlruSet& st = m_plru_sets[set];
    return st.filled < m_g.ways ? m_g.ways - 1 - st.filled : m_tree.victim(st.tree);
  }
  [[nodiscard]] std::uint32_t plru_find(std::uint64_t line, std::uint32_t set) const;
  std::uint32_t access(std::uint64_t line, L2Property property, Evicted* out);
  // Fills `out`, when given, with the victim (if one was evicted).
  std::uint32_t plru_insert(std::uint64_t line, std::uint32_t set, L2Property property, Evicted* out);
  void plru_touch(std::uint32_t slot) {
    PlruSet& st = m_plru_sets[slot >> m_way_bits];
    st.tree = m_tree.touched(st.tree, slot & (m_g.ways - 1U));
  }

  // PLRU: the slot each line looked up lately was found in or entered, direct-mapped by a hash of the line. Warps
  // that re-read the lines they read last (a row a thread, a structure's fields) find them without placing the line
  // in its set and comparing the set's tags (softmax_naive, whose 32-line loads hit L1 87.5% of the time, spent 29% of
  // its host instructions in lookups of 112 each: 13,064 -> 10,269 M from its .mht; particles_aos 5,424 -> 4,600 M;
  // the benchmark copy and gather +0.4% and +0.7%: bench/results/sim-2026-11-26-session44.txt). An entry holds while
  // its slot still holds its line in the same generation (a reset counts one: a reset set keeps its old tags).
  struct Recent {
    std::uint64_t line = ~std::uint64_t{0};  // none (line numbers are addresses / 128)
    std::uint32_t slot = 0;
    std::uint32_t generation = 0;
  };
  static constexpr unsigned kRecentBits = 9;
  [[nodiscard]] static std::size_t recent_index(std::uint64_t line) {
    return static_cast<std::size_t>((line * 0x9E3779B97F4A7C15ULL) >> (64U - kRecentBits));
  }
  std::vector<Recent> m_recent;
  std::uint32_t m_generation = 1;
  // Whether the memo is looked at: from a line found (a hit) to the next line missing. A stream's or a gather's
  // lookups, nearly all misses, then do not read the memo (132 SMs' memos are 1 MiB, a host cache miss a lookup: the
  // streaming copy ran 4% slower reading it, this VM), and hits, which come in runs, still find it.
  bool m_recent_on = false;
  // access() of a line the memo of recent lines does not hold (out of line: the memo's hits inline). A line found is
  // noted there; one entering is not, until found again: a stream's or a gather's lines, most of which are never read
  // again, then cost the memo no writes.
  [[gnu::noinline]] std::uint32_t plru_access(std::uint64_t line, L2Property property, Evicted* out);

  // The index: buckets of 8 entries, a host cache line each (8 tags, 8 slots; tag 0: free). A line's entry sits in its
  // home bucket or, when that is full, in the next with room; each bucket counts the entries that passed it on the
  // way (m_passed), so a lookup stops at the first bucket none passed, and an erase only clears its entry and the
  // counts on its way. At most half the entries are used, so a bucket is rarely full.
  static constexpr std::uint32_t kBucketEntries = 8;
  struct alignas(64) Bucket {
    std::array<std::uint32_t, kBucketEntries> tag{};  // the line's hash, low 32 bits, with bit 0 set; 0: free
    std::array<std::uint32_t, kBucketEntries> slot{};
  };
  [[nodiscard]] static std::uint64_t hash(std::uint64_t line) { return line * 0x9E3779B97F4A7C15ULL; }
  [[nodiscard]] std::size_t home(std::uint64_t h) const { return static_cast<std::size_t>(h >> 32U) & m_bucket_mask; }
  [[nodiscard]] static std::uint32_t tag(std::uint64_t h) { return static_cast<std::uint32_t>(h) | 1U; }
  // The entries of bucket `b` whose tag is `t` (a bit each).
  [[nodiscard]] std::uint32_t matches(std::size_t b, std::uint32_t t) const;
  struct Place {
    std::size_t bucket = 0;
    std::uint32_t entry = kBucketEntries;  // kBucketEntries: absent
  };
  [[nodiscard]] Place locate(std::uint64_t line, std::uint64_t h) const;
  void index_insert(std::uint64_t h, std::uint32_t slot);
  void index_erase(std::uint64_t line);

  CacheGeometry m_g;
  bool m_plru = false;
  PlruTree m_tree;          // PLRU: the tables of the sets' trees
  unsigned m_way_bits = 0;  // PLRU: log2(ways)
  // PLRU, per slot: the line's low 32 bits (a lookup then checks m_lines); a set's ways past `filled` are free, so
  // new tables are all zero bytes (ZeroedArray: a short kernel touches the sets it uses).
  ZeroedArray<std::uint32_t> m_tags;
  ZeroedArray<PlruLine> m_lines;
  ZeroedArray<PlruSet> m_plru_sets;
  bool m_pow2_sets = false;
  unsigned m_set_bits = 0;  // log2(sets) when a power of two
  Divisor m_set_count;      // place_in_sets() otherwise
  // LRU. Way w of set s is slot w x sets + s: lines that take the sets in turn (a stream) take slots in order, which
  // the host fetches ahead; numbered set by set, a stream jumps by `ways` slots at each line and the host waits on
  // every one (perf on a copy, when the PLRU L1 kept its lines here too: 12% of the time inserting that way, 7% this
  // way).
  std::vector<Slot> m_slots;
  std::vector<SetState> m_sets;
  std::vector<Bucket> m_buckets;
  std::vector<std::uint32_t> m_passed;  // per bucket: entries placed past it
  std::size_t m_bucket_mask = 0;
  std::uint32_t m_persisting_ways = 0;
  // LRU: slots taken since the last reset. init() chains each set's slots from its last way down (way w's slot
  // links to way w - 1's) and only reset() puts slots back, so the taken ones are the top of their sets' chains.
  // PLRU: the sets a line entered since the last reset (a short kernel's reset then clears a few of 132 L1s' sets).
  std::vector<std::uint32_t> m_taken;
};

// The lookup paths a simulated access takes (PLRU; LRU's lookup) are defined here rather than in sectored_cache.cpp so
// that the SM front end's per-line calls inline them (cachegrind, the benchmark traces: 1.4-3.0% of the host
// instructions).
inline std::uint32_t SectoredCache::plru_find(std::uint64_t line, std::uint32_t set) const {
  const std::uint32_t first = set << m_way_bits;
  const std::uint32_t* tags = m_tags.data() + first;
  const auto low = static_cast<std::uint32_t>(line);
  std::uint32_t found = 0;  // a bit per way whose tag is the line's low bits
#if defined(__SSE2__)
  if (m_g.ways == 16) {  // the H100's L1: equal tags give all-ones lanes, two saturating packs keep a byte a way
    const __m128i key = _mm_set1_epi32(static_cast<int>(low));
    const auto* t = reinterpret_cast<const __m128i*>(tags);
    auto eq = [&](int q) { return _mm_cmpeq_epi32(_mm_loadu_si128(t + q), key); };
    const __m128i bytes = _mm_packs_epi16(_mm_packs_epi32(eq(0), eq(1)), _mm_packs_epi32(eq(2), eq(3)));
    found = static_cast<std::uint32_t>(_mm_movemask_epi8(bytes));
  } else if (m_g.ways % 4 == 0) {
    const __m128i key = _mm_set1_epi32(static_cast<int>(low));
    for (std::uint32_t w = 0; w < m_g.ways; w += 4) {
      const __m128i eq = _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + w)), key);
      found |= static_cast<std::uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(eq))) << w;
    }
  } else
#endif
  {
    for (std::uint32_t w = 0; w < m_g.ways; ++w) found |= (tags[w] == low ? 1U : 0U) << w;
  }
  // Only the top `filled` ways hold lines (a reset leaves the others' old tags).
  const std::uint32_t unused = m_g.ways - m_plru_sets[set].filled;
  found &= static_cast<std::uint32_t>(~((std::uint64_t{1} << unused) - 1U));
  for (; found != 0; found &= found - 1) {
    const std::uint32_t slot = first + static_cast<std::uint32_t>(std::countr_zero(found));
    if (m_lines[slot].line == line) return slot;
  }
  return kNone;
}

// No lists: the tree orders the set, and a persisting line is a normal one. A set's ways fill from the last down.
inline std::uint32_t SectoredCache::plru_insert(std::uint64_t line, std::uint32_t set, L2Property property,
                                                Evicted* out) {
  PlruSet& st = m_plru_sets[set];
  const std::uint32_t way = plru_next_way(set);
  const std::uint32_t slot = (set << m_way_bits) + way;
  const bool evicts = st.filled == m_g.ways;
  if (st.filled == 0) m_taken.push_back(set);
  if (!evicts) ++st.filled;
  if (out != nullptr) *out = evicts ? Evicted{m_lines[slot].line, m_lines[slot].dirty, true} : Evicted{};
  m_tags[slot] = static_cast<std::uint32_t>(line);
  m_lines[slot] = {line, 0, 0};
  if (property != L2Property::streaming) st.tree = m_tree.touched(st.tree, way);
  return slot;
}

inline std::uint32_t SectoredCache::access(std::uint64_t line, L2Property property, Evicted* out) {
  if (m_plru) {
    if (m_recent_on) {
      const Recent& seen = m_recent[recent_index(line)];
      if (seen.line == line && seen.generation == m_generation && m_lines[seen.slot].line == line) {
        if (out != nullptr) *out = {};
        plru_touch(seen.slot);
        return seen.slot;
      }
    }
    return plru_access(line, property, out);
  }
  Evicted ignored;
  Evicted& victim = out != nullptr ? *out : ignored;
  const std::uint64_t h = hash(line);
  const Place p = locate(line, h);
  if (p.entry != kBucketEntries) {
    victim = {};
    const std::uint32_t slot = m_buckets[p.bucket].slot[p.entry];
    touch(slot);
    return slot;
  }
  return insert_new(line, h, property, victim);
}

}  // namespace memhier
