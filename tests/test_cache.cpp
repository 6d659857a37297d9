// The cache building blocks on their own: the coalescer's sector sets, the L2 set cache's LRU order, and an L2
// slice's copies and dirty-line limit.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <random>
#include <set>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "../model/cache/lru_sets.h"
#include "../model/cache/sectored_cache.h"
#include "../model/cache/set_cache.h"
#include "../model/l2/l2_slice.h"
#include "../model/sim/coalescer.h"
#include "../model/sim/replay_order.h"
#include "../model/sim/tpc_merge.h"
#include "../model/util/sort_unique.h"
#include "../model/util/zeroed_array.h"

using namespace memhier;

namespace {

// The sectors the coalescer's lines hold, ascending; checks the lines are ascending, unique and not empty, and that
// they hold `count` sectors.
std::vector<std::uint64_t> sectors(const std::vector<std::uint64_t>& addresses, unsigned size) {
  SectorSet s;
  coalesce(addresses, size, kLayoutUnknown, s);
  std::vector<std::uint64_t> out;
  for (int i = 0; i < s.line_count; ++i) {
    const SectorSet::Line& l = s.lines[static_cast<std::size_t>(i)];
    CHECK(l.mask != 0);
    CHECK(l.mask < 16);
    if (i > 0) CHECK(l.line > s.lines[static_cast<std::size_t>(i - 1)].line);
    for (unsigned b = 0; b < 4; ++b)
      if ((l.mask >> b & 1U) != 0) out.push_back(l.line * 4 + b);
  }
  CHECK(out.size() == static_cast<std::size_t>(s.count));
  return out;
}

// The line a one-set cache evicts to make room for `line`.
std::uint64_t victim(SetCache& c, std::uint64_t line) {
  SetCache::Evicted ev;
  c.insert(line, L2Property::normal, ev);
  REQUIRE(ev.valid);
  return ev.line;
}

}  // namespace

TEST_CASE("coalescer: sectors ascending and unique whatever the lane order") {
  // Lanes in order, two per sector: sectors 0..3 once each.
  CHECK(sectors({0, 16, 32, 48, 64, 80, 96, 112}, 4) == std::vector<std::uint64_t>{0, 1, 2, 3});
  // The same addresses reversed and shuffled give the same set.
  CHECK(sectors({112, 96, 80, 64, 48, 32, 16, 0}, 4) == std::vector<std::uint64_t>{0, 1, 2, 3});
  CHECK(sectors({64, 0, 96, 32, 0, 64}, 4) == std::vector<std::uint64_t>{0, 1, 2, 3});
  // A lane straddling a sector boundary touches both (8 bytes at 28: sectors 0 and 1); a later lane in sector 1
  // adds nothing, one in sector 3 does.
  CHECK(sectors({28, 40, 100}, 8) == std::vector<std::uint64_t>{0, 1, 3});
  // Straddling lanes out of order: 16 bytes at 120 (sectors 3, 4), then 16 at 24 (0, 1).
  CHECK(sectors({120, 24}, 16) == std::vector<std::uint64_t>{0, 1, 3, 4});
  // Every lane on one address (a broadcast): one sector.
  CHECK(sectors(std::vector<std::uint64_t>(32, 4096), 4) == std::vector<std::uint64_t>{128});
}

TEST_CASE("coalescer: lanes at most a sector apart cover a contiguous range; one gap of 33 bytes leaves a hole") {
  // 32 lanes 32 bytes apart from 8: each lane's 4 bytes in the next sector, sectors 0..31.
  std::vector<std::uint64_t> a(32);
  for (std::uint64_t l = 0; l < 32; ++l) a[l] = 8 + 32 * l;
  CHECK(sectors(a, 4).size() == 32);
  CHECK(sectors(a, 4).back() == 31);
  // 16-byte lanes 16 apart from 24: bytes 24..535, sectors 0..16 (17).
  for (std::uint64_t l = 0; l < 32; ++l) a[l] = 24 + 16 * l;
  CHECK(sectors(a, 16).size() == 17);
  // Two 1-byte lanes 33 bytes apart at 31 and 64: sectors 0 and 2, sector 1 untouched; at 4 bytes the first lane
  // straddles into sector 1.
  CHECK(sectors({31, 64}, 1) == std::vector<std::uint64_t>{0, 2});
  CHECK(sectors({31, 64}, 4) == std::vector<std::uint64_t>{0, 1, 2});
}

TEST_CASE("coalescer: equals a brute-force count of touched sectors on random lane patterns") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const unsigned size = 1U << (rng() % 5);  // 1..16 bytes
    const std::size_t lanes = 1 + rng() % 32;
    const std::uint64_t stride = rng() % 4 == 0 ? rng() % 200 : rng() % 40;
    std::vector<std::uint64_t> a(lanes);
    std::uint64_t at = 4096 + (rng() % 64) * size;
    for (std::uint64_t& x : a) {
      x = rng() % 8 == 0 ? 4096 + (rng() % 512) * size : at;  // mostly strided, sometimes scattered
      at += stride - stride % size;
    }
    std::set<std::uint64_t> expected;
    for (std::uint64_t x : a)
      for (std::uint64_t byte = x; byte < x + size; ++byte) expected.insert(byte / 32);
    CHECK(sectors(a, size) == std::vector<std::uint64_t>(expected.begin(), expected.end()));
  }
}

TEST_CASE("sort_unique: what std::set keeps, in its order, at every count up to past its 64-value limit") {
  std::mt19937_64 rng(5);
  for (std::size_t n = 0; n <= 70; ++n) {
    CAPTURE(n);
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<std::uint64_t> v(n);
      // Few distinct values (repeats), values above 2^63 (the sign bit the keys flip), and the largest value (the
      // padding's key).
      const std::uint64_t spread = trial % 3 == 0 ? 8 : ~std::uint64_t{0};
      for (std::uint64_t& x : v) x = trial % 5 == 0 && rng() % 4 == 0 ? ~std::uint64_t{0} : rng() % spread;
      const std::set<std::uint64_t> expected(v.begin(), v.end());
      v.resize(sort_unique(v.data(), n));
      CHECK(v == std::vector<std::uint64_t>(expected.begin(), expected.end()));
    }
  }
}

TEST_CASE("sort_unique: 17 to 32 values close together (a gather's sectors) and about 2^32 apart") {
  std::mt19937_64 rng(11);
  const std::uint64_t base = 0x7f0000000000ULL >> 5U;  // sector numbers of a description's heap
  for (std::size_t n = 17; n <= 32; ++n) {
    CAPTURE(n);
    // Spreads: repeats, a gather's table (the sorting network's case), and about 2^32, where 32-bit offsets from the
    // smallest value would stop fitting (a 32-bit variant was tried: bench/results/sim-2026-11-26-session38.txt).
    for (const std::uint64_t spread : {std::uint64_t{4}, std::uint64_t{1} << 21U, std::uint64_t{0xFFFFFFFEULL},
                                       std::uint64_t{0xFFFFFFFFULL}, std::uint64_t{1} << 32U}) {
      CAPTURE(spread);
      for (int trial = 0; trial < 200; ++trial) {
        std::vector<std::uint64_t> v(n);
        for (std::uint64_t& x : v) x = base + rng() % (spread + 1);
        if (trial % 2 == 0) {  // both ends of the spread present
          v[rng() % n] = base;
          v[rng() % n] = base + spread;
        }
        const std::set<std::uint64_t> expected(v.begin(), v.end());
        v.resize(sort_unique(v.data(), n));
        CHECK(v == std::vector<std::uint64_t>(expected.begin(), expected.end()));
      }
    }
  }
}

TEST_CASE(
    "sort_unique's two ways with 17 to 32 values: the sorting network and, on a host with AVX-512F, the vector one") {
  // sort_unique() takes one of them on a given host: here the network is checked on every host and the vector one
  // wherever the host has AVX-512F, against std::set, for every count from 17 to 32, with repeats, the largest value
  // (the padding's) and values above 2^63.
  std::mt19937_64 rng(23);
  for (std::size_t n = 17; n <= 32; ++n) {
    CAPTURE(n);
    for (int trial = 0; trial < 300; ++trial) {
      CAPTURE(trial);
      std::vector<std::uint64_t> v(n);
      const std::uint64_t spread = trial % 3 == 0 ? 6 : (trial % 3 == 1 ? std::uint64_t{1} << 21U : ~std::uint64_t{0});
      for (std::uint64_t& x : v) x = trial % 4 == 0 && rng() % 5 == 0 ? ~std::uint64_t{0} : rng() % spread;
      const std::set<std::uint64_t> set(v.begin(), v.end());
      const std::vector<std::uint64_t> expected(set.begin(), set.end());
      // The network sorts all 32 places, those past n holding the largest value.
      std::array<std::uint64_t, 32> padded{};
      padded.fill(~std::uint64_t{0});
      std::copy(v.begin(), v.end(), padded.begin());
      sort_detail::network(padded, std::make_index_sequence<sort_detail::kComparators.count>{});
      CHECK(std::is_sorted(padded.begin(), padded.end()));
      CHECK(std::vector<std::uint64_t>(padded.begin(), padded.begin() + static_cast<std::ptrdiff_t>(n)) == [&] {
        std::vector<std::uint64_t> sorted = v;
        std::sort(sorted.begin(), sorted.end());
        return sorted;
      }());
#if defined(MEMHIER_SORT_AVX512)
      if (sort_detail::avx512()) {
        // Its masked stores write v's first places only: a guard just past them stays.
        std::vector<std::uint64_t> w = v;
        w.push_back(0x5EED);
        const std::size_t kept = sort_detail::sort_unique_avx512(w.data(), n);
        CHECK(w[n] == 0x5EED);
        CHECK(std::vector<std::uint64_t>(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(kept)) == expected);
      }
#endif
    }
  }
#if defined(MEMHIER_SORT_AVX512)
  if (!sort_detail::avx512()) MESSAGE("this host has no AVX-512F: its vector sort is not checked");
#endif
}

