#pragma once
// Storage in cache lines of its own, for the small vectors one host thread writes while others write their
// neighbours': an SM's scheduler state (simulate() runs the SMs on all threads, each SM's vectors made one after the
// other on one thread, so a few words of two SMs' ready bits or wake-up heaps would share a line) and a slice's DRAM
// bank tables (the slice groups replay in parallel). Two lines (128 bytes): Intel cores fetch lines in adjacent pairs.
#include <cstddef>
#include <new>
#include <vector>

namespace memhier {

inline constexpr std::size_t kLineAlignment = 128;

template <typename T>
struct LineAllocator {
  using value_type = T;
  LineAllocator() = default;
  template <typename U>
  explicit LineAllocator(const LineAllocator<U>& /*other*/) noexcept {}
  T* allocate(std::size_t n) {
    // The element's size, whatever T is (clang-tidy takes a T that is a pointer for sizeof of a pointer).
    const std::size_t bytes =
        (n * sizeof(T) + kLineAlignment - 1) / kLineAlignment * kLineAlignment;  // NOLINT(bugprone-sizeof-expression)
    return static_cast<T*>(::operator new (bytes, std::align_val_t{kLineAlignment}));
  }
  void deallocate(T* p, std::size_t /*n*/) noexcept { ::operator delete (p, std::align_val_t{kLineAlignment}); }
  template <typename U>
  bool operator==(const LineAllocator<U>& /*other*/) const noexcept {
    return true;
  }
};

template <typename T>
using LineVector = std::vector<T, LineAllocator<T>>;

}  // namespace memhier
