#pragma once
// A sectored set-associative cache for modest associativity (the L2 slices): each set's ways sit together in memory
// (a 16-way set's tags, replacement keys and states in one 256-byte block: four neighbouring host cache lines), so a
// lookup reads one set and nothing else.
// LRU by access stamps; persisting lines may hold at most `persisting_ways` of a set, other lines every way no
// persisting line holds; streaming lines enter as least recent.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>
#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

#include "../util/host_prefetch.h"
#include "../util/zeroed_array.h"
#include "memhier/trace.h"
#include "placement.h"
#include "sectored_cache.h"

namespace memhier {

class SetCache {
 public:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFU;
  // The LRU clock runs up to here (31 bits: the top bit of a way's key marks persisting lines), then renumbers.
  static constexpr std::uint32_t kMaxStamp = 0x7FFFFFFFU;
  using Evicted = SectoredCache::Evicted;

  // `slices`: caches that share the address space, this one holding the lines place_in_sets() puts in it (their sets
  // are numbered together: place_in_sets(line, slices x sets) / slices is a line's set here). `first_stamp` (below
  // kMaxStamp): where the LRU clock starts (tests start it just below the wrap).
  explicit SetCache(const CacheGeometry& g, std::uint32_t slices = 1, std::uint32_t first_stamp = 1)
      : m_g(g),
        m_slices(slices),
        m_blocks((std::size_t{g.sets} * g.ways + kBlockWays - 1) / kBlockWays),
        m_words(std::size_t{g.sets} * g.ways),
        m_persist(g.sets, 0),
        m_touched((g.sets + 63) / 64, 0),
        m_clock(std::max<std::uint32_t>(first_stamp, kOldKey)) {}

