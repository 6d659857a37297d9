#pragma once
// A fixed-size array that starts all zero bytes without writing them: tables of at least kLazyBytes come from fresh
// anonymous pages of the OS (zero until touched, and untouched pages take no memory), smaller ones from the heap,
// cleared. The simulated caches' tags and states are such tables (an H100's L2 slices and L1s hold 21 MB), coded so
// that zero means empty; a kernel of a few blocks then touches the few sets it uses. Against tables filled element by
// element, as std::vector fills them: `memhier simulate` of transpose_tiled at n=128 on the H100, 6,210 -> 2,109 page
// faults, 30 -> 14 MB resident, 70 -> 53 ms a run (this project's VM). Elements are implicit-lifetime and trivially
// copyable: the zero bytes are their value.
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>
#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
#define MEMHIER_ZEROED_ARRAY_MMAP 1
#endif

namespace memhier {

template <typename T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "ZeroedArray: elements must be plain data whose zero bytes are a value");

 public:
  static constexpr std::size_t kLazyBytes = std::size_t{16} << 10U;  // 4 host pages

  ZeroedArray() = default;
  explicit ZeroedArray(std::size_t n) : m_size(n) { m_data = allocate(n, m_mapped); }
  ZeroedArray(const ZeroedArray& o) : m_size(o.m_size) {
    m_data = allocate(m_size, m_mapped);
    if (m_size != 0) std::memcpy(static_cast<void*>(m_data), o.m_data, m_size * sizeof(T));
  }
  ZeroedArray(ZeroedArray&& o) noexcept
      : m_data(std::exchange(o.m_data, nullptr)), m_size(std::exchange(o.m_size, 0)), m_mapped(o.m_mapped) {}
  ZeroedArray& operator=(const ZeroedArray& o) {
    if (this != &o) *this = ZeroedArray(o);
    return *this;
  }
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    if (this != &o) {
      release();
      m_data = std::exchange(o.m_data, nullptr);
      m_size = std::exchange(o.m_size, 0);
      m_mapped = o.m_mapped;
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
  // Every element back to zero bytes (this writes them all).
  void clear_all() {
    if (m_size != 0) std::memset(static_cast<void*>(m_data), 0, m_size * sizeof(T));
  }

 private:
  static constexpr std::size_t kAlign = alignof(T) > alignof(std::max_align_t) ? alignof(T) : alignof(std::max_align_t);

  static T* allocate(std::size_t n, bool& mapped) {
    mapped = false;
    if (n == 0) return nullptr;
    if (n > ~std::size_t{0} / sizeof(T)) throw std::bad_alloc();
    const std::size_t bytes = n * sizeof(T);
#if defined(MEMHIER_ZEROED_ARRAY_MMAP)
    if (bytes >= kLazyBytes) {  // page-aligned, so any element alignment up to a page holds
      void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      mapped = true;
      return static_cast<T*>(p);  // implicit-lifetime elements begin to live in the mapped bytes
    }
#endif
    void* p = ::operator new (bytes, std::align_val_t{kAlign});
    std::memset(p, 0, bytes);
    return static_cast<T*>(p);
  }
  void release() noexcept {
    if (m_data == nullptr) return;
#if defined(MEMHIER_ZEROED_ARRAY_MMAP)
    if (m_mapped) {
      ::munmap(static_cast<void*>(m_data), m_size * sizeof(T));
      m_data = nullptr;
      return;
    }
#endif
    ::operator delete (static_cast<void*>(m_data), std::align_val_t{kAlign});
    m_data = nullptr;
  }

  T* m_data = nullptr;
  std::size_t m_size = 0;
  bool m_mapped = false;
};

}  // namespace memhier
