// Device patches the Compute Sanitizer inserts at memory instructions, barriers and asynchronous copies. Each warp
// access becomes one record: the lowest active lane reserves space with one atomic, every active lane writes its own
// address. A record that does not fit is counted in the header, never written past the buffer.
// Built as a tools-patch fatbin: nvcc --fatbin --compile-as-tools-patch (see CMakeLists.txt).
#include <sanitizer_patching.h>

#include "tracer_record.h"

using memhier::tracer::RecordHeader;
using memhier::tracer::TraceHeader;
namespace tr = memhier::tracer;

namespace {

__device__ __forceinline__ unsigned lane_id() {
  unsigned lane = 0;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

__device__ __forceinline__ unsigned linear_block() {
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}

// values_per_lane: 0 (barrier), 1 (address) or 2 (async copy: source and shared destination).
__device__ __forceinline__ void emit(void* userdata, unsigned long long pc, tr::RecordType type, tr::RecordSpace space,
                                     unsigned size, unsigned long long a, unsigned long long b,
                                     unsigned values_per_lane, bool leader_only, unsigned bulk_bytes) {
  auto* h = static_cast<TraceHeader*>(userdata);
  if (h == nullptr || h->enabled == 0) return;
  const unsigned block = linear_block();
  if (h->sample > 1 && block % h->sample != 0) return;
  const unsigned active = __activemask();
  const unsigned lane = lane_id();
  const unsigned leader = __ffs(active) - 1;
  const unsigned mask = leader_only ? (1U << leader) : active;
  const unsigned n = __popc(mask);
  const unsigned long long bytes = sizeof(RecordHeader) + 8ULL * n * values_per_lane;
  unsigned long long offset = 0;
  if (lane == leader) {
    offset = atomicAdd(&h->used, bytes);
    if (offset + bytes > h->capacity) {
      atomicAdd(&h->dropped_records, 1ULL);
      atomicAdd(&h->dropped_bytes, bytes);
      atomicMin(&h->valid_end, offset);  // bytes from here to capacity hold no complete record
      offset = ~0ULL;
    }
  }
  offset = __shfl_sync(active, offset, leader);
  if (offset == ~0ULL || ((mask >> lane) & 1U) == 0) return;
  char* record = reinterpret_cast<char*>(h + 1) + offset;
  if (lane == leader) {
    RecordHeader r;
    r.pc = pc;
    r.block = block;
    r.warp = static_cast<unsigned short>((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) / 32);
    r.type = type;
    r.space = space;
    r.mask = mask;
    r.size = static_cast<unsigned short>(size);
    r.address_count = static_cast<unsigned short>(n * values_per_lane);
    r.bulk_bytes = bulk_bytes;
    r.reserved = 0;
    *reinterpret_cast<RecordHeader*>(record) = r;
  }
  auto* values = reinterpret_cast<unsigned long long*>(record + sizeof(RecordHeader));
  const unsigned rank = __popc(mask & ((1U << lane) - 1U));
  if (values_per_lane > 0) values[rank] = a;
  if (values_per_lane > 1) values[n + rank] = b;
}

__device__ __forceinline__ tr::RecordType access_type(uint32_t flags) {
  const bool read = (flags & SANITIZER_MEMORY_DEVICE_FLAG_READ) != 0;
  const bool write = (flags & SANITIZER_MEMORY_DEVICE_FLAG_WRITE) != 0;
  return read && write ? tr::kAtomic : write ? tr::kStore : tr::kLoad;
}

__device__ __forceinline__ bool is_prefetch(uint32_t flags) {
  return (flags & SANITIZER_MEMORY_DEVICE_FLAG_PREFETCH) != 0;
}

}  // namespace

extern "C" __device__ __noinline__ SanitizerPatchResult memhier_global_access(void* userdata, uint64_t pc, void* ptr,
                                                                              uint32_t size, uint32_t flags,
                                                                              const void*) {
  if (!is_prefetch(flags))
    emit(userdata, pc, access_type(flags), tr::kGlobal, size, reinterpret_cast<unsigned long long>(ptr), 0, 1, false,
         0);
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult memhier_shared_access(void* userdata, uint64_t pc, void* ptr,
                                                                              uint32_t size, uint32_t flags,
                                                                              const void*) {
  emit(userdata, pc, access_type(flags), tr::kShared, size, reinterpret_cast<unsigned long long>(ptr), 0, 1, false, 0);
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult memhier_local_access(void* userdata, uint64_t pc, void* ptr,
                                                                             uint32_t size, uint32_t flags,
                                                                             const void*) {
  emit(userdata, pc, access_type(flags), tr::kLocal, size, reinterpret_cast<unsigned long long>(ptr), 0, 1, false, 0);
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult memhier_barrier(void* userdata, uint64_t pc, uint32_t, uint32_t,
                                                                        uint32_t) {
  emit(userdata, pc, tr::kBarrier, tr::kGlobal, 0, 0, 0, 0, false, 0);
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult memhier_memcpy_async(void* userdata, uint64_t pc, void* src,
                                                                             uint32_t dst, uint32_t size) {
  emit(userdata, pc, tr::kAsyncCopy, tr::kGlobal, size, reinterpret_cast<unsigned long long>(src), dst, 2, false, 0);
  return SANITIZER_PATCH_SUCCESS;
}

// Every active lane reports the same copy; one record from the lowest lane. Bits 0-15 of data: 16-byte blocks.
extern "C" __device__ __noinline__ SanitizerPatchResult memhier_bulk_copy(void* userdata, uint64_t pc, uint64_t src,
                                                                          uint32_t dst, uint32_t, uint32_t data,
                                                                          uint32_t) {
  emit(userdata, pc, tr::kBulkCopy, tr::kGlobal, 16, src, dst, 1, true, (data & 0xFFFFU) * 16U);
  return SANITIZER_PATCH_SUCCESS;
}