  [[nodiscard]] std::uint32_t find(std::uint64_t line) const { return find(line, set_of(line)); }
  // As find(), for a caller that knows the line's set (the L2 requests carry it).
  [[nodiscard]] std::uint32_t find(std::uint64_t line, std::uint32_t set) const {
    const std::uint32_t base = set * m_g.ways;
    if (m_g.ways == kWideWays) {
      const std::uint32_t way = first_tag<kWideWays>(m_blocks[set].codes.data(), code_of(line), kWideWays);
      return way == kNone ? kNone : base + way;
    }
    for (std::uint32_t w = base; w < base + m_g.ways; ++w)
      if (code(w) == code_of(line)) return w;
    return kNone;
  }
  // Brings a set's block into the host's caches ahead of its lookup (16-way sets only).
  void prefetch(std::uint32_t set) const {
    if (m_g.ways != kWideWays) return;
    host_prefetch_bytes(&m_blocks[set], sizeof(Block));
  }
  void touch(std::uint32_t slot) { key(slot) = (key(slot) & kPersistBit) | next_stamp(); }
  std::uint32_t insert(std::uint64_t line, L2Property property, Evicted& out) {
    return insert(line, set_of(line), property, out);
  }
  std::uint32_t insert(std::uint64_t line, std::uint32_t set, L2Property property, Evicted& out);
  // insert() in two steps, for a caller that reads what it needs of the line leaving itself (no Evicted written and
  // read back): the way a line of `set` entering with `property` takes (the lowest key: see insert()), and the line
  // put there, the one that held it gone.
  [[nodiscard]] std::uint32_t victim(std::uint32_t set, L2Property property) const;
  void fill(std::uint32_t slot, std::uint64_t line, std::uint32_t set, L2Property property);
  [[nodiscard]] bool holds_line(std::uint32_t slot) const { return code(slot) != kFreeCode; }
  [[nodiscard]] std::uint32_t set_of(std::uint64_t line) const {
    return static_cast<std::uint32_t>(place_in_sets(line, std::uint64_t{m_slices} * m_g.sets)) / m_slices;  // < 2^32
  }
  // A way's sector masks and flag, together: a request reads and writes several of them, which then share one host
  // cache line (a set's 16 ways: 64 bytes).
  struct State {
    std::uint8_t valid = 0, dirty = 0, partial = 0, batched = 0;
  };
  static_assert(sizeof(State) == 4 && offsetof(State, dirty) == 1);  // oldest_dirty_past's vector scan
  // The four below at once: a caller that reads and writes several of them through one reference saves reloading the
  // table's address after each byte written (a byte store may alias it).
  [[nodiscard]] State& state(std::uint32_t slot) { return m_blocks[slot / kBlockWays].state[slot % kBlockWays]; }
  [[nodiscard]] std::uint8_t& valid(std::uint32_t slot) { return state(slot).valid; }
  [[nodiscard]] std::uint8_t& dirty(std::uint32_t slot) { return state(slot).dirty; }
  // Sectors written in part (dirty, not valid: some of their bytes are still only in DRAM) and, for those, the
  // 4-byte words written so far (bit 8s + w: word w of sector s; L2Request::words; the bits of a sector not written in
  // part mean nothing, so a line entering leaves them). The caller keeps them.
  [[nodiscard]] std::uint8_t& partial(std::uint32_t slot) { return state(slot).partial; }
  // 1: a write to the line followed its SM's write of another line of its DRAM row chunk (L2Request::row_follows):
  // its write-back joins that line's. The caller keeps it.
  [[nodiscard]] std::uint8_t& batched(std::uint32_t slot) { return state(slot).batched; }
  [[nodiscard]] std::uint32_t& words(std::uint32_t slot) { return m_words[slot]; }
  [[nodiscard]] bool persisting(std::uint32_t slot) const { return (key(slot) & kPersistBit) != 0; }
  [[nodiscard]] std::uint64_t line(std::uint32_t slot) const { return code_of(code(slot)); }
  // When `set` holds more than `limit` dirty lines: the least recently used of them other than `except` (the first on
  // a tie); else kNone. It runs whenever a clean line turns dirty: where the set is kWideWays wide, one vector compare
  // finds the dirty ways and only their keys are read; elsewhere one pass over the ways.
  [[nodiscard]] std::uint32_t oldest_dirty_past(std::uint32_t set, std::uint32_t except, std::uint32_t limit) const {
    const std::uint32_t base = set * m_g.ways;
    std::uint32_t oldest = kNone;
#if defined(__SSE4_1__)
    if (m_g.ways == kWideWays) {
      // A way's state is 4 bytes, its dirty mask the second: keep that byte of each, compare with zero.
      const __m128i byte = _mm_set1_epi32(0xFF00);
      const auto* states = reinterpret_cast<const __m128i*>(m_blocks[set].state.data());
      std::uint32_t clean = 0;
      for (int q = 0; q < 4; ++q) {
        const __m128i d = _mm_and_si128(_mm_loadu_si128(states + q), byte);
        clean |= static_cast<std::uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(d, _mm_setzero_si128()))))
                 << (4 * q);
      }
      const std::uint32_t dirty = ~clean & 0xFFFFU;
      if (static_cast<std::uint32_t>(std::popcount(dirty)) <= limit) return kNone;
      for (std::uint32_t bits = dirty; bits != 0; bits &= bits - 1) {
        const std::uint32_t w = base + static_cast<std::uint32_t>(std::countr_zero(bits));
        if (w != except && (oldest == kNone || key(w) < key(oldest))) oldest = w;
      }
      return oldest;
    }
#endif
    std::uint32_t dirty = 0;
    for (std::uint32_t w = base; w < base + m_g.ways; ++w) {
      if (state(w).dirty == 0) continue;
      ++dirty;
      if (w != except && (oldest == kNone || key(w) < key(oldest))) oldest = w;
    }
    return dirty > limit ? oldest : kNone;
  }
  void set_persisting_ways(std::uint32_t ways) { m_persisting_ways = ways; }
  void demote_persisting();
  // Drops the slot's line without writing it back (a stale copy: the caller knows it is clean).
  void invalidate(std::uint32_t slot) {
    if (persisting(slot)) --m_persist[slot / m_g.ways];
    clear(slot);
  }
  // Calls `on_dirty(line, dirty mask)` for each dirty line in slot order, then empties the cache. Only sets a line
  // entered since the last flush can hold one, so only those are visited (a short kernel's flush is short).
  template <typename F>
  void flush(F&& on_dirty) {
    for (std::size_t word = 0; word < m_touched.size(); ++word)
      for (std::uint64_t bits = m_touched[word]; bits != 0; bits &= bits - 1) {
        const auto set = static_cast<std::uint32_t>(word * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
        for (std::uint32_t w = set * m_g.ways; w < (set + 1) * m_g.ways; ++w) {
          const State& st = state(w);
          if (code(w) != kFreeCode && st.dirty != 0) on_dirty(line(w), st.dirty, st.batched != 0);
          clear(w);
        }
        m_persist[set] = 0;
      }
    std::fill(m_touched.begin(), m_touched.end(), 0);
  }

  // The set width every shipped arch has: its scans are a few vector compares on x86 (SSE4.1, in the x86-64-v2
  // baseline the build targets) instead of a loop of 16 steps; elsewhere, and for other widths, the loop.
  static constexpr std::uint32_t kWideWays = 16;

  // The first of `ways` ways (kWays when not 0: a compile-time width) whose tag is `line`, or kNone.
  template <std::uint32_t kWays>
  static std::uint32_t first_tag(const std::uint64_t* tags, std::uint64_t line, std::uint32_t ways) {
#if defined(__SSE4_1__)
    if constexpr (kWays == 16) {
      // Equal tags give all-ones 64-bit lanes; two saturating packs keep one byte pair per way, so the byte mask has
      // two bits a way.
      const __m128i key = _mm_set1_epi64x(static_cast<long long>(line));
      auto eq = [&](int w) {
        return _mm_cmpeq_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + w)), key);
      };
      const __m128i lo = _mm_packs_epi16(_mm_packs_epi32(eq(0), eq(2)), _mm_packs_epi32(eq(4), eq(6)));
      const __m128i hi = _mm_packs_epi16(_mm_packs_epi32(eq(8), eq(10)), _mm_packs_epi32(eq(12), eq(14)));
      const auto bits =
          static_cast<std::uint32_t>(_mm_movemask_epi8(lo)) | static_cast<std::uint32_t>(_mm_movemask_epi8(hi)) << 16U;
      return bits == 0 ? kNone : static_cast<std::uint32_t>(std::countr_zero(bits)) / 2;
    }