TEST_CASE(
    "sort_unique: ascending values, ascending but for one wrap, periodic ones, and two runs that are no rotation") {
  // Ascending (with repeats), a rotation of ascending values (an index modulo a table), the same with the wrap's two
  // ends equal, periodic values (an index modulo a few lanes) with and without a last value off the period, and two
  // ascending runs whose second ends above the first's start (not a rotation: sorted in full).
  std::mt19937_64 rng(17);
  for (std::size_t n = 1; n <= 40; ++n) {
    CAPTURE(n);
    for (int trial = 0; trial < 40; ++trial) {
      CAPTURE(trial);
      std::vector<std::uint64_t> v(n);
      std::uint64_t x = rng() % 1000;
      for (std::uint64_t& y : v) y = x += rng() % 3;  // steps of 0, 1 or 2
      const std::size_t cut = static_cast<std::size_t>(rng() % n);
      switch (trial % 5) {
        case 0:
          break;
        case 1:
          std::rotate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(cut), v.end());
          break;
        case 2:  // the last value equal to the first once rotated
          std::rotate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(cut), v.end());
          if (n > 1 && cut > 0) v.back() = v.front();
          break;
        case 3: {  // periodic (lane % p), the first period ascending; every other time the last value off it
          const std::size_t period = 1 + cut;
          for (std::size_t i = period; i < n; ++i) v[i] = v[i - period];
          if (trial % 8 == 7 && n > period) v.back() = v.back() == 0 ? 5 : v.back() - 1;
          break;
        }
        default:  // two runs: the second starts lower and ends higher than the first's first value
          for (std::size_t i = cut; i < n; ++i) v[i] = v[i] - v[cut] + (v[0] == 0 ? 0 : v[0] - 1) + 2 * (i - cut);
          break;
      }
      const std::set<std::uint64_t> expected(v.begin(), v.end());
      v.resize(sort_unique(v.data(), n));
      CHECK(v == std::vector<std::uint64_t>(expected.begin(), expected.end()));
    }
  }
  // By hand: (lane * 32 + k) % 1024 words for 4 lanes and k = 40: 40, 72, 104, 136 -> lanes 3 of a 1024 table wrap.
  std::vector<std::uint64_t> wrapped = {1000, 1016, 8, 24, 24, 40};
  wrapped.resize(sort_unique(wrapped.data(), wrapped.size()));
  CHECK(wrapped == std::vector<std::uint64_t>{8, 24, 40, 1000, 1016});
  std::vector<std::uint64_t> periodic = {0, 64, 128, 0, 64, 128, 0, 64};  // lane % 3
  periodic.resize(sort_unique(periodic.data(), periodic.size()));
  CHECK(periodic == std::vector<std::uint64_t>{0, 64, 128});
  std::vector<std::uint64_t> almost = {0, 64, 128, 0, 64, 128, 0, 32};  // the last lane off the period
  almost.resize(sort_unique(almost.data(), almost.size()));
  CHECK(almost == std::vector<std::uint64_t>{0, 32, 64, 128});
  std::vector<std::uint64_t> two_runs = {10, 20, 5, 30};  // 30 > 10: no rotation
  two_runs.resize(sort_unique(two_runs.data(), two_runs.size()));
  CHECK(two_runs == std::vector<std::uint64_t>{5, 10, 20, 30});
}

TEST_CASE("LRU sets hit and miss as the set cache does for normal lines, and least recently used goes first") {
  // By hand, one set of 4 ways (lines 1 to 5), most recent first: 1 2 3 4 fill it (4 3 2 1); 1 hits (1 4 3 2); 5
  // replaces 2, the least recent (5 1 4 3); 2 replaces 3 (2 5 1 4); 1 hits (1 2 5 4); 3 replaces 4 (3 1 2 5); 4
  // replaces 5 (4 3 1 2); 5 misses (5 4 3 1); 1 hits.
  LruSets one(1, 4);
  const std::vector<std::pair<std::uint64_t, bool>> steps = {{1, false}, {2, false}, {3, false}, {4, false},
                                                             {1, true},  {5, false}, {2, false}, {1, true},
                                                             {3, false}, {4, false}, {5, false}, {1, true}};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    CAPTURE(i);
    CHECK(one.access(steps[i].first) == steps[i].second);
  }
  // Against SetCache (the H100's constant cache shape and others: line mod sets), on lines drawn from a few more
  // than the cache holds.
  std::mt19937_64 rng(23);
  for (const auto& [sets, ways] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {8, 4}, {1, 1}, {4, 2}, {2, 16}, {16, 3}, {2, 17}, {1, 40}}) {
    CAPTURE(sets);
    CAPTURE(ways);
    LruSets lru(sets, ways);
    SetCache reference({64, 64, sets, ways});
    int hits = 0;
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t line = rng() % (std::uint64_t{sets} * ways * 3 / 2 + 1);
      const auto set = static_cast<std::uint32_t>(line & (sets - 1U));
      const std::uint32_t slot = reference.find(line, set);
      const bool hit = slot != SetCache::kNone;
      if (hit) {
        reference.touch(slot);
      } else {
        SetCache::Evicted ev;
        reference.insert(line, set, L2Property::normal, ev);
      }
      hits += hit ? 1 : 0;
      REQUIRE(lru.access(line) == hit);
    }
    CHECK(hits > 1000);  // the stream hits as well as misses
  }
}

TEST_CASE("set cache: least recently used goes first, also across the stamp clock's wrap") {
  for (const std::uint32_t start : {1U, SetCache::kMaxStamp - 5U}) {
    CAPTURE(start);
    SetCache c({128, 32, 1, 4}, 1, start);
    SetCache::Evicted ev;
    for (std::uint64_t line : {10, 11, 12, 13}) {
      c.insert(line, L2Property::normal, ev);
      CHECK_FALSE(ev.valid);
    }
    // The clock wraps somewhere in here when started near the top: the order must survive it.
    c.touch(c.find(10));
    c.touch(c.find(11));
    CHECK(victim(c, 14) == 12);  // oldest untouched
    CHECK(victim(c, 15) == 13);
    CHECK(victim(c, 16) == 10);
    c.touch(c.find(14));
    CHECK(victim(c, 17) == 11);
    CHECK(victim(c, 18) == 15);
  }
}

TEST_CASE("set cache: a streaming line enters least recent and goes before older normal lines") {
  SetCache c({128, 32, 1, 2});
  SetCache::Evicted ev;
  c.insert(1, L2Property::normal, ev);
  c.insert(2, L2Property::streaming, ev);
  CHECK(victim(c, 3) == 2);
}

TEST_CASE("set cache: streaming lines, equal in rank, go in way order; then the oldest normal line") {
  // A 4-way set takes the loop over its ways, a 16-way set the vector scan: both give ties to the first way. Lines
  // 100 + w fill way w (free ways are taken first way first); three of them enter streaming.
  for (const std::uint32_t ways : {4U, 16U}) {
    CAPTURE(ways);
    SetCache c({128, 32, 1, ways});
    SetCache::Evicted ev;
    const std::vector<std::uint64_t> streaming =
        ways == 4 ? std::vector<std::uint64_t>{101, 102, 103} : std::vector<std::uint64_t>{103, 107, 112};
    for (std::uint64_t line = 100; line < 100 + ways; ++line)
      c.insert(line, std::ranges::count(streaming, line) != 0 ? L2Property::streaming : L2Property::normal, ev);
    for (std::uint64_t w = 0; w < ways; ++w) CHECK(c.find(100 + w) == w);
    CHECK(victim(c, 200) == streaming[0]);
    CHECK(victim(c, 201) == streaming[1]);
    CHECK(victim(c, 202) == streaming[2]);
    CHECK(victim(c, 203) == 100);  // the oldest normal line
  }
}

