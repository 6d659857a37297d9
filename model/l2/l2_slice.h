#pragma once
// One L2 slice: sectored, write-back with dirty sectors, residency control through its cache's persisting ways, and
// the DRAM traffic its misses and write-backs cause (fetch granularity from the arch).
//
// Partitions (A100 and H100 whitepapers: "each L2 partition localizes and caches data for memory accesses from SMs in
// the GPCs directly connected to the partition"): a line lives in its home slice; an SM of another partition looks it
// up first in its own partition's slice of the same group (`near`), which keeps a clean copy of what it read, and goes
// to the home slice (`home`) only for the sectors that copy lacks. Writes and atomics always reach the home slice,
// which invalidates the copies other partitions hold; a far write leaves the writer's partition a clean copy of what
// it wrote. ncu counts both lookups, so a far read costs 1.5x the sectors of a near one for whole lines
// (validate/results/h100-2026-11-22/sim_check), and copies shrink the capacity left for distinct lines, written ones
// as read ones (validate/results/h100-2026-11-24/probe: a steady copy kernel runs out of L2 where reads alone do).
// A set may hold at most `dirty_ways` dirty lines (H100: 8 of 16, the same probe; fewer with a large persisting
// set-aside, whether or not a line persists: l2_dirty_ways(), validate/results/h100-2026-11-27b); past that the oldest
// is written back and stays, clean.
//
// Partly written sectors: a write that covers only some 4-byte words of a sector the slice does not hold leaves it
// dirty but not valid (a read of it misses and fetches it, merging the written words); later writes complete it. A
// slice holds at most `partial_sectors_max` such sectors: past that the oldest is written to DRAM (its written bytes)
// and fetched back whole (its fetch granule), clean (validate/results/h100-2026-11-24f: on the H100, 8 words a sector
// written a word at a time with about 135 thousand sectors open at once read 29% of the data back from DRAM and wrote
// as much again; with 4 thousand open, nothing). A line leaving the slice writes its dirty sectors, whole or not.
//
// DRAM rows: a slice fronts its share of the device's DRAM banks (dram.banks / slices), each keeping one row open.
// The slice's lines fill its rows in address order, dram_row_bytes of them a row: lines slices x row / line apart in
// the address space (the span in which the slice homes about a row's worth) share a row, whose bank a hash of the row
// picks. A read of the row its bank has open is a row hit; any other opens its row (an activation). So a stream opens
// a row per dram_row_bytes of each slice's lines, and a random 64-byte read one each. The hardware keeps a chunk of
// dram_row_bytes of the address space in one row, which the slice hash (one line to a slice) scatters: a read that
// the same warp instruction's previous line led into the same chunk (L2Request::row_follows) is served with that
// line's activation, and so is the write-back of a line whose write followed the SM's previous write in the same
// chunk (SetCache::batched; a stream's stores come one line a warp, warp after warp). H100,
// validate/results/h100-2026-11-25b/probe: runs of 4 granules at random places read within 5% of a stream's time,
// runs of 2 (one line) 8% slower.
// Other write-backs: the H100 writes a stream back at a stream's speed and random 64-byte writes at half of it (same
// probe); the simulated L2 evicts a stream's lines out of row order (its set hash spreads a row's lines over sets,
// each evicted when its own set fills), so a write-back counts as opening its row unless the slice wrote the same
// row back within its last kWriteWindow write-backs (a direct-mapped table of kWrittenRows rows). A longer window
// takes random writes within 256 MiB for grouped ones (1024: 16% faster than measured), a shorter one misses more of
// a stream's. The timing model charges activations against the arch's activation rates (timing.cpp).
#include <algorithm>
#include <array>
#include <deque>
#include <vector>

#include "../cache/set_cache.h"
#include "../sim/sim_types.h"
#include "../util/line_allocator.h"
#include "../util/zeroed_array.h"
#include "memhier/sim.h"