#endif
    const std::uint32_t n = kWays != 0 ? kWays : ways;
    for (std::uint32_t w = 0; w < n; ++w)
      if (tags[w] == line) return w;
    return kNone;
  }
  // The first way of the lowest key (each XORed with `flip`) among `ways` (kWays when not 0).
  template <std::uint32_t kWays>
  static std::uint32_t lowest_key(const std::uint32_t* keys, std::uint32_t flip, std::uint32_t ways) {
#if defined(__SSE4_1__)
    if constexpr (kWays == 16) {
      const __m128i f = _mm_set1_epi32(static_cast<int>(flip));
      auto load = [&](int w) { return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(keys + w)), f); };
      const __m128i k0 = load(0), k1 = load(4), k2 = load(8), k3 = load(12);
      __m128i m = _mm_min_epu32(_mm_min_epu32(k0, k1), _mm_min_epu32(k2, k3));
      m = _mm_min_epu32(m, _mm_shuffle_epi32(m, 0x4E));  // swap halves
      m = _mm_min_epu32(m, _mm_shuffle_epi32(m, 0xB1));  // swap neighbours: every lane holds the minimum
      // Equal keys give all-ones 32-bit lanes; two saturating packs keep one byte a way.
      const __m128i eq = _mm_packs_epi16(_mm_packs_epi32(_mm_cmpeq_epi32(k0, m), _mm_cmpeq_epi32(k1, m)),
                                         _mm_packs_epi32(_mm_cmpeq_epi32(k2, m), _mm_cmpeq_epi32(k3, m)));
      return static_cast<std::uint32_t>(std::countr_zero(static_cast<std::uint32_t>(_mm_movemask_epi8(eq))));
    }