TEST_CASE(
    "set cache: persisting lines keep to their ways, a full set-aside replaces its oldest; a reset demotes them") {
  SetCache c({128, 32, 1, 4});
  c.set_persisting_ways(2);
  SetCache::Evicted ev;
  c.insert(1, L2Property::persisting, ev);
  c.insert(2, L2Property::persisting, ev);
  // The set-aside (2 ways) is full: the third persisting line replaces the oldest, though two ways are free.
  c.insert(3, L2Property::persisting, ev);
  REQUIRE(ev.valid);
  CHECK(ev.line == 1);
  CHECK(c.persisting(c.find(3)));
  c.insert(4, L2Property::normal, ev);
  CHECK_FALSE(ev.valid);  // the free ways
  c.insert(5, L2Property::normal, ev);
  CHECK_FALSE(ev.valid);
  // Normal lines go before persisting ones, oldest first, though persisting line 2 is older than both.
  CHECK(victim(c, 6) == 4);
  // cudaCtxResetPersistingL2Cache: 2 and 3 become normal and least recent, so they go next, then 5 (older than 6).
  c.demote_persisting();
  CHECK_FALSE(c.persisting(c.find(2)));
  const std::uint64_t first = victim(c, 7), second = victim(c, 8);
  CHECK(std::set<std::uint64_t>{first, second} == std::set<std::uint64_t>{2, 3});
  CHECK(victim(c, 9) == 5);
  // A dropped copy frees its way, which the next line takes without evicting anything.
  c.invalidate(c.find(6));
  c.insert(10, L2Property::normal, ev);
  CHECK_FALSE(ev.valid);
  CHECK(c.find(6) == SetCache::kNone);
}

TEST_CASE("set cache: a flush writes back the dirty lines in slot order, only those, and empties every set") {
  SetCache c({128, 32, 8, 2});  // 8 sets of 2 ways; one slice, so a line's set is place_in_sets(line, 8)
  SetCache::Evicted ev;
  // Lines 0..7 fill each of the 8 sets once (a run of consecutive lines: see the placement test below).
  for (std::uint64_t line = 0; line < 8; ++line) c.insert(line, L2Property::normal, ev);
  c.dirty(c.find(5)) = 0b0011;
  c.dirty(c.find(2)) = 0b1000;
  std::vector<std::pair<std::uint64_t, std::uint8_t>> written;
  c.flush([&](std::uint64_t line, std::uint8_t dirty, bool) { written.emplace_back(line, dirty); });
  std::vector<std::pair<std::uint64_t, std::uint8_t>> expected{{5, 0b0011}, {2, 0b1000}};
  if (c.set_of(2) < c.set_of(5)) std::swap(expected[0], expected[1]);
  CHECK(written == expected);
  for (std::uint64_t line = 0; line < 8; ++line) CHECK(c.find(line) == SetCache::kNone);
  // Nothing is left to write back, and each set again takes two lines without evicting.
  c.flush([&](std::uint64_t, std::uint8_t, bool) { FAIL("a flushed cache wrote back"); });
  for (std::uint64_t line = 0; line < 16; ++line) {
    c.insert(line, L2Property::normal, ev);
    CHECK_FALSE(ev.valid);
  }
}

TEST_CASE("set cache: a new cache's ways are free, line 0 and the largest line number included, 16 ways or fewer") {
  // Ways hold line numbers complemented (a free way is zero bytes): line 0's code is all ones, and the largest line
  // number's is 1; neither may read as free, nor a free way as either.
  constexpr std::uint64_t kLast = (std::uint64_t{1} << 57U) - 1;  // the top of a 64-bit space's 128-byte lines
  for (const std::uint32_t ways : {16U, 4U}) {
    CAPTURE(ways);
    SetCache c({128, 32, 4, ways});
    for (const std::uint64_t line : {std::uint64_t{0}, kLast, std::uint64_t{1}}) CHECK(c.find(line) == SetCache::kNone);
    SetCache::Evicted ev;
    const std::uint32_t zero = c.insert(0, L2Property::normal, ev);
    CHECK_FALSE(ev.valid);
    const std::uint32_t last = c.insert(kLast, L2Property::normal, ev);
    CHECK_FALSE(ev.valid);
    CHECK(c.find(0) == zero);
    CHECK(c.find(kLast) == last);
    CHECK(c.holds_line(zero));
    CHECK(c.line(zero) == 0);
    CHECK(c.line(last) == kLast);
    c.dirty(zero) = 0b0101;
    c.dirty(last) = 0b1000;
    std::set<std::pair<std::uint64_t, std::uint8_t>> written;
    c.flush([&](std::uint64_t line, std::uint8_t dirty, bool) { written.emplace(line, dirty); });
    CHECK(written == std::set<std::pair<std::uint64_t, std::uint8_t>>{{0, 0b0101}, {kLast, 0b1000}});
    CHECK(c.find(0) == SetCache::kNone);
    CHECK(c.find(kLast) == SetCache::kNone);
    CHECK_FALSE(c.holds_line(zero));
  }
}

TEST_CASE("zeroed array: starts zero on the heap and on fresh pages; copies are deep; a move leaves none behind") {
  struct Entry {
    std::uint64_t a;
    std::uint32_t b;
  };
  // 100 entries (1.6 KB: the heap, cleared) and 1 << 16 (1 MiB: fresh pages of the OS).
  for (const std::size_t n : {std::size_t{100}, std::size_t{1} << 16U}) {
    CAPTURE(n);
    ZeroedArray<Entry> z(n);
    REQUIRE(z.size() == n);
    CHECK(std::all_of(z.begin(), z.end(), [](const Entry& e) { return e.a == 0 && e.b == 0; }));
    z[n - 1] = {7, 9};
    z[0].a = 3;
    ZeroedArray<Entry> copy = z;
    CHECK(copy.data() != z.data());
    copy[0].a = 4;
    CHECK(z[0].a == 3);
    CHECK(copy[n - 1].a == 7);
    CHECK(copy[n - 1].b == 9);
    ZeroedArray<Entry> moved = std::move(copy);
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): what a move leaves is the point
    CHECK(copy.data() == nullptr);
    CHECK(moved[0].a == 4);
    moved = z;
    CHECK(moved.data() != z.data());
    CHECK(moved[0].a == 3);
    CHECK(moved[n - 1].b == 9);
  }
  ZeroedArray<std::uint32_t> none;
  CHECK(none.empty());
  CHECK(none.begin() == none.end());
}

TEST_CASE("zeroed array: a large one freed goes to the pool, and the next of its size is that one, cleared") {
  constexpr std::size_t kCount = (std::size_t{256} << 10U) / sizeof(std::uint64_t) + 5;  // an odd size: no other's
  std::size_t before = 0;
  const void* first = nullptr;
  {
    ZeroedArray<std::uint64_t> a(kCount);
    before = zeroed::pooled_bytes();  // after a's making, which may have unmapped older tables (zeroed::Pool)
    std::fill(a.begin(), a.end(), ~std::uint64_t{0});
    first = a.data();
  }
  CHECK(zeroed::pooled_bytes() == before + kCount * sizeof(std::uint64_t));
  ZeroedArray<std::uint64_t> b(kCount);
  CHECK(static_cast<const void*>(b.data()) == first);
  CHECK(zeroed::pooled_bytes() == before);
  CHECK(std::all_of(b.begin(), b.end(), [](std::uint64_t v) { return v == 0; }));
}

TEST_CASE(
    "zeroed pool: tables of a size it lacks push out its oldest, so that it and the tables in use never take more "
    "than the most ever in use at once") {
  constexpr std::size_t kMiB = std::size_t{1} << 20U;
  zeroed::Pool pool(64 * kMiB);
  // A configuration's two tables, used and given back: the pool keeps both (8 MiB, the most in use so far).
  void* a = pool.take(4 * kMiB);
  void* b = pool.take(4 * kMiB);
  CHECK(pool.live() == 8 * kMiB);
  CHECK(pool.peak() == 8 * kMiB);
  static_cast<unsigned char*>(a)[0] = 1;
  static_cast<unsigned char*>(b)[kMiB] = 2;
  pool.give(a, 4 * kMiB);
  pool.give(b, 4 * kMiB);
  CHECK(pool.pooled() == 8 * kMiB);
  CHECK(pool.live() == 0);
  // The same configuration again: both come back, the latest given back first, cleared.
  void* again = pool.take(4 * kMiB);
  CHECK(again == b);
  CHECK(static_cast<unsigned char*>(again)[kMiB] == 0);
  pool.give(again, 4 * kMiB);
  // Another configuration (a sweep's next L2 size): its 3 MiB table comes fresh, and with 3 MiB in use the pool may
  // keep 5 of its 8 MiB: a, the oldest, goes.
  void* c = pool.take(3 * kMiB);
  CHECK(pool.live() == 3 * kMiB);
  CHECK(pool.pooled() == 4 * kMiB);
  CHECK(pool.take(4 * kMiB) == b);  // the one left
  CHECK(pool.pooled() == 0);
  CHECK(pool.peak() == 8 * kMiB);
  pool.give(b, 4 * kMiB);
  pool.give(c, 3 * kMiB);
  CHECK(pool.pooled() == 7 * kMiB);
  // A larger configuration: with its first 40 MiB table in use, 40 MiB the most ever, the pool keeps nothing of the
  // last one's; and its own bound stops it keeping more than 64 MiB of this one's.
  void* d = pool.take(40 * kMiB);
  CHECK(pool.pooled() == 0);
  void* e = pool.take(40 * kMiB);
  CHECK(pool.peak() == 80 * kMiB);
  pool.give(d, 40 * kMiB);
  pool.give(e, 40 * kMiB);  // 40 + 40 > 64: e goes back to the OS
  CHECK(pool.pooled() == 40 * kMiB);
  CHECK(pool.take(40 * kMiB) == d);
  pool.give(d, 40 * kMiB);
}

