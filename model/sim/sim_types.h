#pragma once
// What the SM front ends hand to the L2 slices, and the launch facts both need.
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <vector>

#include "memhier/trace.h"

namespace memhier {

// Every level counts 32-byte sectors in 128-byte lines (simulate() rejects an arch with another geometry).
inline constexpr std::uint64_t kLineBytes = 128;
inline constexpr std::uint64_t kSectorBytes = 32;

enum class L2Op : std::uint8_t { read, write, atom, red };

// One request for some sectors of one line. Each SM lists its requests in issue order; (cycle, SM) then orders them
// across SMs (the cycle its instruction issued in: warp_scheduler.h).
// 32 bytes: the lists of a batch are long, so the cycle and the group share a word, and the op and property a byte.
inline constexpr std::uint64_t kRequestCycleMask = (std::uint64_t{1} << 48U) - 1;

struct L2Request {
  std::uint64_t cycle : 48 = 0;  // simulate() refuses a launch past 2^48 cycles on an SM (the L2 merge key's bits)
  std::uint64_t group : 16 = 0;  // slice group of the line's home slice (simulate() refuses more than 2^16 groups)
  std::uint64_t line = 0;        // address / 128
  std::uint32_t set = 0;     // the line's set within its slice (place_in_sets), the same in every slice of its group
  std::uint8_t sectors = 0;  // mask of the line's 32-byte sectors requested
  std::uint8_t home = 0;     // partition of the line's home slice
  std::uint8_t from = 0;     // partition of the requesting SM
  L2Op op : 4 = L2Op::read;
  L2Property property : 4 = L2Property::normal;
  // A write's 4-byte words written whole: bit 8s + w is word w of sector s (SmFront::written_words); 0 otherwise.
  // The L2 keeps a sector written in part (some words) apart from whole ones (l2_slice.h).
  std::uint32_t words = 0;
  // 1: a read whose warp instruction sent the line before this one, or a write whose SM wrote the line before it, in
  // the same DRAM row (a dram.row_bytes chunk of the address space): the controller serves both with one activation
  // (l2_slice.h).
  std::uint8_t row_follows = 0;
  // 1: a read that may merge with the TPC sibling's (tpc_merge.h), on an architecture whose L1 misses merge within a
  // TPC (l1.miss_merge_sms: 2): from a block of the launch's first wave (by blockIdx, x fastest: the GPU's first wave,
  // whatever order or sample of the blocks a trace holds), which the GPU places in pairs on the two SMs of a TPC
  // (blocks 2j and 2j + 1), so that the pair's reads of the same lines merge. A later block goes to whichever SM frees
  // a place first, beside a block from elsewhere in the grid (validate/results/h100-2026-11-27-sibling-drift).
  std::uint8_t paired = 0;
};
static_assert(sizeof(L2Request) == 32);

// The sectors (mask) whose 8 words `words` (L2Request::words) all hold: those a write covers whole.
// Without a loop: a byte of `words` is all ones where it is zero in ~words, which sets bit 7 of that byte alone in
// `zero` (each byte's low 7 bits plus 0x7F carry into bit 7 unless all are zero); the multiply then gathers bits 7,
// 15, 23 and 31 into bits 21-24 (no two of its partial products meet there).
inline std::uint32_t full_sectors(std::uint32_t words) {
  static_assert(kLineBytes / kSectorBytes == 4);
  const std::uint32_t v = ~words;
  const std::uint32_t zero = ~(((v & 0x7F7F7F7FU) + 0x7F7F7F7FU) | v | 0x7F7F7F7FU);
  return ((zero >> 7U) * 0x00204081U) >> 21U & 0xFU;
}

// The L2 requests of a batch. Each SM appends its requests to one list, in issue order (issued()); once its share
// of the batch (or of a round of it: simulate.cpp) is done, the requests the replay takes now, a prefix of the list,
// are ordered by slice group, keeping issue order within a group (sort_by_group(): a stable counting sort), each
// group's replay reads its part of every SM's list (parts()), and drop_replayed() leaves the rest for the next round.
// One list an SM instead of one a group: a batch has thousands of (group, SM) lists of a few requests each, whose
// growth cost more than the sort. Where each part starts, its length and last cycle sit in one table, group by group,
// SM by SM, so a group's replay finds all its SMs' parts in one run of memory (reading each SM's list for them cost a
// host cache miss or two a part: a streaming copy's wave has about 3 requests a (group, SM)).
class RequestLists {
 public:
  struct Part {
    const L2Request* first = nullptr;
    std::uint32_t count = 0;
    std::uint64_t last_cycle = 0;  // of its last request (requests come in cycle order); 0 when empty
    [[nodiscard]] std::span<const L2Request> requests() const { return {first, count}; }
  };
  RequestLists(std::size_t groups, std::size_t sms)
      : m_groups(groups), m_sms(sms), m_lists(sms), m_parts(groups * sms) {}
  [[nodiscard]] std::vector<L2Request>& issued(std::size_t sm) { return m_lists[sm].issued; }
  // The first `count` requests of SM `sm`'s list, those the replay takes now, into its parts of the groups.
  void sort_by_group(std::size_t sm, std::size_t count) {
    List& l = m_lists[sm];
    const std::span<const L2Request> now(l.issued.data(), count);
    l.next.assign(m_groups + 1, 0);
    for (const L2Request& r : now) ++l.next[r.group + 1];
    for (std::size_t g = 1; g <= m_groups; ++g) l.next[g] += l.next[g - 1];
    // Grown, never shrunk, and not initialized: each request is written before the replay reads it, and the parts
    // hold their own lengths. (Zeroing it as a vector did cost the gather benchmark 1.9% of its host instructions.)
    if (l.room < count) {
      l.room = l.issued.capacity();
      l.sorted.reset(static_cast<L2Request*>(::operator new(l.room * sizeof(L2Request))));
    }
    L2Request* sorted = l.sorted.get();
    Part* parts = &m_parts[sm];  // group g's: parts[g * m_sms]
    for (std::size_t g = 0; g < m_groups; ++g) parts[g * m_sms] = {sorted + l.next[g], l.next[g + 1] - l.next[g], 0};
    for (const L2Request& r : now) std::construct_at(sorted + l.next[r.group]++, r);
    for (std::size_t g = 0; g < m_groups; ++g)
      if (parts[g * m_sms].count != 0) parts[g * m_sms].last_cycle = sorted[l.next[g] - 1].cycle;
  }
  // The parts of every SM (indexed by SM) of group `group`.
  [[nodiscard]] const Part* parts(std::size_t group) const { return &m_parts[group * m_sms]; }
  // Drops the first `count` requests of SM `sm`'s list (replayed); the rest move to its front.
  void drop_replayed(std::size_t sm, std::size_t count) {
    std::vector<L2Request>& v = m_lists[sm].issued;
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(count));
  }