#endif
    const std::uint32_t n = kWays != 0 ? kWays : ways;
    std::uint32_t lowest = ~0U;
    for (std::uint32_t w = 0; w < n; ++w) lowest = std::min(lowest, keys[w] ^ flip);
    std::uint32_t w = 0;
    while ((keys[w] ^ flip) != lowest) ++w;
    return w;
  }

 private:
  // A way's key orders it for replacement, lowest first: free ways (0), then normal lines that entered as least
  // recent (streaming, demoted: 1), then normal lines by last use, then persisting lines by last use. A stamp is the
  // LRU clock's value at the last use (2 and up); persisting lines carry the top bit above it. Ways are stored
  // field by field within a block of 16 (the tags together, the keys together), so the scans of a 16-way set are
  // vector compares.
  // A way holds its line's number complemented, so that a free way's code is 0 (no line number is ~0) and a new
  // cache's zero pages are all free ways (ZeroedArray).
  static constexpr std::uint64_t kFreeCode = 0;
  [[nodiscard]] static std::uint64_t code_of(std::uint64_t line) { return ~line; }  // and back
  static constexpr std::uint32_t kFreeKey = 0;
  static constexpr std::uint32_t kOldKey = 1;
  static constexpr std::uint32_t kPersistBit = 0x80000000U;

  void clear(std::uint32_t slot) {
    code(slot) = kFreeCode;
    key(slot) = kFreeKey;
    state(slot) = {};
  }
  [[nodiscard]] std::uint64_t& code(std::uint32_t slot) { return m_blocks[slot / kBlockWays].codes[slot % kBlockWays]; }
  [[nodiscard]] std::uint64_t code(std::uint32_t slot) const {
    return m_blocks[slot / kBlockWays].codes[slot % kBlockWays];
  }
  [[nodiscard]] std::uint32_t& key(std::uint32_t slot) { return m_blocks[slot / kBlockWays].keys[slot % kBlockWays]; }
  [[nodiscard]] std::uint32_t key(std::uint32_t slot) const {
    return m_blocks[slot / kBlockWays].keys[slot % kBlockWays];
  }
  [[nodiscard]] const State& state(std::uint32_t slot) const {
    return m_blocks[slot / kBlockWays].state[slot % kBlockWays];
  }
  std::uint32_t next_stamp() {
    if (m_clock >= kMaxStamp) renumber();
    return ++m_clock;
  }
  // Before the stamp clock wraps: each set's stamps become their ranks (order kept), and the clock restarts above them.
  void renumber();

  CacheGeometry m_g;
  std::uint32_t m_slices;
  // The ways' tags (codes), keys and states, 16 slots a block (a 16-way set: one block, 256 bytes in four neighbouring
  // host cache lines); all zero bytes is a free way (kFreeCode, kFreeKey, no sectors).
  static constexpr std::uint32_t kBlockWays = 16;
  struct alignas(64) Block {
    std::array<std::uint64_t, kBlockWays> codes;
    std::array<std::uint32_t, kBlockWays> keys;
    std::array<State, kBlockWays> state;
  };
  ZeroedArray<Block> m_blocks;
  ZeroedArray<std::uint32_t> m_words;
  std::vector<std::uint16_t> m_persist;  // persisting lines per set
  std::vector<std::uint64_t> m_touched;  // a bit per set a line entered since the last flush
  std::uint32_t m_persisting_ways = 0;
  std::uint32_t m_clock;
};

inline std::uint32_t SetCache::victim(std::uint32_t set, L2Property property) const {
  const std::uint32_t base = set * m_g.ways;
  const bool persist = property == L2Property::persisting && m_persisting_ways > 0;
  // The victim is the way of the lowest key (the first of them on ties). A persisting line whose set-aside is full
  // replaces the oldest persisting line instead: flipping the top bit ranks persisting lines below all others (a
  // full set-aside holds at least one).
  const std::uint32_t flip = persist && m_persist[set] >= m_persisting_ways ? kPersistBit : 0U;
  if (m_g.ways == kWideWays) return base + lowest_key<kWideWays>(m_blocks[set].keys.data(), flip, kWideWays);
  std::uint32_t slot = base;
  for (std::uint32_t w = base; w < base + m_g.ways; ++w)  // the first way of the lowest key
    if ((key(w) ^ flip) < (key(slot) ^ flip)) slot = w;
  return slot;
}

inline void SetCache::fill(std::uint32_t slot, std::uint64_t line, std::uint32_t set, L2Property property) {
  m_touched[set >> 6U] |= std::uint64_t{1} << (set & 63U);
  if (persisting(slot)) --m_persist[set];  // a free way's key is not
  const bool persist = property == L2Property::persisting && m_persisting_ways > 0;
  code(slot) = code_of(line);
  state(slot) = {};  // words(slot) mean nothing while no sector is partly written
  if (persist) ++m_persist[set];
  // Streaming lines enter as the least recently used, so they go first.
  key(slot) = property == L2Property::streaming ? kOldKey : (persist ? kPersistBit : 0U) | next_stamp();
}

// Here rather than in set_cache.cpp so that the L2 slice's per-request calls inline it (cachegrind, the benchmark
// traces: 1-2% of the host instructions).
inline std::uint32_t SetCache::insert(std::uint64_t line, std::uint32_t set, L2Property property, Evicted& out) {
  const std::uint32_t slot = victim(set, property);
  out = {};
  if (holds_line(slot)) {
    const State& old = state(slot);
    out = {this->line(slot), old.dirty, true, old.partial, old.batched != 0};
  }
  fill(slot, line, set, property);
  return slot;
}

}  // namespace memhier
