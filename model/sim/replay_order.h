#pragma once
// The order in which a slice group replays a batch's requests: by issue cycle across SMs, SMs in number order within a
// cycle, each SM's requests of one cycle in issue order (the order the SMs' lists were written in).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "sim_types.h"

namespace memhier {

class ReplayOrder {
 public:
  // A counting sort over the batch's cycles is used while they span at most this many a request (and an SM) of the
  // group: its count array is then small next to the requests. Past that, a heap merge.
  static constexpr std::uint64_t kCountingSortCycles = 16;

  // How many requests ahead of the replay the counting sort shows a request to `ahead` (see for_each).
  static constexpr std::size_t kAhead = 8;

  // Calls f(request, sm) for group `group`'s requests of the batch in replay order. `sms`: the SMs with requests in
  // the batch, ascending (others are not looked at); `sm_count`: all SMs. The counting sort also calls ahead(request,
  // sm) kAhead requests before f gets it, for the caller to bring the request's cache sets into the host's caches (the
  // heap merge, used where cycles are far apart, does not).
  template <typename F, typename A>
  void for_each(const RequestLists& lists, std::size_t group, std::span<const std::size_t> sms, std::size_t sm_count,
                F&& f, A&& ahead) {
    const RequestLists::Part* parts = lists.parts(group);
    m_parts.clear();
    std::size_t count = 0;
    std::uint64_t first = ~std::uint64_t{0}, last = 0;
    for (const std::size_t s : sms) {
      const RequestLists::Part& p = parts[s];
      if (p.count == 0) continue;
      m_parts.push_back({p.requests(), static_cast<std::uint32_t>(s)});
      count += p.count;
      first = std::min<std::uint64_t>(first, p.first->cycle);
      last = std::max(last, p.last_cycle);
    }
    if (count == 0) return;
    if (last - first < kCountingSortCycles * (count + sm_count)) {
      counting_sort(count, first, last, f, ahead);
    } else {
      heap_merge(f);
    }
  }

 private:
  struct Ordered {
    const L2Request* request;
    std::uint32_t sm;
  };
  // An SM's non-empty part of the group's requests.
  struct Part {
    std::span<const L2Request> requests;
    std::uint32_t sm;
  };

  // A stable counting sort by cycle (from `first` to `last`) of the parts taken SM by SM, in two passes.
  template <typename F, typename A>
  void counting_sort(std::size_t count, std::uint64_t first, std::uint64_t last, F&& f, A&& ahead) {
    m_starts.assign(last - first + 2, 0);
    for (const Part& p : m_parts)
      for (const L2Request& r : p.requests) ++m_starts[r.cycle - first + 1];
    for (std::size_t c = 1; c < m_starts.size(); ++c) m_starts[c] += m_starts[c - 1];
    m_order.resize(count);
    for (const Part& p : m_parts)
      for (const L2Request& r : p.requests) m_order[m_starts[r.cycle - first]++] = {&r, p.sm};
    for (std::size_t i = 0; i < count; ++i) {
      if (i + kAhead + 4 < count) __builtin_prefetch(m_order[i + kAhead + 4].request);
      if (i + kAhead < count) ahead(*m_order[i + kAhead].request, static_cast<std::size_t>(m_order[i + kAhead].sm));
      f(*m_order[i].request, static_cast<std::size_t>(m_order[i].sm));
    }
  }

  // A merge through a min-heap of each SM's next cycle packed with its part's place in one key (cycle << 16 | part:
  // parts are in SM order, so ties go to the lower SM); the part taken goes back in with its next cycle.
  template <typename F>
  void heap_merge(F&& f) {
    m_heap.clear();
    m_next.assign(m_parts.size(), 0);
    for (std::size_t i = 0; i < m_parts.size(); ++i)
      m_heap.push_back(std::uint64_t{m_parts[i].requests.front().cycle} << 16U | i);
    std::make_heap(m_heap.begin(), m_heap.end(), std::greater<>());
    while (!m_heap.empty()) {
      const std::uint64_t key = m_heap.front();
      const std::uint64_t cycle = key >> 16U;
      const std::size_t k = key & 0xFFFFU;
      const std::span<const L2Request> v = m_parts[k].requests;
      const std::size_t s = m_parts[k].sm;
      std::size_t& i = m_next[k];
      for (; i < v.size() && v[i].cycle == cycle; ++i) f(v[i], s);
      if (i < v.size()) {
        __builtin_prefetch(&v[i] + 2);
        replace_top(std::uint64_t{v[i].cycle} << 16U | k);
      } else {
        std::pop_heap(m_heap.begin(), m_heap.end(), std::greater<>());
        m_heap.pop_back();
      }
    }
  }

  // The heap's top replaced by `key`, sifted down to its place (one pass instead of a pop and a push).
  void replace_top(std::uint64_t key) {
    const std::size_t n = m_heap.size();
    std::size_t i = 0;
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && m_heap[child + 1] < m_heap[child]) ++child;
      if (m_heap[child] >= key) break;
      m_heap[i] = m_heap[child];
      i = child;
    }
    m_heap[i] = key;
  }

  std::vector<Part> m_parts;  // of the group being replayed
  std::vector<std::uint32_t> m_starts;
  std::vector<Ordered> m_order;
  std::vector<std::uint64_t> m_heap;
  std::vector<std::size_t> m_next;
};

}  // namespace memhier
