#pragma once
// One CUDA kernel per description in traces/examples, with the same memory accesses in the same order (the YAML is the
// reference: any change to one is a change to both). Arithmetic is real so outputs can be checked on the CPU.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cuda/barrier>

namespace suite {
// Internal linkage: each case file instantiates the kernels it launches (and its own copy of c_table).
namespace {

using index_t = long long;

__global__ void coalesced_copy(const float* x, float* y, index_t n) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = x[i];
}
__global__ void strided_copy(const float* x, float* y, index_t n, int stride) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = x[i * stride];
}
// The bodies of the kernels validate/probe/suite_placement.cu also runs (with its own marks around them) are device
// functions of their own, inlined: the suite's kernels compile as before.
__device__ __forceinline__ void misaligned_copy_body(const float* x, float* y, index_t n, int offset) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = x[i + offset];
}
__global__ void misaligned_copy(const float* x, float* y, index_t n, int offset) {
  misaligned_copy_body(x, y, n, offset);
}
template <class V>
__global__ void vector_copy(const V* x, V* y, index_t count) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (i < count) y[i] = x[i];
}
constexpr float kDt = 0.01f;
__global__ void particles_aos(float* p, index_t n) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    float* q = p + 8 * i;
    float x = q[0], y = q[1], z = q[2], vx = q[3], vy = q[4], vz = q[5];
    q[0] = x + vx * kDt;
    q[1] = y + vy * kDt;
    q[2] = z + vz * kDt;
  }
}
__global__ void particles_soa(float* x, float* y, float* z, const float* vx, const float* vy, const float* vz,
                              index_t n) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    float a = x[i], b = y[i], c = z[i], u = vx[i], v = vy[i], w = vz[i];
    x[i] = a + u * kDt;
    y[i] = b + v * kDt;
    z[i] = c + w * kDt;
  }
}
__device__ __forceinline__ void random_gather_body(const int* idx, const float* in, float* out, index_t n) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[idx[i]];
}
__global__ void random_gather(const int* idx, const float* in, float* out, index_t n) {
  random_gather_body(idx, in, out, n);
}
__global__ void readonly_gather(const int* __restrict__ idx, const float* __restrict__ in, float* out, index_t n) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = __ldg(&in[__ldg(&idx[i])]);
}
__device__ __forceinline__ void transpose_naive_body(const float* in, float* out, int n) {
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) out[static_cast<index_t>(x) * n + y + j] = in[static_cast<index_t>(y + j) * n + x];
}
__global__ void transpose_naive(const float* in, float* out, int n) { transpose_naive_body(in, out, n); }
template <int kPitch>  // 32: tile[32][32], column reads conflict 32-way; 33: padded, conflict-free
__global__ void transpose_shared(const float* in, float* out, int n) {
  __shared__ float tile[32 * kPitch];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    tile[(threadIdx.y + j) * kPitch + threadIdx.x] = in[static_cast<index_t>(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    out[static_cast<index_t>(y + j) * n + x] = tile[threadIdx.x * kPitch + threadIdx.y + j];
}
__global__ void matmul_naive(const float* A, const float* B, float* C, int n) {
  int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row < n && col < n) {
    float acc = 0;
    for (int k = 0; k < n; ++k) acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
  }
}
__global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
  __shared__ float As[16][16], Bs[16][16];
  int tx = threadIdx.x, ty = threadIdx.y, row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  float acc = 0;
  for (int t = 0; t < n / 16; ++t) {
    As[ty][tx] = A[row * n + t * 16 + tx];
    Bs[ty][tx] = B[(t * 16 + ty) * n + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * n + col] = acc;
}
__global__ void reduction_shared(const float* in, float* out, index_t n) {
  __shared__ float sdata[256];
  unsigned tid = threadIdx.x;
  index_t i = blockIdx.x * static_cast<index_t>(512) + tid;
  float v = 0;
  if (i < n) v = in[i];
  if (i + 256 < n) v += in[i + 256];
  sdata[tid] = v;
  __syncthreads();
  for (unsigned s = 128; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = sdata[tid] + sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
__global__ void softmax_naive(const float* x, float* y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + static_cast<index_t>(r) * cols;
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);
  float s = 0;
  for (int c = 0; c < cols; ++c) s += __expf(xr[c] - m);
  float inv = 1.0f / s;
  for (int c = 0; c < cols; ++c) y[static_cast<index_t>(r) * cols + c] = __expf(xr[c] - m) * inv;
}
__device__ inline float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffU, v, o));
  return v;
}
__device__ inline float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffU, v, o);
  return v;
}
__global__ void softmax_optimized(const float* x, float* y, int cols) {  // blockDim 256, one block per row
  __shared__ float red[8];
  const float* xr = x + static_cast<index_t>(blockIdx.x) * cols;
  int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  float m = -INFINITY;
  for (int c = tid; c < cols; c += 256) m = fmaxf(m, xr[c]);
  m = warp_max(m);
  if (lane == 0) red[warp] = m;
  __syncthreads();
  m = warp_max(red[lane % 8]);
  __syncthreads();
  float s = 0;
  for (int c = tid; c < cols; c += 256) s += __expf(xr[c] - m);
  s = warp_sum(s);
  if (lane == 0) red[warp] = s;
  __syncthreads();
  float t = red[lane % 8];
  t += __shfl_xor_sync(0xffffffffU, t, 1);  // lanes 0-7 hold the 8 partials; sum them across each group of 8
  t += __shfl_xor_sync(0xffffffffU, t, 2);
  t += __shfl_xor_sync(0xffffffffU, t, 4);
  float inv = 1.0f / t;
  for (int c = tid; c < cols; c += 256) y[static_cast<index_t>(blockIdx.x) * cols + c] = __expf(xr[c] - m) * inv;
}
__global__ void histogram_shared(const int* data, unsigned* hist, index_t n) {
  __shared__ unsigned shist[256];
  unsigned tid = threadIdx.x;
  shist[tid] = 0;
  __syncthreads();
  for (index_t i = blockIdx.x * static_cast<index_t>(256) + tid; i < n; i += static_cast<index_t>(gridDim.x) * 256)
    atomicAdd(&shist[data[i]], 1U);
  __syncthreads();
  atomicAdd(&hist[tid], shist[tid]);
}
__device__ __forceinline__ void stencil_2d_body(const float* in, float* out, int n) {
  __shared__ float tile[18 * 18];
  int tx = threadIdx.x, ty = threadIdx.y, gx = blockIdx.x * 16 + tx, gy = blockIdx.y * 16 + ty;
  tile[(ty + 1) * 18 + tx + 1] = in[gy * n + gx];
  if (tx == 0 && gx > 0) tile[(ty + 1) * 18] = in[gy * n + gx - 1];
  if (tx == 15 && gx < n - 1) tile[(ty + 1) * 18 + 17] = in[gy * n + gx + 1];
  if (ty == 0 && gy > 0) tile[tx + 1] = in[(gy - 1) * n + gx];
  if (ty == 15 && gy < n - 1) tile[17 * 18 + tx + 1] = in[(gy + 1) * n + gx];
  __syncthreads();
  if (gx > 0 && gx < n - 1 && gy > 0 && gy < n - 1) {
    float c = tile[(ty + 1) * 18 + tx + 1], up = tile[ty * 18 + tx + 1], down = tile[(ty + 2) * 18 + tx + 1];
    float left = tile[(ty + 1) * 18 + tx], right = tile[(ty + 1) * 18 + tx + 2];
    out[gy * n + gx] = 0.2f * (c + up + down + left + right);
  }
}
__global__ void stencil_2d(const float* in, float* out, int n) { stencil_2d_body(in, out, n); }
__global__ void bank_conflict_stride(float* out, int stride, int reps) {
  __shared__ float s[8192];
  unsigned tid = threadIdx.x;
  for (int k = 0; k < 32; ++k) s[k * 256 + tid] = static_cast<float>(k * 256 + tid);
  __syncthreads();
  float acc = 0;
  for (int r = 0; r < reps; ++r) acc += s[(tid * stride + r) % 8192];
  out[blockIdx.x * 256 + tid] = acc;
}
__constant__ float c_table[1024];
__global__ void constant_broadcast(float* out, index_t n, int k_count) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  float acc = 0;
  for (int k = 0; k < k_count; ++k) acc += c_table[k];
  if (i < n) out[i] = acc;
}
__global__ void constant_divergent(float* out, index_t n, int k_count) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  int lane = threadIdx.x % 32;
  float acc = 0;
  for (int k = 0; k < k_count; ++k) acc += c_table[(lane * 32 + k) % 1024];
  if (i < n) out[i] = acc;
}
// d distinct addresses a warp load, one per 64-byte constant-cache line, all d lines within 2 KB.
__global__ void constant_distinct(float* out, index_t n, int k_count, int distinct) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  int lane = threadIdx.x % 32;
  float acc = 0;
  for (int k = 0; k < k_count; ++k) acc += c_table[(lane % distinct) * 16 + k % 16];
  if (i < n) out[i] = acc;
}
// Does nothing but mark each block done: launch overhead and block-scheduling cost, nothing else.
__global__ void empty_blocks(int* done) {
  if (threadIdx.x == 0) done[blockIdx.x] = static_cast<int>(blockIdx.x) + 1;
}
__global__ void register_spill(const float* in, float* out, index_t n) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float a[64];  // indexed by runtime values with the loops kept rolled: the compiler must place it in local memory
  float v = in[i];
