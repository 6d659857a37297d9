// A floor to compare the simulator's speed with: a lean tag-exact simulation of the same caches on the benchmark
// traces of bench_sim.cpp, timed on this host. Per distinct cache line of each warp memory instruction, one lookup in
// its SM's L1 (the arch's shape over the capacity the launch's carveout leaves: the H100's 16-way tree PLRU sets,
// their tags scanned, or LRU over the ways of a fixed number of sets through a hash index and a list per set) and,
// on a miss, one lookup in a 16-way LRU set of the L2 (the arch's whole L2 as one cache, sets placed by a hash).
// Nothing else: no coalescing (lines are found before timing), warp scheduling, sectors, stores' write-through,
// partitions, slices, DRAM, request ordering or counters. Blocks go to SMs round-robin. As the simulator does, the L1s
// run SM by SM (one SM's L1 stays in the host's caches), and the L2 then takes the misses group of sets by group
// (kL2Groups), in SM order within a group. It is not a proven lower bound (another structure may do less); /3 shows
// what the host memory alone allows.
//
// BM_Floor*/0 runs L1 and L2, /1 the L1 alone (every line), /2 the L2 alone (every line), /3 only the host memory an
// L1 and an L2 lookup reach (run_touch). warp_mem_instr_per_s compares with memhier_bench_sim's; time_per_line
// (seconds) is the wall time over the lines looked up.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "../model/cache/plru_tree.h"
#include "memhier/arch_loader.h"
#include "memhier/kernel_desc.h"
#include "memhier/occupancy.h"
#include "memhier/trace.h"

namespace {

using namespace memhier;
namespace fs = std::filesystem;

constexpr std::uint32_t kNone = 0xFFFFFFFFU;
constexpr std::uint32_t kL2Ways = 16;
constexpr std::uint32_t kL2Groups = 64;  // the H100's 50 MiB of L2: about 75 KiB of tags and stamps a group

// One SM's L1: `sets` sets of `ways` ways; a line's set is line modulo sets (a mask when a power of two). PLRU (`ways`
// a power of two up to 32): a scan of the set's tags finds a line's way, the simulator's tree of bits per set
// (PlruTree) its victim. LRU: a hash index (linear probing, backward-shift deletion) finds a line's way, a doubly
// linked list per set orders the ways by last use.
class FloorL1 {
 public:
  FloorL1(std::uint32_t sets, std::uint32_t ways, bool plru)
      : m_sets(sets),
        m_ways(ways),
        m_plru(plru),
        m_pow2(std::has_single_bit(sets)),
        m_slots(std::size_t{sets} * ways),
        m_lists(sets),
        m_index(std::bit_ceil(std::size_t{sets} * ways * 2), kNone),
        m_mask(m_index.size() - 1),
        m_shift(64U - static_cast<unsigned>(std::countr_zero(m_index.size()))) {
    if (plru) {
      m_tree = PlruTree(ways);
      for (List& l : m_lists) l.head = 0;
      m_tags.assign(std::size_t{sets} * ways, ~std::uint64_t{0});
    }
  }

  bool access(std::uint64_t line) {
    const auto set = static_cast<std::uint32_t>(m_pow2 ? line & (m_sets - 1) : line % m_sets);
    if (m_plru) return access_plru(line, set);
    std::size_t i = hash(line);
    for (; m_index[i] != kNone; i = (i + 1) & m_mask)
      if (m_slots[m_index[i]].line == line) {
        unlink(m_index[i], set);
        push_front(m_index[i], set);
        return true;
      }
    List& l = m_lists[set];
    std::uint32_t slot = 0;
    if (l.used < m_ways) {
      slot = set * m_ways + l.used++;
    } else {
      slot = l.tail;
      unlink(slot, set);
      erase(m_slots[slot].line);
      i = hash(line);
      while (m_index[i] != kNone) i = (i + 1) & m_mask;
    }
    m_slots[slot].line = line;
    m_index[i] = slot;
    push_front(slot, set);
    return false;
  }