#if defined(__linux__)
TEST_CASE("zeroed array: a large one takes no memory until written, then a page where written, also once reused") {
  const long page = sysconf(_SC_PAGESIZE);
  REQUIRE(page > 0);
  const auto page_bytes = static_cast<std::size_t>(page);
  // 64 MiB (a large L2's tables) and three pages: a size no other test frees, so it comes fresh, not from the pool.
  const std::size_t bytes = (std::size_t{64} << 20U) + 3 * page_bytes;
  const std::size_t n = bytes / sizeof(std::uint64_t);
  auto resident = [&](const ZeroedArray<std::uint64_t>& z) {  // pages of z in memory (mincore: bit 0 of a page's byte)
    std::vector<unsigned char> in((bytes + page_bytes - 1) / page_bytes);
    REQUIRE(mincore(const_cast<std::uint64_t*>(z.data()), bytes, in.data()) == 0);
    return std::count_if(in.begin(), in.end(), [](unsigned char v) { return (v & 1U) != 0; });
  };
  // A write brings in its page, or its 2 MiB huge page where the kernel gives anonymous memory those (transparent
  // huge pages "always"); a table cleared when made would be all 16,387 pages.
  const auto huge = static_cast<std::ptrdiff_t>((std::size_t{2} << 20U) / page_bytes);
  const void* first = nullptr;
  std::ptrdiff_t one = 0;
  {
    ZeroedArray<std::uint64_t> z(n);
    first = z.data();
    REQUIRE(reinterpret_cast<std::uintptr_t>(z.data()) % page_bytes == 0);
    CHECK(resident(z) == 0);
    z[n / 2] = 1;
    z[n / 2 + 1] = 2;  // the same page
    one = resident(z);
    CHECK((one == 1 || one == huge));
    z[n / 4] = 3;
    CHECK(resident(z) == 2 * one);
    CHECK(z[n / 2] + z[n / 2 + 1] + z[n / 4] == 6);
  }
  // Freed, it comes back from the pool as the next of its size: zero where it was written, and no other page brought
  // in (clearing all of it would have touched every page).
  ZeroedArray<std::uint64_t> again(n);
  CHECK(static_cast<const void*>(again.data()) == first);
  CHECK(resident(again) == 2 * one);
  CHECK(again[n / 2] == 0);
  CHECK(again[n / 2 + 1] == 0);
  CHECK(again[n / 4] == 0);
  CHECK(resident(again) == 2 * one);
}
#endif

namespace {

// c.access(line) evicts `victim` (~0: nothing), after which `line` is found where access() put it and the victim is
// gone. The random-run tests' check against their models.
void access_evicts(SectoredCache& c, std::uint64_t line, L2Property property, std::uint64_t victim) {
  SectoredCache::Evicted ev;
  const std::uint32_t slot = c.access(line, property, ev);
  REQUIRE(ev.valid == (victim != ~std::uint64_t{0}));
  if (ev.valid) REQUIRE(ev.line == victim);
  REQUIRE(c.find(line) == slot);
  if (ev.valid) REQUIRE(c.find(victim) == SectoredCache::kNone);
}

}  // namespace

TEST_CASE("sectored cache: access() keeps the LRU order and victims of a list model over a long random run") {
  // The model: per set, persisting and normal lines each in a list, most recent first. A persisting line whose
  // set-aside (3 ways) is full replaces the oldest persisting line; otherwise a full set gives up its oldest normal
  // line, or its oldest persisting one when it holds no normal line. Streaming lines enter as the oldest normal line.
  const CacheGeometry g{128, 32, 4, 16};
  SectoredCache c(g);
  c.set_persisting_ways(3);
  struct Set {
    std::vector<std::uint64_t> persist, normal;
  };
  std::vector<Set> model(4);
  std::mt19937_64 rng(3);
  for (int step = 0; step < 200000; ++step) {
    CAPTURE(step);
    const std::uint64_t line = rng() % 160;  // 40 lines a set for 16 ways: hits, misses and evictions all common
    const auto property = static_cast<L2Property>(rng() % 3);  // normal, streaming or persisting
    Set& m = model[c.set_of(line)];                            // set_of() is checked by hand below
    auto in = [&](std::vector<std::uint64_t>& v) { return std::find(v.begin(), v.end(), line); };
    std::uint64_t victim = ~std::uint64_t{0};
    if (in(m.persist) != m.persist.end()) {
      m.persist.erase(in(m.persist));
      m.persist.insert(m.persist.begin(), line);
    } else if (in(m.normal) != m.normal.end()) {
      m.normal.erase(in(m.normal));
      m.normal.insert(m.normal.begin(), line);
    } else {
      const bool persist = property == L2Property::persisting;
      if (persist && m.persist.size() >= 3) {
        victim = m.persist.back();
        m.persist.pop_back();
      } else if (m.persist.size() + m.normal.size() == 16) {
        std::vector<std::uint64_t>& from = m.normal.empty() ? m.persist : m.normal;
        victim = from.back();
        from.pop_back();
      }
      if (persist)
        m.persist.insert(m.persist.begin(), line);
      else if (property == L2Property::streaming)
        m.normal.push_back(line);
      else
        m.normal.insert(m.normal.begin(), line);
    }
    access_evicts(c, line, property, victim);
  }
}

TEST_CASE("sectored cache: tree PLRU picks the way its bits lead to, which need not be the least recent") {
  // One set of 4 ways; free ways are taken from the last down, so A..D land in ways 3, 2, 1, 0. The tree's root
  // chooses a half (ways 0-1 or 2-3), each child a way in its half; an access points both on its path away from it.
  SectoredCache c({128, 32, 1, 4}, true);
  SectoredCache::Evicted ev;
  const std::uint64_t a = 10, b = 11, d = 13, e = 14, f = 15, g = 16, h = 17;
  for (std::uint64_t line : {a, b, std::uint64_t{12}, d}) c.insert(line, L2Property::normal, ev);
  // After D (way 0) the root points to ways 2-3 and their node to way 3 (A, touched before B): LRU and PLRU agree.
  // A hit on A points the root to ways 0-1 and their node still to way 1 (C, touched before D): C goes, where LRU
  // would evict B.
  const std::uint32_t slot_a = c.find(a);
  c.touch(slot_a);
  c.insert(e, L2Property::normal, ev);
  REQUIRE(ev.valid);
  CHECK(ev.line == 12);
  // E in way 1 points the root to ways 2-3, whose node points to way 2 (B: A's hit pointed it there).
  c.insert(f, L2Property::normal, ev);
  CHECK(ev.line == b);
  // F in way 2: the root to ways 0-1, their node to way 0 (D). A streaming line takes it without moving the bits, so
  // the next line replaces it at once.
  c.insert(g, L2Property::streaming, ev);
  CHECK(ev.line == d);
  c.insert(h, L2Property::normal, ev);
  CHECK(ev.line == g);
  CHECK(c.find(a) == slot_a);
  CHECK_THROWS_AS(SectoredCache({128, 32, 4, 12}, true), std::invalid_argument);  // not a power of two
  CHECK_THROWS_AS(SectoredCache({128, 32, 4, 64}, true), std::invalid_argument);  // more than the 32-bit tree holds
}

