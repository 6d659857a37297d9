// Why does the suite's transpose_padded (n=4096) take 55.8 us on the H100 where a float4 copy of the same bytes and
// blocks takes 43.4 (validate/results/h100-2026-11-28-suite)? The model gives both about 45 us: the same DRAM bytes,
// rows opened for 28% of the transpose's accesses, which cost it 0.8 us (model/timing/timing.cpp).
//
// Its reads go well: blocks (bx, by) and (bx + 1, by), which run together, read neighbouring 128-byte pieces of the
// same rows. Its writes do not: those two blocks write rows 32 apart, at the same column, so the 132 blocks of a wave
// write 128-byte pieces 32 x 16 KiB = 512 KiB apart (the row pitch, 16 KiB, a power of two). This probe times, each
// after a 192 MiB read that empties the L2, as the suite's cold cases:
//   copy4     the float4 copy (the reference: 16384 blocks of 256 threads, 64 MiB read and written)
//   tile      32 x 32 tiles (32 x 8 threads, 4 rows a thread) copied in place through registers: the transpose's reads,
//             and writes laid out as its reads
//   tile_smem the same through shared memory and a barrier, as the transpose (tile[32][33])
//   transpose transpose_padded (tile[32][33]) with rows `pitch` floats apart
//   naive     transpose_naive with rows `pitch` floats apart
// each with the suite's pitch (4096 floats, 16 KiB) and with 4128 (16,512 bytes: a wave's writes 516 KiB apart, no
// longer a power of two); and the suite's own transpose_padded kernel (kernels/suite_kernels.cuh) at n=4096, which
// transpose at pitch 4096 must match.
// Output: one JSON object on stdout, every configuration's CUDA-event times (us, sorted) of `runs` launches (argument
// 1, default 20) after a warm-up.
// Build: nvcc -O2 -arch=sm_90 -I../../model/include tile_pitch.cu
#include <cuda_runtime.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "../../kernels/suite_kernels.cuh"
#include "cuda_check.h"
#include "probe_util.cuh"

namespace {

constexpr int kN = 4096;  // the matrix's side, in floats

__global__ void copy4(const float4* in, float4* out, long long count) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < count) out[i] = in[i];
}

__global__ void tile(const float* in, float* out, int pitch) {
  const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  float v[4];
  for (int j = 0; j < 4; ++j) v[j] = in[static_cast<long long>(y + 8 * j) * pitch + x];
  for (int j = 0; j < 4; ++j) out[static_cast<long long>(y + 8 * j) * pitch + x] = v[j];
}

__global__ void tile_smem(const float* in, float* out, int pitch) {
  __shared__ float t[32 * 33];
  const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    t[(threadIdx.y + j) * 33 + threadIdx.x] = in[static_cast<long long>(y + j) * pitch + x];
  __syncthreads();
  for (int j = 0; j < 32; j += 8)
    out[static_cast<long long>(y + j) * pitch + x] = t[(threadIdx.y + j) * 33 + threadIdx.x];
}

__global__ void transpose(const float* in, float* out, int pitch) {  // transpose_shared<33> with its own pitch
  __shared__ float t[32 * 33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    t[(threadIdx.y + j) * 33 + threadIdx.x] = in[static_cast<long long>(y + j) * pitch + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    out[static_cast<long long>(y + j) * pitch + x] = t[threadIdx.x * 33 + threadIdx.y + j];
}

__global__ void naive(const float* in, float* out, int pitch) {
  const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    out[static_cast<long long>(x) * pitch + y + j] = in[static_cast<long long>(y + j) * pitch + x];
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = probe::runs_arg(argc, argv, "tile_pitch", 20);
  if (runs == 0) return 2;
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  const int pitches[] = {kN, kN + 32};
  const long long floats = static_cast<long long>(kN + 32) * kN;  // the larger pitch's matrix
  const long long evict_n = 48LL << 20;                           // 192 MiB of floats
  float *in = nullptr, *out = nullptr, *big = nullptr, *sink = nullptr;
  CHECK(cudaMalloc(&in, sizeof(float) * floats));
  CHECK(cudaMalloc(&out, sizeof(float) * floats));
  CHECK(cudaMalloc(&big, sizeof(float) * evict_n));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  probe::fill<<<1024, 256>>>(in, floats, 977);
  probe::fill<<<1024, 256>>>(big, evict_n, 1013);
  CHECK(cudaDeviceSynchronize());
  auto evict = [&] { probe::evict_l2<<<4 * p.multiProcessorCount, 1024>>>(big, evict_n, sink); };
  const dim3 grid(kN / 32, kN / 32), block(32, 8);
  struct Config {
    std::string name;
    int pitch;
    std::function<void()> launch;
  };
  std::vector<Config> configs;
  configs.push_back({"copy4", kN, [&] {
                       const long long count = static_cast<long long>(kN) * kN / 4;
                       copy4<<<static_cast<unsigned>(count / 256), 256>>>(reinterpret_cast<const float4*>(in),
                                                                          reinterpret_cast<float4*>(out), count);
                     }});
  configs.push_back({"suite_transpose_padded", kN, [&] { suite::transpose_shared<33><<<grid, block>>>(in, out, kN); }});
  for (const int pitch : pitches) {
    configs.push_back({"tile", pitch, [&, pitch] { tile<<<grid, block>>>(in, out, pitch); }});
    configs.push_back({"tile_smem", pitch, [&, pitch] { tile_smem<<<grid, block>>>(in, out, pitch); }});
    configs.push_back({"transpose", pitch, [&, pitch] { transpose<<<grid, block>>>(in, out, pitch); }});
    configs.push_back({"naive", pitch, [&, pitch] { naive<<<grid, block>>>(in, out, pitch); }});
  }
  std::printf("{\n  \"name\": \"%s\",\n  \"sms\": %d,\n  \"n\": %d,\n  \"configs\": [\n", p.name, p.multiProcessorCount,
              kN);
  unsigned long long seed = 1;
  for (std::size_t c = 0; c < configs.size(); ++c) {
    std::vector<float> us;
    if (probe::timed_runs(
            runs, seed, [&](unsigned long long) { configs[c].launch(); }, us, evict) != 0)
      return 1;
    std::printf("%s    {\"name\": \"%s\", \"pitch\": %d, \"us\": [", c ? ",\n" : "", configs[c].name.c_str(),
                configs[c].pitch);
    for (std::size_t i = 0; i < us.size(); ++i) std::printf("%s%.3f", i ? ", " : "", us[i]);
    std::printf("]}");
  }
  std::printf("\n  ]\n}\n");
  return 0;
}