 private:
  struct Slot {
    std::uint64_t line = ~std::uint64_t{0};
    std::uint32_t prev = kNone, next = kNone;
  };
  struct List {
    std::uint32_t head = kNone, tail = kNone, used = 0;  // PLRU: head holds the tree bits (node n: bit n)
  };
  // The set's ways in use are [0, used); a free way's tag is never a line's (~0).
  bool access_plru(std::uint64_t line, std::uint32_t set) {
    List& l = m_lists[set];  // head holds the tree bits
    std::uint64_t* tags = &m_tags[std::size_t{set} * m_ways];
    std::uint32_t way = m_ways;
    for (std::uint32_t w = 0; w < m_ways; ++w) way = tags[w] == line ? w : way;  // no branch a way
    const bool hit = way != m_ways;
    if (!hit) {
      way = l.used < m_ways ? l.used++ : m_tree.victim(l.head);
      tags[way] = line;
    }
    l.head = m_tree.touched(l.head, way);
    return hit;
  }
  [[nodiscard]] std::size_t hash(std::uint64_t line) const {
    return static_cast<std::size_t>((line * 0x9E3779B97F4A7C15ULL) >> m_shift);  // the product's top bits
  }
  void unlink(std::uint32_t s, std::uint32_t set) {
    Slot& x = m_slots[s];
    (x.prev != kNone ? m_slots[x.prev].next : m_lists[set].head) = x.next;
    (x.next != kNone ? m_slots[x.next].prev : m_lists[set].tail) = x.prev;
  }
  void push_front(std::uint32_t s, std::uint32_t set) {
    Slot& x = m_slots[s];
    List& l = m_lists[set];
    x.prev = kNone;
    x.next = l.head;
    (x.next != kNone ? m_slots[x.next].prev : l.tail) = s;
    l.head = s;
  }
  void erase(std::uint64_t line) {
    std::size_t i = hash(line);
    while (m_slots[m_index[i]].line != line) i = (i + 1) & m_mask;
    for (std::size_t j = (i + 1) & m_mask; m_index[j] != kNone; j = (j + 1) & m_mask) {
      const std::size_t home = hash(m_slots[m_index[j]].line);
      // Entry j may move back to the hole at i when its home does not lie in (i, j] (cyclically).
      const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (!stays) {
        m_index[i] = m_index[j];
        i = j;
      }
    }
    m_index[i] = kNone;
  }

  std::uint32_t m_sets, m_ways;
  bool m_plru, m_pow2;
  PlruTree m_tree;                    // PLRU
  std::vector<std::uint64_t> m_tags;  // PLRU: way w of set s at s x ways + w
  std::vector<Slot> m_slots;
  std::vector<List> m_lists;
  std::vector<std::uint32_t> m_index;
  std::size_t m_mask;
  unsigned m_shift;
};

// The L2 as one cache of `sets` sets of 16 ways, LRU by access stamps.
class FloorL2 {
 public:
  explicit FloorL2(std::uint32_t sets)
      : m_sets(sets), m_tags(std::size_t{sets} * kL2Ways, ~std::uint64_t{0}), m_stamps(m_tags.size(), 0) {}
  // A multiplicative hash of the line scaled to [0, sets) (no division).
  [[nodiscard]] std::size_t set_of(std::uint64_t line) const {
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::size_t>((static_cast<u128>(line * 0x9E3779B97F4A7C15ULL) * m_sets) >> 64U);
  }
  // Sets [group x sets / kL2Groups, (group + 1) x sets / kL2Groups) form a group.
  [[nodiscard]] std::size_t group_of_set(std::size_t set) const { return set * kL2Groups / m_sets; }
  // `set`: set_of(line), found once when the line missed L1.
  bool access(std::uint64_t line, std::size_t set) {
    const std::size_t base = set * kL2Ways;
    std::uint64_t* tags = &m_tags[base];
    std::uint32_t* stamps = &m_stamps[base];
    for (std::uint32_t w = 0; w < kL2Ways; ++w)
      if (tags[w] == line) {
        stamps[w] = ++m_clock;
        return true;
      }
    std::uint32_t victim = 0;
    for (std::uint32_t w = 1; w < kL2Ways; ++w)
      if (stamps[w] < stamps[victim]) victim = w;
    tags[victim] = line;
    stamps[victim] = ++m_clock;
    return false;
  }