TEST_CASE("sectored cache: tree PLRU keeps the victims of a plain tree model over a long random run") {
  // The model: per set, the line in each way, the ways filled (from the last down) and the tree's bits, walked from
  // the root node by node. Lines alike in their low 32 bits (the cache compares those first) must be told apart: with
  // one set they meet in it. Streaming lines enter without moving the bits.
  for (const auto& [sets, ways] : {std::pair{1U, 2U}, {1U, 16U}, {3U, 4U}, {3U, 16U}, {3U, 32U}}) {
    CAPTURE(sets);
    CAPTURE(ways);
    const CacheGeometry g{128, 32, sets, ways};
    SectoredCache c(g, true);
    struct Set {
      std::vector<std::uint64_t> line;
      std::uint32_t filled = 0, bits = 0;
    };
    std::vector<Set> model(sets, Set{std::vector<std::uint64_t>(ways), 0, 0});
    auto touch = [&](Set& m, std::uint32_t way) {
      for (std::uint32_t node = ways + way; node > 1; node /= 2) {  // the parent's older half: the other child's
        const std::uint32_t parent = node / 2, bit = 1U << parent;
        m.bits = node % 2 == 0 ? (m.bits | bit) : (m.bits & ~bit);
      }
    };
    std::mt19937_64 rng(ways);
    const std::uint64_t distinct = 2 * sets * ways;  // two lines a way: hits and evictions both common
    for (int step = 0; step < 100000; ++step) {
      CAPTURE(step);
      const std::uint64_t r = rng() % distinct;
      const std::uint64_t line = (r / 2) | (r % 2) << 33U;  // pairs alike in their low 32 bits
      const auto property = rng() % 4 == 0 ? L2Property::streaming : L2Property::normal;
      Set& m = model[c.set_of(line)];
      const auto at = std::find(m.line.begin() + (ways - m.filled), m.line.end(), line);
      std::uint64_t victim = ~std::uint64_t{0};
      std::uint32_t way = 0;
      if (at != m.line.end()) {
        way = static_cast<std::uint32_t>(at - m.line.begin());
        touch(m, way);
      } else {
        if (m.filled < ways) {
          way = ways - 1 - m.filled++;
        } else {
          std::uint32_t node = 1;
          while (node < ways) node = 2 * node + (m.bits >> node & 1U);
          way = node - ways;
          victim = m.line[way];
        }
        m.line[way] = line;
        if (property != L2Property::streaming) touch(m, way);
      }
      access_evicts(c, line, property, victim);
      for (std::uint32_t w = ways - m.filled; w < ways; ++w) REQUIRE(c.find(m.line[w]) != SectoredCache::kNone);
    }
  }
}

TEST_CASE("sectored cache: a reset after light or heavy use leaves it as a new one") {
  // The slots a fresh cache gives lines 1000.., and which line it evicts first once full.
  auto fill = [](SectoredCache& c, std::uint64_t lines) {
    std::vector<std::uint32_t> slots;
    SectoredCache::Evicted ev;
    for (std::uint64_t i = 0; i < lines; ++i) {
      slots.push_back(c.insert(1000 + i, L2Property::normal, ev));
      REQUIRE_FALSE(ev.valid);
    }
    return slots;
  };
  for (const bool plru : {false, true}) {
    CAPTURE(plru);
    const CacheGeometry g = plru ? CacheGeometry{128, 32, 8, 32} : CacheGeometry{128, 32, 4, 64};  // 256 lines
    SectoredCache fresh(g, plru);
    const std::vector<std::uint32_t> expected = fill(fresh, 256);
    SectoredCache::Evicted fresh_victim;
    fresh.insert(5002, L2Property::normal, fresh_victim);
    for (const std::uint64_t used : {3, 40, 200, 256}) {  // under and over a quarter of the slots, and all of them
      CAPTURE(used);
      SectoredCache c(g, plru);
      SectoredCache::Evicted ev;
      for (std::uint64_t line = 0; line < used; ++line) c.insert(line * 7 + 1, L2Property::normal, ev);
      const std::uint32_t last = c.find((used - 1) * 7 + 1);  // the newest line: present whatever was evicted
      REQUIRE(last != SectoredCache::kNone);
      c.touch(last);
      c.reset();
      for (std::uint64_t line = 0; line < used; ++line) CHECK(c.find(line * 7 + 1) == SectoredCache::kNone);
      CHECK(fill(c, 256) == expected);  // same slots in the same order: the free chains (and PLRU bits) are as new
      c.insert(5002, L2Property::normal, ev);
      CHECK(ev.valid);
      CHECK(ev.line == fresh_victim.line);
      // LRU: line 5002 is in set 0 (its 2-bit digits 2, 2, 0, 2, 3, 0, 1 XOR to 0), whose least recent line is the
      // first one filled there: 1000 (digits 0, 2, 2, 3, 3).
      if (!plru) CHECK(ev.line == 1000);
    }
  }
}

TEST_CASE("sectored cache: a PLRU reset after a few sets were used clears those, leaving it as a new one") {
  // 64 sets: lines in 4 sets are under a quarter of them, so reset() clears only the sets used (above a quarter it
  // clears all, as the test above covers). Lines 0..255 then fill every set's 4 ways (each aligned run of 64 lines
  // takes every set once), exactly as in a new cache, and the next line evicts the same victim.
  const CacheGeometry g{128, 32, 64, 4};
  auto fill = [](SectoredCache& c) {
    std::vector<std::uint32_t> slots;
    SectoredCache::Evicted ev;
    for (std::uint64_t line = 0; line < 256; ++line) {
      slots.push_back(c.insert(line, L2Property::normal, ev));
      REQUIRE_FALSE(ev.valid);
    }
    c.touch(slots[70]);
    c.insert(4096 + 3, L2Property::normal, ev);
    REQUIRE(ev.valid);
    slots.push_back(static_cast<std::uint32_t>(ev.line));
    return slots;
  };
  SectoredCache fresh(g, true);
  const std::vector<std::uint32_t> expected = fill(fresh);
  SectoredCache c(g, true);
  SectoredCache::Evicted ev;
  for (const std::uint64_t line : {1000, 1001, 1002, 1064}) c.insert(line, L2Property::normal, ev);  // 4 sets
  c.touch(c.find(1064));
  c.reset();
  for (const std::uint64_t line : {1000, 1001, 1002, 1064}) CHECK(c.find(line) == SectoredCache::kNone);
  CHECK(fill(c) == expected);
}

TEST_CASE("sectored cache: PLRU notes where it found a line, and forgets it past a reset or the line's eviction") {
  // access() finds a line it found before where it found it, without a lookup: that note must not outlive the line,
  // neither past a reset (a set keeps its old tags) nor past its eviction (its slot holds another line).
  SectoredCache c({128, 32, 2, 4}, true);
  SectoredCache::Evicted ev;
  const std::uint64_t line = 7;
  const std::uint32_t slot = c.access(line, L2Property::normal, ev);  // enters
  c.valid(slot) = 0xF;
  REQUIRE(c.access(line, L2Property::normal, ev) == slot);  // found, and noted
  REQUIRE(c.access(line, L2Property::normal, ev) == slot);  // found through the note
  CHECK(c.valid(slot) == 0xF);
  c.reset();
  const std::uint32_t again = c.access(line, L2Property::normal, ev);  // a new line in a new cache: no sector valid
  CHECK(c.valid(again) == 0);
  CHECK_FALSE(ev.valid);
  c.valid(again) = 0xF;
  REQUIRE(c.access(line, L2Property::normal, ev) == again);  // noted again
  // Three more lines of its set fill ways 2, 1, 0; the tree then points to way 3 (line 7, used before them), which
  // the fourth takes.
  std::vector<std::uint64_t> others;
  for (std::uint64_t l = 100; others.size() < 4; ++l)
    if (c.set_of(l) == c.set_of(line)) others.push_back(l);
  for (std::size_t i = 0; i < 3; ++i) c.access(others[i], L2Property::normal, ev);
  c.access(others[3], L2Property::normal, ev);
  REQUIRE(ev.valid);
  REQUIRE(ev.line == line);
  const std::uint32_t back = c.access(line, L2Property::normal, ev);  // a miss again: it evicts, no sector valid
  CHECK(ev.valid);
  CHECK(c.valid(back) == 0);
  CHECK(c.find(line) == back);
}

TEST_CASE("L2 placement: a run of consecutive lines fills every set once; a column walk spreads over many sets") {
  const std::uint64_t total = 25600;  // the H100's: 100 slices x 256 sets
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 4; ++trial) {
    // An aligned run takes every index once.
    const std::uint64_t run = rng() % (std::uint64_t{1} << 30U);
    std::vector<int> seen(total, 0);
    for (std::uint64_t l = run * total; l < (run + 1) * total; ++l) ++seen[place_in_sets(l, total)];
    CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<std::ptrdiff_t>(total));
    // Any window of 5.12 runs (a 16 MiB buffer on the H100) puts 4 to 6 lines in a set: the two partial runs at its
    // ends may fall on the same sets, the four whole runs between them give one each. (The old fold-and-modulo hash
    // gave 1 to 13, which no set-aside of whole ways could hold the way the H100 does.)
    const std::uint64_t start = rng() % (std::uint64_t{1} << 40U);
    std::fill(seen.begin(), seen.end(), 0);
    for (std::uint64_t l = start; l < start + 131072; ++l) ++seen[place_in_sets(l, total)];
    CHECK(*std::min_element(seen.begin(), seen.end()) >= 4);
    CHECK(*std::max_element(seen.begin(), seen.end()) <= 6);
  }
  // 4096 lines 128 apart (a 4096 x 4096 float transpose's column) reach at least 4000 sets, not a handful.
  std::set<std::uint64_t> column;
  for (std::uint64_t r = 0; r < 4096; ++r) column.insert(place_in_sets((std::uint64_t{1} << 28U) + r * 128, total));
  CHECK(column.size() >= 4000);
}