namespace memhier {

struct L2SliceSpec {
  CacheGeometry geometry;
  std::uint64_t fetch_bytes = 64;  // DRAM bytes per read miss, aligned
  int partition = 0;
  int partitions = 1;
  std::uint64_t dram_row_bytes = 1024;    // a bank's row
  std::uint32_t dram_banks = 16;          // the banks this slice fronts, each with a row open
  std::uint32_t index = 0;                // this slice's number among all `slices`
  std::uint32_t dram_channels = 1;        // of the device: the slices' banks, numbered slice by slice, fill them
  std::uint64_t slice_width = 64;         // bytes per data-path beat
  std::uint32_t slices = 1;               // of the whole L2 (sets are placed over all of them: place_in_sets)
  std::uint32_t dirty_ways = 0;           // dirty lines a set may hold (more: the oldest is written back); 0: every way
  std::uint32_t partial_sectors_max = 0;  // partly written sectors the slice holds (more: the oldest is filled); 0: any
};

// Aligned, and its small tables in lines of their own (LineVector): the slice groups replay on all host threads.
class alignas(128) L2Slice {
 public:
  explicit L2Slice(const L2SliceSpec& spec);
  void set_persisting_ways(std::uint32_t ways) { m_cache.set_persisting_ways(ways); }
  // The dirty lines a set may hold from now (0: every way). A set holding more keeps them until a clean line of it
  // turns dirty, which writes back the oldest one.
  void set_dirty_ways(std::uint32_t ways) { m_spec.dirty_ways = ways; }
  [[nodiscard]] std::uint32_t sets() const { return m_spec.geometry.sets; }
  void demote_persisting() { m_cache.demote_persisting(); }
  void prefetch(std::uint32_t set) const { m_cache.prefetch(set); }
  // Writes dirty data back and empties the slice (between launches under ncu-style cache control).
  void flush(SimCounters& c);
  // Serves request `r` in its slice group (`group`: the group's `partitions` slices, partition p's at group[p]): a
  // line homed in another partition is looked up first in the requester's own partition (near), the home slice
  // (home) seeing what that copy lacked; a write, atomic or reduction then drops the copies the other partitions hold.
  // simulate()'s replay calls this for every request, as the tests do.
  static void serve(L2Slice* group, int partitions, const L2Request& r, SimCounters& c);
  // Adds the DRAM bytes this slice moved since the last call, by channel, to `read` and `write` (dram_channels
  // long), and forgets them.
  void take_channel_bytes(std::vector<std::uint64_t>& read, std::vector<std::uint64_t>& write);
  // Forgets them (a flush's write-backs, which are no launch's traffic).
  void forget_channel_bytes() { std::fill(m_bank_bytes.begin(), m_bank_bytes.end(), std::array<std::uint64_t, 2>{}); }
  // Closes every bank's row and forgets the rows written back lately: a launch that starts cold finds no row open
  // (nor the previous launch's), so it counts the row hits it would count alone. The write-back count jumps past the
  // grouping window instead of the table being cleared (64 KiB a slice: 500 short launches took 2.7x as long).
  void close_rows() {
    std::fill(m_open_rows.begin(), m_open_rows.end(), ~std::uint64_t{0});
    m_writebacks += kWriteWindow + 1;
  }
  // A write at home makes other partitions' copies stale.
  void drop_copy(const L2Request& r);