 private:
  std::uint64_t m_sets;
  std::vector<std::uint64_t> m_tags;
  std::vector<std::uint32_t> m_stamps;
  std::uint32_t m_clock = 0;
};

// The distinct lines of every global memory record of a kernel description, record by record, with the SM
// its block runs on; the L1 and L2 geometry the simulator would give the launch on the H100.
struct FloorTrace {
  std::vector<std::uint64_t> lines;
  std::vector<std::uint32_t> begin;  // record r's lines: [begin[r], begin[r + 1])
  std::vector<std::uint32_t> sm;     // record r's SM
  std::vector<std::uint32_t> by_sm;  // the records SM by SM, in trace order within an SM
  std::uint64_t warp_memory_instructions = 0;
  std::uint32_t sms = 0, l1_sets = 0, l1_ways = 0, l2_sets = 0;
  bool l1_plru = false;
};

FloorTrace floor_trace(const std::string& example, const std::vector<ParamOverride>& sets) {
  const Arch arch = load_arch_file(fs::path(MEMHIER_BENCH_ARCH_DIR) / "h100.yaml");
  auto src = load_kernel_description(fs::path(MEMHIER_BENCH_TRACES_DIR) / "examples" / (example + ".yaml"), sets);
  FloorTrace t;
  KernelLaunch k;
  if (!src->next_kernel(k)) return t;
  LaunchResources res;
  res.threads_per_block = static_cast<int>(k.block.count());
  res.registers_per_thread = static_cast<int>(k.registers_per_thread);
  res.static_shared_bytes = k.static_shared_bytes;
  res.dynamic_shared_bytes = k.dynamic_shared_bytes;
  const Occupancy occ = compute_occupancy(arch, res);
  t.sms = static_cast<std::uint32_t>(arch.sm.count);
  // As simulate() shapes it: the arch's ways (sets following the capacity) or its sets (ways following it).
  const std::uint64_t l1_lines = occ.l1_capacity / arch.l1.line;
  const auto fixed = static_cast<std::uint64_t>(arch.l1.ways > 0 ? arch.l1.ways : arch.l1.sets);
  t.l1_sets = static_cast<std::uint32_t>(arch.l1.ways > 0 ? l1_lines / fixed : fixed);
  t.l1_ways = static_cast<std::uint32_t>(arch.l1.ways > 0 ? fixed : l1_lines / fixed);
  t.l1_plru = arch.l1.replacement == Replacement::plru;
  t.l2_sets = static_cast<std::uint32_t>(arch.l2.size / arch.l2.line / kL2Ways);  // the H100's: 16 ways
  if (t.l1_sets == 0 || t.l1_ways == 0) throw std::runtime_error("bench_floor: the launch leaves no L1");
  BlockTrace b;
  std::vector<std::uint64_t> found;
  for (std::uint64_t block = 0; src->next_block(b); ++block)
    for (const WarpRecord& r : b.records) {
      // Global loads and stores only (both traces have nothing else; local addresses would need the SM's mapping),
      // 4-byte aligned: a lane's line is its address's.
      if (!r.is_memory() || r.space != AddressSpace::global) continue;
      ++t.warp_memory_instructions;
      found.clear();
      for (std::uint64_t a : b.lane_addresses(r)) found.push_back(a / arch.l1.line);
      std::sort(found.begin(), found.end());
      found.erase(std::unique(found.begin(), found.end()), found.end());
      t.begin.push_back(static_cast<std::uint32_t>(t.lines.size()));
      t.sm.push_back(static_cast<std::uint32_t>(block % t.sms));
      t.lines.insert(t.lines.end(), found.begin(), found.end());
    }
  t.begin.push_back(static_cast<std::uint32_t>(t.lines.size()));
  t.by_sm.resize(t.sm.size());
  std::iota(t.by_sm.begin(), t.by_sm.end(), 0U);
  std::stable_sort(t.by_sm.begin(), t.by_sm.end(), [&](std::uint32_t x, std::uint32_t y) { return t.sm[x] < t.sm[y]; });
  return t;
}

// Mode 3: no cache at all, only the host memory a lookup must reach: per line, one read and write of a tag in its
// SM's L1 tag array (slots x 8 bytes an SM, at a hashed place) and of a tag of an L2 set (sets x 16 x 8 bytes).
// Loads of different lines do not depend on each other, so the host overlaps their misses: the bound for any
// design that keeps every SM's L1 tags and the L2's tags in host memory.
void run_touch(benchmark::State& state, const FloorTrace& t) {
  const std::size_t l1_slots = std::bit_floor(std::size_t{t.l1_sets} * t.l1_ways);
  std::vector<std::uint64_t> l1(std::size_t{t.sms} * l1_slots, 0), l2(std::size_t{t.l2_sets} * kL2Ways, 0);
  const auto shift = 64U - static_cast<unsigned>(std::countr_zero(l1_slots));
  std::uint64_t sum = 0;
  for (auto _ : state) {
    for (std::size_t r = 0; r + 1 < t.begin.size(); ++r) {
      std::uint64_t* tags = &l1[t.sm[r] * l1_slots];
      for (std::uint32_t i = t.begin[r]; i < t.begin[r + 1]; ++i) {
        const std::uint64_t line = t.lines[i], h = line * 0x9E3779B97F4A7C15ULL;
        std::uint64_t& a = tags[h >> shift];
        __extension__ using u128 = unsigned __int128;
        const auto set = static_cast<std::size_t>((static_cast<u128>(h) * t.l2_sets) >> 64U);
        std::uint64_t& b = l2[set * kL2Ways + line % kL2Ways];
        sum += a + b;
        a = b = line;
      }
    }
    benchmark::DoNotOptimize(sum);
  }
}

void run_floor(benchmark::State& state, const FloorTrace& t) {
  const auto levels = state.range(0);  // 0: L1 then L2 on a miss; 1: L1 only; 2: L2 only; 3: memory touched only
  std::uint64_t l1_hits = 0, l2_hits = 0;
  if (levels == 3) {
    run_touch(state, t);
  } else {
    struct Miss {
      std::uint64_t line;
      std::uint32_t set;
    };
    std::vector<Miss> missed, grouped(t.lines.size());
    std::vector<std::uint32_t> at(kL2Groups + 1);
    missed.reserve(t.lines.size());
    for (auto _ : state) {
      std::vector<FloorL1> l1(t.sms, FloorL1(t.l1_sets, t.l1_ways, t.l1_plru));
      FloorL2 l2(t.l2_sets);
      l1_hits = l2_hits = 0;
      missed.clear();
      // The L1s, SM by SM; their misses in that order.
      for (const std::uint32_t r : t.by_sm) {
        FloorL1& cache = l1[t.sm[r]];
        for (std::uint32_t i = t.begin[r]; i < t.begin[r + 1]; ++i) {
          if (levels != 2 && cache.access(t.lines[i])) {
            ++l1_hits;
            continue;
          }
          missed.push_back({t.lines[i], static_cast<std::uint32_t>(l2.set_of(t.lines[i]))});
        }
      }
      if (levels == 1) continue;
      // The misses grouped by their L2 set group (a counting sort, stable), then the L2 group by group.
      std::fill(at.begin(), at.end(), 0U);
      for (const Miss& m : missed) ++at[l2.group_of_set(m.set) + 1];
      for (std::size_t g = 1; g <= kL2Groups; ++g) at[g] += at[g - 1];
      for (const Miss& m : missed) grouped[at[l2.group_of_set(m.set)]++] = m;
      for (std::size_t i = 0; i < missed.size(); ++i)
        if (l2.access(grouped[i].line, grouped[i].set)) ++l2_hits;
      benchmark::DoNotOptimize(l2_hits);
    }
  }
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["warp_mem_instr_per_s"] =
      benchmark::Counter(static_cast<double>(t.warp_memory_instructions) * iterations, benchmark::Counter::kIsRate);
  state.counters["time_per_line"] = benchmark::Counter(static_cast<double>(t.lines.size()) * iterations,
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["lines_per_instr"] =
      static_cast<double>(t.lines.size()) / static_cast<double>(t.warp_memory_instructions);
  state.counters["l1_hit_share"] = static_cast<double>(l1_hits) / static_cast<double>(t.lines.size());
  state.counters["l2_hit_share"] = static_cast<double>(l2_hits) / static_cast<double>(t.lines.size());
}

// Each benchmark builds its trace once (the timed loop excludes it): the same kernels and sizes as bench_sim.cpp's.
void BM_FloorStreaming(benchmark::State& s) {
  static const FloorTrace t = floor_trace("coalesced_copy", {{"n", "1 << 23"}});
  run_floor(s, t);
}
void BM_FloorRandomGather(benchmark::State& s) {
  static const FloorTrace t = floor_trace("random_gather", {{"n", "1 << 21"}, {"m", "1 << 24"}});
  run_floor(s, t);
}

}  // namespace

BENCHMARK(BM_FloorStreaming)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FloorRandomGather)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
