#pragma once
// The order in which a slice group replays a wave's requests: by issue cycle across SMs, SMs in number order within a
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
  // A counting sort over the wave's cycles is used while they number at most this many a request (and an SM) of the
  // group: its count array is then small next to the requests. Past that, a heap merge.
  static constexpr std::uint64_t kCountingSortCycles = 16;

  // Calls f(request, sm) for group `group`'s requests of wave `wave` in replay order. `sms`: the SMs with requests in
  // the wave, ascending (others are not looked at); `sm_count`: all SMs.
  template <typename F>
  void for_each(const RequestLists& lists, std::size_t wave, std::size_t group, std::span<const std::size_t> sms,
                std::size_t sm_count, F&& f) {
    std::size_t count = 0;
    std::uint64_t last = 0;
    for (const std::size_t s : sms) {
      const std::span<const L2Request> v = lists.of(wave, group, s);
      count += v.size();
      if (!v.empty()) last = std::max<std::uint64_t>(last, v.back().cycle);
    }
    if (count == 0) return;
    if (last < kCountingSortCycles * (count + sm_count)) {
      counting_sort(lists, wave, group, sms, count, last, f);
    } else {
      heap_merge(lists, wave, group, sms, sm_count, f);
    }
  }

 private:
  struct Ordered {
    const L2Request* request;
    std::uint32_t sm;
  };

  // A stable counting sort by cycle of the lists taken SM by SM, in two passes.
  template <typename F>
  void counting_sort(const RequestLists& lists, std::size_t wave, std::size_t group, std::span<const std::size_t> sms,
                     std::size_t count, std::uint64_t last, F&& f) {
    m_starts.assign(last + 2, 0);
    for (const std::size_t s : sms)
      for (const L2Request& r : lists.of(wave, group, s)) ++m_starts[r.cycle + 1];
    for (std::size_t c = 1; c < m_starts.size(); ++c) m_starts[c] += m_starts[c - 1];
    m_order.resize(count);
    for (const std::size_t s : sms)
      for (const L2Request& r : lists.of(wave, group, s))
        m_order[m_starts[r.cycle]++] = {&r, static_cast<std::uint32_t>(s)};
    for (std::size_t i = 0; i < count; ++i) {
      if (i + 4 < count) __builtin_prefetch(m_order[i + 4].request);
      f(*m_order[i].request, static_cast<std::size_t>(m_order[i].sm));
    }
  }

  // A merge through a min-heap of each SM's next cycle packed with its number in one key (cycle << 16 | SM); the SM
  // taken goes back in with its next cycle.
  template <typename F>
  void heap_merge(const RequestLists& lists, std::size_t wave, std::size_t group, std::span<const std::size_t> sms,
                  std::size_t sm_count, F&& f) {
    m_heap.clear();
    m_next.assign(sm_count, 0);
    for (const std::size_t s : sms) {
      const std::span<const L2Request> v = lists.of(wave, group, s);
      if (!v.empty()) m_heap.push_back(std::uint64_t{v.front().cycle} << 16U | s);
    }
    std::make_heap(m_heap.begin(), m_heap.end(), std::greater<>());
    while (!m_heap.empty()) {
      const std::uint64_t key = m_heap.front();
      const std::uint64_t cycle = key >> 16U;
      const std::size_t s = key & 0xFFFFU;
      const std::span<const L2Request> v = lists.of(wave, group, s);
      std::size_t& i = m_next[s];
      for (; i < v.size() && v[i].cycle == cycle; ++i) f(v[i], s);
      if (i < v.size()) {
        __builtin_prefetch(&v[i] + 2);
        replace_top(std::uint64_t{v[i].cycle} << 16U | s);
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

  std::vector<std::uint32_t> m_starts;
  std::vector<Ordered> m_order;
  std::vector<std::uint64_t> m_heap;
  std::vector<std::size_t> m_next;
};

}  // namespace memhier
