// Evicts the working set of the previous run from L2 between timed runs: reads a buffer several times the L2 size.
// Reading (not memset) leaves clean lines behind, so the next kernel pays no write-back of the flush itself.
#include "suite.h"

namespace suite {
namespace {

__global__ void read_all(const float4* p, long long count, float* sink) {
  float acc = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float4 v = p[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == -1.0f) *sink = acc;  // never true for the zero-filled buffer; keeps the loads
}

}  // namespace

L2Flusher::L2Flusher() {
  int device = 0, l2 = 0;
  SUITE_CHECK(cudaGetDevice(&device));
  SUITE_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  m_buffer.allocate(4 * static_cast<std::size_t>(l2) / sizeof(float) + 4);
  m_buffer.zero();
}

void L2Flusher::flush(cudaStream_t stream) {
  read_all<<<1024, 256, 0, stream>>>(reinterpret_cast<const float4*>(m_buffer.get()),
                                     static_cast<long long>(m_buffer.size() / 4 - 1),
                                     m_buffer.get() + m_buffer.size() - 1);
  SUITE_CHECK(cudaGetLastError());
}

}  // namespace suite