TEST_CASE("Divisor: the reciprocal division gives the quotient and remainder of / and % for every size of numbers") {
  std::mt19937_64 rng(5);
  const std::uint64_t top = ~std::uint64_t{0};
  std::vector<std::uint64_t> divisors = {1,       2,       3,  7, 100, 25600, 51200, 0xFFFFFFFFULL, 0x100000001ULL,
                                         top / 3, top - 1, top};
  for (int i = 0; i < 200; ++i) divisors.push_back(rng() >> (rng() % 64));
  for (std::uint64_t d : divisors) {
    if (d == 0) continue;
    const Divisor by(d);
    std::vector<std::uint64_t> numerators = {0, 1, d - 1, d, d + 1, top, top - 1, top - d, 2 * d - 1, top / d * d};
    for (int i = 0; i < 200; ++i) numerators.push_back(rng() >> (rng() % 64));
    for (std::uint64_t n : numerators) {
      CAPTURE(d);
      CAPTURE(n);
      std::uint64_t r = 1234;
      CHECK(by.divide(n, r) == n / d);
      CHECK(r == n % d);
    }
  }
}

TEST_CASE("replay order: by cycle, SMs in order within a cycle, issue order within an SM, by either sort") {
  // Three SMs, two slice groups. Each request's line records (SM, its place in the SM's list) so the order can be
  // read back; the expected order is written out by hand.
  auto build = [](RequestLists& lists, std::uint64_t scale, std::uint64_t offset) {
    const std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> issued = {
        // (cycle, group) of each SM's requests, in issue order
        {{0, 0}, {0, 1}, {0, 0}, {5, 0}},
        {},  // SM 1 makes none
        {{0, 0}, {3, 0}, {3, 0}, {5, 1}, {9, 0}},
    };
    for (std::size_t s = 0; s < issued.size(); ++s) {
      std::vector<L2Request>& v = lists.issued(s);
      v.clear();
      for (std::size_t i = 0; i < issued[s].size(); ++i) {
        L2Request& r = v.emplace_back();
        r.cycle = (issued[s][i].first * scale + offset) & kRequestCycleMask;
        r.group = issued[s][i].second & 0xFFFFU;
        r.line = s * 100 + i;
      }
      lists.sort_by_group(s, lists.issued(s).size());
    }
  };
  // Group 0: cycle 0: SM 0's #0 and #2, then SM 2's #0; cycle 3: SM 2's #1, #2; cycle 5: SM 0's #3; cycle 9: SM 2's #4.
  const std::vector<std::uint64_t> group0 = {0, 2, 200, 201, 202, 3, 204};
  const std::vector<std::uint64_t> group1 = {1, 203};
  const std::vector<std::size_t> active = {0, 2};
  // Scale 1: few cycles for the requests (the counting sort); scale 2^30: far more cycles than requests (the heap).
  // An offset of 2^40: a batch late in a launch, whose cycles go on from the batches before (the counting sort
  // counts from the batch's first cycle).
  for (const auto& [scale, offset] :
       {std::pair{std::uint64_t{1}, std::uint64_t{0}}, std::pair{std::uint64_t{1} << 30U, std::uint64_t{0}},
        std::pair{std::uint64_t{1}, std::uint64_t{1} << 40U}}) {
    CAPTURE(scale);
    CAPTURE(offset);
    RequestLists lists(2, 3);
    build(lists, scale, offset);
    ReplayOrder order;
    for (std::size_t g = 0; g < 2; ++g) {
      std::vector<std::uint64_t> seen;
      order.for_each(
          lists, g, active, 3,
          [&](const L2Request& r, std::size_t sm) {
            CHECK(sm == r.line / 100);
            seen.push_back(r.line);
          },
          [](const L2Request& /*r*/, std::size_t /*sm*/) {});
      CHECK(seen == (g == 0 ? group0 : group1));
    }
  }
}

TEST_CASE("replay order: the counting sort shows each request to `ahead` kAhead places before replaying it") {
  // One SM, one group, 20 requests a cycle apart (the counting sort), then 2^30 cycles apart (the heap: no look-ahead).
  for (const std::uint64_t scale : {std::uint64_t{1}, std::uint64_t{1} << 30U}) {
    CAPTURE(scale);
    RequestLists lists(1, 1);
    std::vector<L2Request>& v = lists.issued(0);
    for (std::uint64_t i = 0; i < 20; ++i) {
      L2Request& r = v.emplace_back();
      r.cycle = (i * scale) & kRequestCycleMask;
      r.line = i;
    }
    lists.sort_by_group(0, v.size());
    ReplayOrder order;
    std::vector<std::uint64_t> replayed, early;
    const std::vector<std::size_t> active = {0};
    order.for_each(
        lists, 0, active, 1, [&](const L2Request& r, std::size_t /*sm*/) { replayed.push_back(r.line); },
        [&](const L2Request& r, std::size_t sm) {
          CHECK(sm == 0);
          // Shown once, before its replay, when the replay is exactly kAhead requests behind.
          CHECK(r.line == replayed.size() + ReplayOrder::kAhead);
          early.push_back(r.line);
        });
    REQUIRE(replayed.size() == 20);
    for (std::uint64_t i = 0; i < 20; ++i) CHECK(replayed[i] == i);
    const std::size_t shown = scale == 1 ? 20 - ReplayOrder::kAhead : 0;
    CHECK(early.size() == shown);
  }
}

TEST_CASE("set cache: the 16-way scans find what a plain scan finds, first way on ties, with the persisting flip") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20000; ++trial) {
    CAPTURE(trial);
    // Few distinct values, so duplicate tags and tied keys are common; the top bit of keys set at random.
    std::array<std::uint64_t, 16> tags{};
    std::array<std::uint32_t, 16> keys{};
    for (auto& t : tags) t = rng() % 6 == 0 ? ~std::uint64_t{0} : 0x7f00'0000'0000ULL + rng() % 24;
    for (auto& k : keys) k = static_cast<std::uint32_t>(rng() % 5) | (rng() % 3 == 0 ? 0x80000000U : 0U);
    const std::uint64_t line = 0x7f00'0000'0000ULL + rng() % 24;
    const std::uint32_t flip = rng() % 2 == 0 ? 0U : 0x80000000U;
    std::uint32_t want_tag = SetCache::kNone;
    for (std::uint32_t w = 0; w < 16 && want_tag == SetCache::kNone; ++w)
      if (tags[w] == line) want_tag = w;
    std::uint32_t want_key = 0;
    for (std::uint32_t w = 1; w < 16; ++w)
      if ((keys[w] ^ flip) < (keys[want_key] ^ flip)) want_key = w;
    CHECK(SetCache::first_tag<16>(tags.data(), line, 16) == want_tag);
    CHECK(SetCache::first_tag<0>(tags.data(), line, 16) == want_tag);
    CHECK(SetCache::lowest_key<16>(keys.data(), flip, 16) == want_key);
    CHECK(SetCache::lowest_key<0>(keys.data(), flip, 16) == want_key);
  }
}

TEST_CASE("sectored cache: a line's set is the XOR of its number's digits, so strided lines spread") {
  // 4 sets (every shipped L1): 2-bit digits. 10 = 0b10'10: 2 ^ 2 = 0. 0x7f00'0000'0003: digits 3 and 0x7f00'0000'0000's
  // (3, 3, 3, 1 from bit 40 up): 3 ^ 3 ^ 3 ^ 3 ^ 1 = 1.
  CHECK(SectoredCache({128, 32, 4, 8}).set_of(10) == 0);
  CHECK(SectoredCache({128, 32, 4, 8}).set_of(0x7f00'0000'0003ULL) == 1);
  // 8 sets (3-bit digits, the loop): 0b101'110 = 46: 5 ^ 6 = 3.
  CHECK(SectoredCache({128, 32, 8, 8}).set_of(46) == 3);
  CHECK(SectoredCache({128, 32, 1, 8}).set_of(10) == 0);
  // Other counts go through place_in_sets() (placement.h): each run of 3 consecutive lines one a set.
  for (std::uint64_t run = 0; run < 8; ++run) {
    const SectoredCache three({128, 32, 3, 8});
    std::array<int, 3> per_set{};
    for (std::uint64_t l = run * 3; l < run * 3 + 3; ++l) ++per_set[three.set_of(l)];
    CHECK(per_set == std::array<int, 3>{1, 1, 1});
  }
  // Consecutive lines take the 4 sets in turn (each run of 4 one each) and so do lines 4 apart, and 64 apart: a
  // strided walk of 16 lines fills the 4 sets evenly, where the low bits would put all of them in one.
  for (std::uint64_t stride : {1, 4, 64}) {
    std::array<int, 4> per_set{};
    for (std::uint64_t k = 0; k < 16; ++k) ++per_set[SectoredCache({128, 32, 4, 8}).set_of(1000 * 64 + k * stride)];
    CHECK(per_set == std::array<int, 4>{4, 4, 4, 4});
  }
  // A 4-set cache of 2 ways: lines 0 and 5 share set 0 (5 = 0b01'01: 1 ^ 1), 1 is in set 1; 10 (set 0) evicts 0.
  SectoredCache c({128, 32, 4, 2});
  SectoredCache::Evicted ev;
  for (std::uint64_t line : {0, 5, 1}) c.insert(line, L2Property::normal, ev);
  c.insert(10, L2Property::normal, ev);
  REQUIRE(ev.valid);
  CHECK(ev.line == 0);
  CHECK(c.find(1) != SectoredCache::kNone);
  CHECK(c.find(5) != SectoredCache::kNone);
}