 private:
  // One lookup of each kind: in the requester's partition for a line homed elsewhere (near_*, returning the sectors
  // the home slice is asked for: a read's that the copy lacks, every sector of the others), and at home (home_*, for
  // `sectors`; kFar: the request came from another partition, whose reads travel in whole fetch granules).
  // The read and write paths are inlined into serve() (l2_slice.cpp), which calls each once: their calls' register
  // saves and restores cost the benchmark gather 2.8% of its host instructions, the copy 1.5% (cachegrind).
  std::uint32_t near_read(const L2Request& r, SimCounters& c);
  std::uint32_t near_write(const L2Request& r, SimCounters& c);
  std::uint32_t near_atomic(const L2Request& r, SimCounters& c);
  template <bool kFar>
  [[gnu::always_inline]] void home_read(const L2Request& r, std::uint32_t sectors, SimCounters& c);
  void home_write(const L2Request& r, bool far, SimCounters& c);
  void home_atomic(const L2Request& r, bool far, SimCounters& c);
  // A read's or atomic's line at home, for the sectors `want`: found (its valid sectors `before`, `hits` of them
  // wanted, counted as persisting hits where the line persists; made most recent), or allocated (`before` none).
  struct Found {
    std::uint32_t slot, before;
    std::uint64_t hits;
  };
  Found look_up(const L2Request& r, std::uint32_t want, SimCounters& c);
  // The line a read or atomic found at home as `slot` (or allocated), holding `before` of the sectors `want`: the
  // sectors missing are fetched granule by granule and everything wanted becomes valid.
  void fill(const L2Request& r, std::uint32_t slot, std::uint32_t want, std::uint32_t before, SimCounters& c);
  // `batched`: an access in a row its instruction's previous line opened (a read with L2Request::row_follows) or
  // the SM's previous write did (a write-back of a line with SetCache::batched): no activation of its own.
  void dram(std::uint64_t address, std::uint64_t bytes, bool write, SimCounters& c, bool batched = false);
  // `granules` fetch granules of `line` read from DRAM at once (one row, one bank: the first opens the row or finds
  // it open, the others find it open), as that many dram() reads would count them.
  void dram_fetch(std::uint64_t line, unsigned granules, SimCounters& c, bool batched);
  // A slot for `line` with `property`; a dirty victim is written back.
  std::uint32_t allocate(const L2Request& r, L2Property property, SimCounters& c);
  // Aligned groups of sectors (the DRAM fetch granularity) that hold a requested sector: from a table of every mask.
  [[nodiscard]] std::uint32_t granules(std::uint32_t sectors) const { return m_granules[sectors]; }
  [[nodiscard]] std::uint32_t compute_granules(std::uint32_t sectors) const;
  // A lookup of `sectors` sectors (`hits` of them found) and the slice beats it takes, by kind.
  void count_read(std::uint64_t sectors, std::uint64_t hits, SimCounters& c) const {
    c.l2_beats += m_beats[sectors];
    c.l2_read_sectors += sectors;
    c.l2_read_hits += hits;
  }
  void count_write(std::uint64_t sectors, SimCounters& c) const {  // every write sector counts a hit (ncu)
    c.l2_beats += m_beats[sectors];
    c.l2_write_sectors += sectors;
    c.l2_write_hits += sectors;
    c.l2_write_beats += m_beats[sectors];
  }
  static void count_atomic(L2Op op, std::uint64_t sectors, std::uint64_t hits, SimCounters& c) {
    c.l2_beats += sectors;
    if (op == L2Op::atom) {
      c.l2_atom_beats += sectors;
      c.l2_atom_sectors += sectors;
      c.l2_atom_hits += hits;
    } else {
      c.l2_red_sectors += sectors;
      c.l2_red_hits += hits;
    }
  }
  // `slot` (of `set`) was clean and is now dirty: past the set's dirty-line limit, the oldest other dirty line is
  // written back and stays as a clean line.
  // (The check here, in line in the lookups: a set under its limit, the common case, costs no call.)
  void limit_dirty(std::uint32_t set, std::uint32_t slot, SimCounters& c) {
    if (m_spec.dirty_ways == 0) return;
    const std::uint32_t old = m_cache.oldest_dirty_past(set, slot, m_spec.dirty_ways);
    if (old != SetCache::kNone) write_back(old, c);
  }
  // Writes `old`'s dirty sectors back; it stays, clean.
  void write_back(std::uint32_t old, SimCounters& c);
  // A write of `sectors` with the words `words` (L2Request::words) to `slot`, none of which was valid: each sector it
  // completes becomes valid, the others stay (or become) partly written.
  void write_words(std::uint32_t slot, std::uint64_t line, std::uint32_t sectors, std::uint32_t words);
  // Forgets `slot`'s partly written sectors among `sectors` (their words were written back or merged with a fetch).
  void end_partial(std::uint32_t slot, std::uint32_t sectors);
  // While more than partial_sectors_max sectors are partly written: the oldest is written to DRAM and fetched whole.
  void fill_partials(SimCounters& c);

  L2SliceSpec m_spec;
  SetCache m_cache;
  std::array<std::uint8_t, 16> m_granules{};       // granules() of each mask of a line's 4 sectors
  std::array<std::uint8_t, 16> m_granule_count{};  // and how many granules that is
  std::array<std::uint64_t, 5> m_beats{};          // data-path beats of a lookup of 0 to 4 sectors
  LineVector<std::uint64_t> m_open_rows;           // per bank: the row open (~0: none)
  // Per bank: its channel, and the bytes read and written there since take_channel_bytes().
  LineVector<std::uint32_t> m_bank_channel;
  LineVector<std::array<std::uint64_t, 2>> m_bank_bytes;
  // Rows written back lately, direct-mapped by a hash of the row, with the write-back count when last written. A row
  // is kept complemented, so that a new table's zero pages mean none (~0 is no row: ZeroedArray).
  struct WrittenRow {
    std::uint64_t code;
    std::uint64_t at;
  };
  static constexpr std::size_t kWrittenRows = 4096;
  static constexpr std::uint64_t kWriteWindow = 256;  // write-backs over which a row's are grouped
  ZeroedArray<WrittenRow> m_written_rows;
  std::uint64_t m_writebacks = 0;
  // Partly written sectors: how many, and in the order they became so (entries go stale when their sector completes
  // or leaves; fill_partials() skips those).
  struct Partial {
    std::uint64_t line;
    std::uint32_t slot;
    std::uint32_t sector;
  };
  std::uint64_t m_partials = 0;
  std::deque<Partial> m_partial_order;
  unsigned m_fetch_sectors;  // sectors a DRAM fetch brings (fetch_bytes / sector bytes)
  Divisor m_row;             // DRAM row of a line: line / (slices x lines a row)
};

}  // namespace memhier