#pragma unroll 1
  for (int k = 0; k < 64; ++k) a[k] = v * static_cast<float>(k);
  float acc = 0;
#pragma unroll 1
  for (int pass = 0; pass < 2; ++pass)
#pragma unroll 1
    for (int k = 0; k < 64; ++k) acc += a[(k + pass * 7) % 64];
  out[i] = acc;
}
__global__ void persisting_l2_window(const float* stream, const float* hot, float* out, index_t n, index_t hot_n) {
  index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = stream[i] + hot[i % hot_n];
}
__global__ void async_copy_pipeline(const float* x, float* out, int tiles) {  // blockDim 256, 4 KiB tiles
  __shared__ alignas(16) float buf[2 * 1024];
  unsigned tid = threadIdx.x;
  const float* base = x + static_cast<index_t>(blockIdx.x) * tiles * 1024;
  __pipeline_memcpy_async(&buf[tid * 4], &base[tid * 4], 16);
  __pipeline_commit();
  float acc = 0;
  for (int t = 0; t < tiles; ++t) {
    if (t + 1 < tiles)
      __pipeline_memcpy_async(&buf[((t + 1) % 2) * 1024 + tid * 4], &base[(t + 1) * 1024 + tid * 4], 16);
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    float4 v = *reinterpret_cast<const float4*>(&buf[(t % 2) * 1024 + tid * 4]);
    acc += v.x + v.y + v.z + v.w;
    __syncthreads();
  }
  out[blockIdx.x * 256 + tid] = acc;
}
__global__ void tma_bulk_copy(const float* x, float* out, int tiles) {  // blockDim 256, cp.async.bulk 4 KiB tiles
  using barrier = cuda::barrier<cuda::thread_scope_block>;
  __shared__ alignas(128) float buf[2 * 1024];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ barrier bar[2];
  unsigned tid = threadIdx.x;
  const float* base = x + static_cast<index_t>(blockIdx.x) * tiles * 1024;
  if (tid == 0) {
    init(&bar[0], blockDim.x);
    init(&bar[1], blockDim.x);
    cuda::device::experimental::fence_proxy_async_shared_cta();
  }
  __syncthreads();
  if (tid == 0) cuda::device::experimental::cp_async_bulk_global_to_shared(&buf[0], base, 4096, bar[0]);
  float acc = 0;
  for (int t = 0; t < tiles; ++t) {
    if (tid == 0 && t + 1 < tiles)
      cuda::device::experimental::cp_async_bulk_global_to_shared(&buf[((t + 1) % 2) * 1024], base + (t + 1) * 1024,
                                                                 4096, bar[(t + 1) % 2]);
    barrier::arrival_token token =
        tid == 0 ? cuda::device::barrier_arrive_tx(bar[t % 2], 1, 4096) : bar[t % 2].arrive();
    bar[t % 2].wait(std::move(token));
    float4 v = *reinterpret_cast<const float4*>(&buf[(t % 2) * 1024 + tid * 4]);
    acc += v.x + v.y + v.z + v.w;
    __syncthreads();
  }
  out[blockIdx.x * 256 + tid] = acc;
}

}  // namespace
}  // namespace suite