namespace {

// A request as the replay hands it to a slice: the whole line (a write: every word of it), from partition `from`,
// homed in partition `home`.
L2Request request(std::uint64_t line, L2Op op, std::uint8_t from, std::uint8_t home) {
  L2Request r;
  r.line = line;
  r.set = 0;  // the slices below have one set each
  r.sectors = 0xF;
  r.op = op;
  r.from = from;
  r.home = home;
  r.words = op == L2Op::write ? 0xFFFFFFFFU : 0U;
  return r;
}

// A write of some words of a line (bit 8s + w: word w of sector s) at home in partition 0.
L2Request partial_write(std::uint64_t line, std::uint32_t words) {
  L2Request r = request(line, L2Op::write, 0, 0);
  r.words = words;
  r.sectors = 0;
  for (unsigned s = 0; s < 4; ++s)
    if (((words >> (8 * s)) & 0xFFU) != 0) r.sectors |= static_cast<std::uint8_t>(1U << s);
  return r;
}

// Two slices of one group, one a partition, each a single set of `ways` ways; replay() does what simulate()'s does.
struct Group {
  explicit Group(std::uint32_t ways, std::uint32_t dirty_ways = 0, std::uint32_t partial_max = 0)
      : slices{L2Slice({{128, 32, 1, ways}, 64, 0, 2, 1024, 16, 0, 1, 64, 2, dirty_ways, partial_max}),
               L2Slice({{128, 32, 1, ways}, 64, 1, 2, 1024, 16, 1, 1, 64, 2, dirty_ways, partial_max})} {}
  void replay(const L2Request& r) { L2Slice::serve(slices.data(), 2, r, c); }
  std::array<L2Slice, 2> slices;
  SimCounters c;
};

}  // namespace

TEST_CASE("L2 slice: a far write leaves the writer a copy; a write at home drops the other partition's copy") {
  Group g(4);
  // Partition 1 writes line 7 (homed in partition 0): 4 sectors looked up in its own slice, 4 at home.
  g.replay(request(7, L2Op::write, 1, 0));
  CHECK(g.c.l2_write_sectors == 8);
  // Two lookups of 4 sectors at 64 bytes a beat: 2 beats each, a write's (timing: l2.write_beat_cost).
  CHECK(g.c.l2_beats == 4);
  CHECK(g.c.l2_write_beats == 4);
  // It reads the line back from its copy: 4 sectors, all hits, nothing forwarded.
  g.replay(request(7, L2Op::read, 1, 0));
  CHECK(g.c.l2_read_sectors == 4);
  CHECK(g.c.l2_read_hits == 4);
  CHECK(g.c.l2_beats == 6);  // a read's 2 beats
  CHECK(g.c.l2_write_beats == 4);
  CHECK(g.c.l2_far_sectors == 4);  // the write's only
  // Partition 0 writes it at home: partition 1's copy is stale and goes ...
  g.replay(request(7, L2Op::write, 0, 0));
  // ... so partition 1's next read misses its slice (4 sectors) and finds the line at home (4 more, hits).
  g.replay(request(7, L2Op::read, 1, 0));
  CHECK(g.c.l2_read_sectors == 4 + 8);
  CHECK(g.c.l2_read_hits == 4 + 4);
  CHECK(g.c.dram_read_bytes == 0);  // written whole: never fetched
  CHECK(g.c.dram_write_bytes == 0);
}

TEST_CASE("L2 slice: an atomic or reduction looks up its own sectors near and at home, a hit and a beat a sector") {
  Group g(4);
  // Partition 1's atomic on sector 2 of line 7 (homed in partition 0), which neither slice holds: its own slice's
  // lookup counts a hit (ncu: every atomic lookup of the H100 probe hit, 1.5 a sector), the home's misses and
  // fetches the sector's 64-byte granule. The home looks up that sector alone (a far read would take the granule).
  L2Request atom = request(7, L2Op::atom, 1, 0);
  atom.sectors = 0b0100;
  g.replay(atom);
  CHECK(g.c.l2_atom_sectors == 2);
  CHECK(g.c.l2_atom_hits == 1);
  CHECK(g.c.l2_far_sectors == 1);
  CHECK(g.c.dram_read_bytes == 64);
  CHECK(g.c.l2_beats == 2);  // a beat a sector
  CHECK(g.c.l2_atom_beats == 2);
  // A reduction of the whole line from partition 0, at home: 4 sectors, 4 beats (a read of them takes 2), none an
  // atomic's; sectors 2 and 3 are there, 0 and 1 are fetched.
  g.replay(request(7, L2Op::red, 0, 0));
  CHECK(g.c.l2_red_sectors == 4);
  CHECK(g.c.l2_red_hits == 2);
  CHECK(g.c.dram_read_bytes == 128);
  CHECK(g.c.l2_beats == 2 + 4);
  CHECK(g.c.l2_atom_beats == 2);
  CHECK(g.c.l2_far_sectors == 1);
}

TEST_CASE("L2 slice: a sector written a word at a time is readable once every word is, without a fetch") {
  Group g(4);
  L2Request read = request(5, L2Op::read, 0, 0);
  read.sectors = 0x1;
  for (unsigned w = 0; w < 8; ++w) {
    g.replay(partial_write(5, 1U << w));  // word w of sector 0
    if (w == 6) {  // seven words of eight: a read misses and fetches the sector's 64-byte granule
      Group seven = g;
      seven.replay(read);
      CHECK(seven.c.l2_read_hits == 0);
      CHECK(seven.c.dram_read_bytes == 64);
    }
  }
  CHECK(g.c.l2_write_sectors == 8);
  g.replay(read);
  CHECK(g.c.l2_read_hits == 1);
  CHECK(g.c.dram_read_bytes == 0);
  CHECK(g.c.dram_write_bytes == 0);
  CHECK(g.c.l2_partial_fills == 0);
  // One word written, then a read: the fetch merges the word; the next read hits.
  g.replay(partial_write(6, 0x1U));
  read.line = 6;
  g.replay(read);
  CHECK(g.c.l2_read_hits == 1);
  CHECK(g.c.dram_read_bytes == 64);
  g.replay(read);
  CHECK(g.c.l2_read_hits == 2);
  CHECK(g.c.dram_read_bytes == 64);
}

TEST_CASE("L2 slice: the words a line wrote in part leave with it; the next line in its way starts with none") {
  // One way: line 9 replaces line 5, whose sector 0 holds words 0 to 6 (written back: 32 bytes). Line 9's word 7 of
  // sector 0 leaves that sector partly written (with line 5's words it would look complete), so a read fetches it.
  Group g(1);
  g.replay(partial_write(5, 0x7FU));
  g.replay(partial_write(9, 0x80U));
  CHECK(g.c.dram_write_bytes == 32);
  L2Request read = request(9, L2Op::read, 0, 0);
  read.sectors = 0x1;
  g.replay(read);
  CHECK(g.c.l2_read_hits == 0);
  CHECK(g.c.dram_read_bytes == 64);
  // Fetched, the sector is whole; a line entering the way after a flush starts with none of its words either.
  g.replay(read);
  CHECK(g.c.l2_read_hits == 1);
  g.replay(partial_write(9, 0x3FU));  // sector 0 is valid: a write of it changes no word bookkeeping
  g.slices[0].flush(g.c);
  g.replay(partial_write(13, 0x7FU));  // the words line 9 left in the way are 7; these complete the sector with them
  read.line = 13;
  g.replay(read);
  CHECK(g.c.l2_read_hits == 1);
  CHECK(g.c.dram_read_bytes == 128);
}

