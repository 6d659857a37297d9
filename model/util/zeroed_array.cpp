#include "zeroed_array.h"

#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <vector>
#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
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

}  // namespace

void* acquire(std::size_t bytes, std::size_t align) {
#if defined(MEMHIER_ZEROED_MMAP)
  if (bytes >= kLazyBytes) {  // page-aligned, so any alignment up to a page holds
    if (void* block = take_pooled(bytes)) {
      std::memset(block, 0, bytes);  // its pages are in place: clearing them costs less than faulting fresh ones in
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
    bool pooled = false;
    try {
      pooled = pool_block(p, bytes);
    } catch (...) {  // the pool could not grow its lists: the OS takes the table back
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