 private:
  struct Release {
    void operator()(L2Request* p) const { ::operator delete(p); }
  };
  struct alignas(128) List {  // its own lines: each SM's list grows on the host thread running that SM
    std::vector<L2Request> issued;
    std::unique_ptr<L2Request, Release> sorted;  // room for `room` requests
    std::size_t room = 0;
    std::vector<std::uint32_t> next;  // sort_by_group's scratch
  };
  std::size_t m_groups, m_sms;
  std::vector<List> m_lists;
  std::vector<Part> m_parts;  // of group g, SM s at g * SMs + s
};

// Which L2 property a line gets from the launch's access-policy windows: a hit_ratio fraction of each window's lines
// (chosen by a hash of the line address, so the choice is stable across launches) get hit_prop, the rest miss_prop.
class PolicyMap {
 public:
  explicit PolicyMap(std::vector<AccessPolicyWindow> windows) : m_windows(std::move(windows)) {}
  [[nodiscard]] L2Property property(std::uint64_t address) const {
    for (const AccessPolicyWindow& w : m_windows) {
      if (address < w.base || address - w.base >= w.bytes) continue;
      std::uint64_t h = (address >> 7U) * 0x9E3779B97F4A7C15ULL;
      h ^= h >> 29U;
      const double u = static_cast<double>(h >> 11U) * 0x1.0p-53;
      return u < w.hit_ratio ? w.hit_prop : w.miss_prop;
    }
    return L2Property::normal;
  }
  [[nodiscard]] bool empty() const { return m_windows.empty(); }

 private:
  std::vector<AccessPolicyWindow> m_windows;
};

}  // namespace memhier
