#include "zeroed_array.h"

#include <algorithm>
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

// Freed tables of kLazyBytes and more, by size, up to kPoolBytes in all (more go back to the OS): a process that
// simulates again, on the same arch, asks for the same sizes. Made once and never destroyed, so that a table freed
// during static destruction still finds it.
constexpr std::size_t kPoolBytes = std::size_t{256} << 20U;

struct Pool {
  std::mutex mutex;
  std::map<std::size_t, std::vector<void*>> free;
  std::size_t bytes = 0;
};

Pool& pool() {
  static Pool* const p = new Pool;  // NOLINT(cppcoreguidelines-owning-memory): lives as long as the process
  return *p;
}

void* take_pooled(std::size_t bytes) {
  Pool& p = pool();
  const std::lock_guard<std::mutex> lock(p.mutex);
  auto it = p.free.find(bytes);
  if (it == p.free.end() || it->second.empty()) return nullptr;
  void* block = it->second.back();
  it->second.pop_back();
  p.bytes -= bytes;
  return block;
}

bool pool_block(void* block, std::size_t bytes) {
  Pool& p = pool();
  const std::lock_guard<std::mutex> lock(p.mutex);
  if (p.bytes + bytes > kPoolBytes) return false;
  p.free[bytes].push_back(block);
  p.bytes += bytes;
  return true;
}

#if defined(MEMHIER_ZEROED_MMAP)
// Back to all zero bytes, touching only the pages the table used: a page in memory is cleared; one that is not was
// never written (zero) or was swapped out, and MADV_DONTNEED drops it (it reads as zero again). Clearing the whole
// table instead brought in every page a small kernel had left untouched, so that the second simulation in a process
// faulted in the rest of the first one's tables (500 short launches: 92 -> 139 ms). Where mincore fails, everything.
void clear_used(void* block, std::size_t bytes) {
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
}
#endif

}  // namespace

void* acquire(std::size_t bytes, std::size_t align) {
#if defined(MEMHIER_ZEROED_MMAP)
  if (bytes >= kLazyBytes) {  // page-aligned, so any alignment up to a page holds
    if (void* block = take_pooled(bytes)) {
      clear_used(block, bytes);  // here, not when freed: a process's last tables are never cleared
      return block;
    }
    void* block = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) throw std::bad_alloc();
    return block;
  }
#endif
  void* block = ::operator new (bytes, std::align_val_t{align});
  std::memset(block, 0, bytes);
  return block;
}

void release(void* p, std::size_t bytes, std::size_t align) noexcept {
#if defined(MEMHIER_ZEROED_MMAP)
  if (bytes >= kLazyBytes) {
    // Pooled with its used pages in place: clearing them when it is taken again costs less than faulting fresh ones in.
    bool pooled = false;
    try {
      pooled = pool_block(p, bytes);
    } catch (...) {  // no memory for the pool's lists: the OS takes the table back
    }
    if (!pooled) ::munmap(p, bytes);
    return;
  }
#endif
  ::operator delete (p, std::align_val_t{align});
}

std::size_t pooled_bytes() {
  Pool& p = pool();
  const std::lock_guard<std::mutex> lock(p.mutex);
  return p.bytes;
}

}  // namespace memhier::zeroed