TEST_CASE("L2 slice: past partial_sectors_max partly written sectors the oldest goes to DRAM and comes back whole") {
  // At most 2 partly written sectors a slice. Word 0 of each sector of line 5: 4 of them, so the oldest (sector 0)
  // is filled, with sector 1 of its 64-byte granule: 2 x 32 bytes written, 64 read, once.
  Group g(4, 0, 2);
  g.replay(partial_write(5, 0x01010101U));
  CHECK(g.c.l2_partial_fills == 1);
  CHECK(g.c.dram_write_bytes == 64);
  CHECK(g.c.dram_read_bytes == 64);
  // The write's 4 sector lookups, all hits, and the 2 sectors the fill writes back in, misses (the H100's
  // lts__t_sectors_op_write: validate/results/h100-2026-11-26e).
  CHECK(g.c.l2_write_sectors == 4 + 2);
  CHECK(g.c.l2_write_hits == 4);
  // A read of the line: sectors 0 and 1 hit, 2 and 3 (still partly written) fetch their granule.
  g.replay(request(5, L2Op::read, 0, 0));
  CHECK(g.c.l2_read_hits == 2);
  CHECK(g.c.dram_read_bytes == 128);
  CHECK(g.c.l2_partial_fills == 1);
  // With no limit the same write fills nothing; the flush writes the four dirty sectors.
  Group unlimited(4);
  unlimited.replay(partial_write(5, 0x01010101U));
  CHECK(unlimited.c.l2_partial_fills == 0);
  CHECK(unlimited.c.dram_read_bytes == 0);
  CHECK(unlimited.c.l2_write_sectors == 4);
  unlimited.slices[0].flush(unlimited.c);
  CHECK(unlimited.c.dram_write_bytes == 128);
}

TEST_CASE("L2 slice: past the dirty-line limit a write cleans the set's oldest dirty line, which stays readable") {
  // Home slice 0, one set of 4 ways, at most 2 dirty lines. Lines 1, 2, 3 written by partition 0 (near).
  Group g(4, 2);
  g.replay(request(1, L2Op::write, 0, 0));
  g.replay(request(2, L2Op::write, 0, 0));
  CHECK(g.c.dram_write_bytes == 0);
  g.replay(request(3, L2Op::write, 0, 0));  // a third dirty line: line 1, the oldest, is written back
  CHECK(g.c.dram_write_bytes == 128);
  g.replay(request(1, L2Op::read, 0, 0));  // still there, clean: a hit and no fetch
  CHECK(g.c.l2_read_hits == 4);
  CHECK(g.c.dram_read_bytes == 0);
  g.replay(request(1, L2Op::write, 0, 0));  // dirty again: line 2 is now the oldest dirty one
  CHECK(g.c.dram_write_bytes == 256);
  g.replay(request(3, L2Op::write, 0, 0));  // already dirty: nothing more to clean
  CHECK(g.c.dram_write_bytes == 256);
  // Without a limit the same writes stay in L2 until evicted or flushed.
  Group all(4);
  for (std::uint64_t line : {1, 2, 3, 1, 3}) all.replay(request(line, L2Op::write, 0, 0));
  CHECK(all.c.dram_write_bytes == 0);
  all.slices[0].flush(all.c);
  CHECK(all.c.dram_write_bytes == 3 * 128);
}

TEST_CASE("L2 slice: a set-aside's smaller dirty-line limit takes effect at once, set by set") {
  // One set of 16 ways with the H100's 8 dirty lines: four written lines stay dirty. With 10 ways set aside the limit
  // is 3 (l2_dirty_ways): the next line made dirty cleans the set's oldest dirty one, and only one, though the set
  // then holds 4 dirty lines over the limit.
  Group g(16, 8);
  for (std::uint64_t line : {1, 2, 3, 4}) g.replay(request(line, L2Op::write, 0, 0));
  CHECK(g.c.dram_write_bytes == 0);
  g.slices[0].set_dirty_ways(3);
  g.replay(request(4, L2Op::write, 0, 0));  // already dirty: nothing changes
  CHECK(g.c.dram_write_bytes == 0);
  g.replay(request(5, L2Op::write, 0, 0));  // a fifth dirty line: line 1 goes back
  CHECK(g.c.dram_write_bytes == 128);
  g.replay(request(6, L2Op::write, 0, 0));  // a sixth: line 2
  CHECK(g.c.dram_write_bytes == 256);
  g.replay(request(1, L2Op::read, 0, 0));  // line 1 stayed, clean: a hit
  CHECK(g.c.l2_read_hits == 4);
  // Back to 8 (the set-aside released): the set's 4 dirty lines are under it, so a new one cleans nothing.
  g.slices[0].set_dirty_ways(8);
  g.replay(request(7, L2Op::write, 0, 0));
  CHECK(g.c.dram_write_bytes == 256);
}

TEST_CASE("constant cache: four lines of a set fit, a fifth evicts the least recently used") {
  // The H100's 2 KB of 64-byte lines in 8 sets of 4 ways, a line in set line mod 8, as SmFront looks them up.
  SetCache c({64, 64, 8, 4});
  auto access = [&](std::uint64_t line) {
    const auto set = static_cast<std::uint32_t>(line % 8);
    const std::uint32_t slot = c.find(line, set);
    if (slot != SetCache::kNone) {
      c.touch(slot);
      return true;
    }
    SetCache::Evicted ev;
    c.insert(line, set, L2Property::normal, ev);
    return false;
  };
  for (std::uint64_t line : {0, 8, 16, 24}) CHECK_FALSE(access(line));  // set 0, cold
  for (std::uint64_t line : {0, 8, 16, 24}) CHECK(access(line));
  CHECK_FALSE(access(1));   // set 1 leaves set 0 alone
  CHECK(access(0));         // 0 is now the most recent of set 0, 8 the least
  CHECK_FALSE(access(32));  // evicts 8
  CHECK(access(16));
  CHECK(access(24));
  CHECK_FALSE(access(8));
}

TEST_CASE("full_sectors: the sectors whose 8 words are all written, over every pattern of a sector's bits") {
  // Each byte of `words` is one sector's 8 words; check every byte value in every sector against the plain rule.
  for (unsigned sector = 0; sector < 4; ++sector)
    for (std::uint32_t byte = 0; byte < 256; ++byte) {
      // The other sectors full, empty or half written in turn.
      for (const std::uint32_t rest : {0x00U, 0xFFU, 0x0FU}) {
        std::uint32_t words = 0;
        std::uint32_t expected = 0;
        for (unsigned s = 0; s < 4; ++s) {
          const std::uint32_t b = s == sector ? byte : rest;
          words |= b << (8 * s);
          if (b == 0xFFU) expected |= 1U << s;
        }
        CAPTURE(words);
        CHECK(full_sectors(words) == expected);
      }
    }
}

TEST_CASE("TPC merge: a read merges what the other SM of its TPC has in flight; a full set drops its least recent") {
  // tpc_merge.h's set of a (line, TPC) pair, mirrored here to find five lines of TPC 0 that share a 4-way set.
  auto set_of = [](std::uint64_t line) { return ((line * 0x9E3779B97F4A7C15ULL) >> 40U) % 1024; };
  std::vector<std::uint64_t> lines{1000};
  for (std::uint64_t l = 1001; lines.size() < 5; ++l)
    if (set_of(l) == set_of(lines[0])) lines.push_back(l);
  const std::uint64_t a = lines[0], b = lines[1], c = lines[2], d = lines[3], e = lines[4];
  auto read = [](std::uint64_t line, std::uint64_t cycle, std::uint8_t sectors) {
    L2Request r;
    r.line = line;
    r.cycle = cycle & kRequestCycleMask;
    r.sectors = sectors;
    return r;
  };
  TpcMerge merge;
  merge.begin(285);  // the H100's L2 latency: a read is in flight that long
  // SM 0 (TPC 0) reads a to d, filling the set, then e, which takes the place of the least recently requested: a.
  for (const auto& [line, cycle] : {std::pair{a, 10}, {b, 20}, {c, 30}, {d, 40}, {e, 50}})
    CHECK(merge.merged(read(line, static_cast<std::uint64_t>(cycle), 0x1), 0) == 0);
  CHECK(merge.merged(read(b, 55, 0x3), 1) == 0x1);      // SM 1 finds SM 0's sector 0 in flight: only sector 1 goes on
  CHECK(merge.merged(read(a, 60, 0x1), 1) == 0);        // a was dropped; taken again, it drops c (30: now the oldest)
  CHECK(merge.merged(read(c, 65, 0x1), 1) == 0);        // so c's read is gone too (it takes d's place, 40)
  CHECK(merge.merged(read(e, 66, 0x1), 1) == 0x1);      // e (50) stayed
  CHECK(merge.merged(read(b, 55 + 286, 0x1), 0) == 0);  // past the window SM 1's read of b is back: nothing to merge
  // An SM's own reads never merge with each other, and a new replay forgets every read.
  CHECK(merge.merged(read(a + 1, 70, 0x1), 0) == 0);
  CHECK(merge.merged(read(a + 1, 71, 0x1), 0) == 0);
  CHECK(merge.merged(read(e, 72, 0x1), 0) == 0x1);  // SM 1's read of e (66) is in flight
  // SM 0's reads of one line in flight add up: SM 1 finds both sectors.
  CHECK(merge.merged(read(a + 2, 80, 0x1), 0) == 0);
  CHECK(merge.merged(read(a + 2, 90, 0x2), 0) == 0);
  CHECK(merge.merged(read(a + 2, 100, 0xF), 1) == 0x3);
  merge.begin(285);
  CHECK(merge.merged(read(e, 73, 0x1), 1) == 0);
}
