#include "zeroed_array.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <vector>
#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
#include <unistd.h>
#define MEMHIER_ZEROED_MMAP 1
#endif

namespace memhier::zeroed {

namespace {

// Fresh zero pages for `bytes`, page-aligned; throws std::bad_alloc.
void* map_fresh(std::size_t bytes) {
#if defined(MEMHIER_ZEROED_MMAP)
  void* block = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) throw std::bad_alloc();
  return block;
#else
  constexpr std::size_t kPage = 4096;
  void* block = ::operator new (bytes, std::align_val_t{kPage});
  std::memset(block, 0, bytes);
  return block;
#endif
}

void unmap(void* block, std::size_t bytes) noexcept {
#if defined(MEMHIER_ZEROED_MMAP)
  ::munmap(block, bytes);
#else
  ::operator delete (block, std::align_val_t{4096});
  (void)bytes;
#endif
}

// Back to all zero bytes, touching only the pages the table used: a page in memory is cleared; one that is not was
// never written (zero) or was swapped out, and MADV_DONTNEED drops it (it reads as zero again). Clearing the whole
// table instead brought in every page a small kernel had left untouched, so that the second simulation in a process
// faulted in the rest of the first one's tables (500 short launches: 92 -> 139 ms). Where mincore fails, everything.
void clear_used(void* block, std::size_t bytes) {
#if defined(MEMHIER_ZEROED_MMAP)
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t pages = (bytes + page - 1) / page;
  std::vector<unsigned char> in;
  try {
    in.resize(pages);
  } catch (const std::bad_alloc&) {
    in.clear();
  }
  if (in.empty() || mincore(block, pages * page, in.data()) != 0) {
    std::memset(block, 0, bytes);
    return;
  }
  auto* base = static_cast<unsigned char*>(block);
  for (std::size_t first = 0; first < pages;) {
    const bool resident = (in[first] & 1U) != 0;
    std::size_t end = first + 1;
    while (end < pages && ((in[end] & 1U) != 0) == resident) ++end;
    // A page out of memory is dropped (where madvise refuses, cleared as one in memory is).
    if (resident || madvise(base + first * page, (end - first) * page, MADV_DONTNEED) != 0)
      std::memset(base + first * page, 0, std::min(end * page, bytes) - first * page);
    first = end;
  }
#else
  std::memset(block, 0, bytes);
#endif
}

// The process's pool: up to 256 MiB of freed tables (an H100's are 21 MB). Made once and never destroyed, so that a
// table freed during static destruction still finds it.
Pool& process_pool() {
  static Pool* const p = new Pool(std::size_t{256} << 20U);  // NOLINT(cppcoreguidelines-owning-memory): never freed
  return *p;
}

}  // namespace

struct Pool::State {
  struct Entry {
    void* block;
    std::uint64_t order;  // when it was given back
  };
  std::size_t most = 0;
  mutable std::mutex mutex;
  std::map<std::size_t, std::vector<Entry>> free;  // by size, the latest given back last
  std::size_t pooled = 0, live = 0, peak = 0;
  std::uint64_t given = 0;

  // Unmaps the oldest pooled tables until the pool holds at most `limit` bytes.
  void trim(std::size_t limit) {
    while (pooled > limit) {
      auto oldest = free.end();
      for (auto it = free.begin(); it != free.end(); ++it)
        if (!it->second.empty() && (oldest == free.end() || it->second.front().order < oldest->second.front().order))
          oldest = it;
      void* block = oldest->second.front().block;
      oldest->second.erase(oldest->second.begin());
      pooled -= oldest->first;
      unmap(block, oldest->first);
    }
  }
};

Pool::Pool(std::size_t most_bytes) : m_state(std::make_unique<State>()) { m_state->most = most_bytes; }

Pool::~Pool() { m_state->trim(0); }

void* Pool::take(std::size_t bytes) {
  State& st = *m_state;
  void* reused = nullptr;
  {
    const std::lock_guard<std::mutex> lock(st.mutex);
    st.live += bytes;
    st.peak = std::max(st.peak, st.live);
    auto it = st.free.find(bytes);
    if (it != st.free.end() && !it->second.empty()) {
      reused = it->second.back().block;
      it->second.pop_back();
      st.pooled -= bytes;
    } else {
      st.trim(st.peak - st.live);
    }
  }
  if (reused != nullptr) {
    clear_used(reused, bytes);  // here, not when given back: a process's last tables are never cleared
    return reused;
  }
  try {
    return map_fresh(bytes);
  } catch (...) {
    const std::lock_guard<std::mutex> lock(st.mutex);
    st.live -= bytes;
    throw;
  }
}

void Pool::give(void* block, std::size_t bytes) noexcept {
  State& st = *m_state;
  // Pooled with its used pages in place: clearing them when it is taken again costs less than faulting fresh ones in.
  bool pooled = false;
  {
    const std::lock_guard<std::mutex> lock(st.mutex);
    st.live -= bytes;
    if (st.pooled + bytes <= st.most) {
      try {
        st.free[bytes].push_back({block, st.given++});
        st.pooled += bytes;
        pooled = true;
      } catch (...) {  // no memory for the pool's lists: the OS takes the table back
      }
    }
  }
  if (!pooled) unmap(block, bytes);
}

std::size_t Pool::pooled() const {
  const std::lock_guard<std::mutex> lock(m_state->mutex);
  return m_state->pooled;
}
std::size_t Pool::live() const {
  const std::lock_guard<std::mutex> lock(m_state->mutex);
  return m_state->live;
}
std::size_t Pool::peak() const {
  const std::lock_guard<std::mutex> lock(m_state->mutex);
  return m_state->peak;
}

void* acquire(std::size_t bytes, std::size_t align) {
  if (bytes >= kLazyBytes) return process_pool().take(bytes);  // page-aligned, so any alignment up to a page holds
  void* block = ::operator new (bytes, std::align_val_t{align});
  std::memset(block, 0, bytes);
  return block;
}

void release(void* p, std::size_t bytes, std::size_t align) noexcept {
  if (bytes >= kLazyBytes) {
    process_pool().give(p, bytes);
    return;
  }
  ::operator delete (p, std::align_val_t{align});
}

std::size_t pooled_bytes() { return process_pool().pooled(); }

}  // namespace memhier::zeroed
