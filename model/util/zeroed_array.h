#pragma once
// A fixed-size array that starts all zero bytes without writing them where it can. The simulated caches' tags and
// states are such tables (an H100's L2 slices and L1s hold 21 MB), coded so that zero means empty. Tables of at least
// kLazyBytes come from fresh anonymous pages of the OS, zero until touched (a process's first simulation of a small
// kernel touches only the sets it uses), and go back to a pool when freed, the pages they used cleared in place, so
// that a later simulation in the same process (validate, a sweep, a benchmark) gets them back without faulting every
// page in again (unpooled, memhier_bench_sim's streaming copy took 130 ms a run instead of 60). Smaller ones come from
// the heap, cleared. Against tables filled element by element, as std::vector fills them: `memhier simulate` of
// transpose_tiled at n=128 on the H100, 6,214 -> 2,106 page faults, 30.6 -> 14.4 MB resident, 72-78 -> 45-47 ms a run
// (this project's VM; bench/results/sim-2026-12-02-session61.txt). Elements are implicit-lifetime and trivially
// copyable: the zero bytes are their value.
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace memhier {

namespace zeroed {
inline constexpr std::size_t kLazyBytes = std::size_t{16} << 10U;  // 4 host pages
// `bytes` of zero bytes aligned to `align` (at most a host page); throws std::bad_alloc.
void* acquire(std::size_t bytes, std::size_t align);
// Gives back what acquire(bytes, align) gave.
void release(void* p, std::size_t bytes, std::size_t align) noexcept;
// Bytes held in the pool of freed tables (for the tests).
std::size_t pooled_bytes();

// Tables of kLazyBytes and more, as fresh anonymous pages and, once freed, kept by size for the next table of that
// size, which gets one back cleared where it was used (acquire() and release() share one pool for the process; where
// the host has no mmap, tables come from the heap instead). A table of a size the pool lacks means the tables in use
// are changing (a sweep's next L2 size): the pool then unmaps its oldest tables until the tables in use and those it
// holds together take no more than the most ever in use at once: a sweep of many configurations on one thread keeps
// about its largest configuration's tables, not every configuration's (13 L2 sizes up to 250 MB: 77 MB of memory at
// most, the largest alone 67 MB; bench/results/sim-2026-12-02-session62.txt). It holds at most `most_bytes` in all.
class Pool {
 public:
  explicit Pool(std::size_t most_bytes);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  // `bytes` (at least kLazyBytes) of zero bytes, page-aligned; throws std::bad_alloc.
  void* take(std::size_t bytes);
  // Gives back what take(bytes) gave.
  void give(void* block, std::size_t bytes) noexcept;
  [[nodiscard]] std::size_t pooled() const;
  [[nodiscard]] std::size_t live() const;  // taken, not given back
  [[nodiscard]] std::size_t peak() const;  // the most live at once

 private:
  struct State;
  std::unique_ptr<State> m_state;
};
}  // namespace zeroed

template <typename T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "ZeroedArray: elements must be plain data whose zero bytes are a value");

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(std::size_t n) { allocate(n); }
  ZeroedArray(const ZeroedArray& o) {
    allocate(o.m_size);
    if (m_size != 0) std::memcpy(static_cast<void*>(m_data), o.m_data, m_size * sizeof(T));
  }
  ZeroedArray(ZeroedArray&& o) noexcept
      : m_data(std::exchange(o.m_data, nullptr)), m_size(std::exchange(o.m_size, 0)) {}
  ZeroedArray& operator=(const ZeroedArray& o) {
    if (this != &o) *this = ZeroedArray(o);
    return *this;
  }
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    if (this != &o) {
      release();
      m_data = std::exchange(o.m_data, nullptr);
      m_size = std::exchange(o.m_size, 0);
    }
    return *this;
  }
  ~ZeroedArray() { release(); }

  [[nodiscard]] std::size_t size() const { return m_size; }
  [[nodiscard]] bool empty() const { return m_size == 0; }
  [[nodiscard]] T* data() { return m_data; }
  [[nodiscard]] const T* data() const { return m_data; }
  T& operator[](std::size_t i) { return m_data[i]; }
  const T& operator[](std::size_t i) const { return m_data[i]; }
  T* begin() { return m_data; }
  T* end() { return m_data + m_size; }
  [[nodiscard]] const T* begin() const { return m_data; }
  [[nodiscard]] const T* end() const { return m_data + m_size; }

 private:
  static constexpr std::size_t kAlign = alignof(T) > alignof(std::max_align_t) ? alignof(T) : alignof(std::max_align_t);

  void allocate(std::size_t n) {
    if (n == 0) return;
    if (n > ~std::size_t{0} / sizeof(T)) throw std::bad_alloc();
    m_data = static_cast<T*>(zeroed::acquire(n * sizeof(T), kAlign));  // implicit-lifetime elements live there
    m_size = n;
  }
  void release() noexcept {
    if (m_data != nullptr) zeroed::release(static_cast<void*>(m_data), m_size * sizeof(T), kAlign);
    m_data = nullptr;
    m_size = 0;
  }

  T* m_data = nullptr;
  std::size_t m_size = 0;
};

}  // namespace memhier
