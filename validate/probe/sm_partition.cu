// Which SMs share an L2 partition: an SM reads a line homed in its own partition faster than one homed in the other.
//
// One block a SM (the first block that finds its SM unclaimed does the work; the others leave) chases a pointer that
// points to itself with ld.global.cg (L2 only, no L1) 256 times, for each of 16 lines 16 KiB apart, and records the
// SM cycles per load. Each line's latency splits the SMs in two groups (near and far for that line's home), so the
// SMs' grouping is the partition map, up to the name of the partition. Output: one JSON object on stdout, the
// cycles per load by SM and line. Build: nvcc -O2 -arch=sm_90 sm_partition.cu -o sm_partition
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "cuda_check.h"
#include "sm_clock.cuh"

constexpr int kLines = 16;
constexpr int kChase = 256;
constexpr int kStrideWords = 1024;  // lines 2 x 1024 words (16 KiB) apart

__global__ void chase(unsigned long long* const* lines, unsigned* claimed, float* cycles, unsigned long long* sink) {
  if (threadIdx.x != 0) return;
  const unsigned sm = smid();
  if (atomicExch(&claimed[sm], 1U) != 0) return;
  unsigned long long acc = 0;
  for (int l = 0; l < kLines; ++l) {
    const unsigned long long* p = lines[l];
    for (int w = 0; w < 16; ++w) p = reinterpret_cast<const unsigned long long*>(__ldcg(p));  // warm up
    const long long t0 = clock64();
    for (int i = 0; i < kChase; ++i) p = reinterpret_cast<const unsigned long long*>(__ldcg(p));
    const long long t1 = clock64();
    acc += reinterpret_cast<unsigned long long>(p);
    cycles[sm * kLines + l] = static_cast<float>(t1 - t0) / kChase;
  }
  sink[sm] = acc;
}

int main() {
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  const int sms = p.multiProcessorCount;
  unsigned long long* buf = nullptr;
  CHECK(cudaMalloc(&buf, sizeof(unsigned long long) * kStrideWords * kLines * 2));
  std::vector<unsigned long long> h(static_cast<std::size_t>(kStrideWords) * kLines * 2, 0);
  std::vector<unsigned long long*> lines(kLines);
  for (int l = 0; l < kLines; ++l) {
    lines[l] = buf + static_cast<std::size_t>(l) * kStrideWords * 2;
    h[static_cast<std::size_t>(l) * kStrideWords * 2] = reinterpret_cast<unsigned long long>(lines[l]);  // to itself
  }
  CHECK(cudaMemcpy(buf, h.data(), h.size() * sizeof(unsigned long long), cudaMemcpyHostToDevice));
  unsigned long long** dlines = nullptr;
  unsigned* claimed = nullptr;
  float* cycles = nullptr;
  unsigned long long* sink = nullptr;
  CHECK(cudaMalloc(&dlines, kLines * sizeof(void*)));
  CHECK(cudaMemcpy(dlines, lines.data(), kLines * sizeof(void*), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&claimed, sms * sizeof(unsigned)));
  CHECK(cudaMalloc(&cycles, sms * kLines * sizeof(float)));
  CHECK(cudaMalloc(&sink, sms * sizeof(unsigned long long)));
  std::printf("{\n  \"name\": \"%s\",\n  \"sms\": %d,\n  \"lines\": %d,\n  \"runs\": [", p.name, sms, kLines);
  for (int r = 0; r < 3; ++r) {
    CHECK(cudaMemset(claimed, 0, sms * sizeof(unsigned)));
    CHECK(cudaMemset(cycles, 0, sms * kLines * sizeof(float)));
    chase<<<sms * 8, 32>>>(dlines, claimed, cycles, sink);  // 8 blocks a SM fit: every SM gets one
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<float> c(static_cast<std::size_t>(sms) * kLines);
    CHECK(cudaMemcpy(c.data(), cycles, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("%s\n    [", r == 0 ? "" : ",");
    for (int s = 0; s < sms; ++s) {
      std::printf("%s\n      [", s == 0 ? "" : ",");
      for (int l = 0; l < kLines; ++l)
        std::printf("%s%.1f", l == 0 ? "" : ",", c[static_cast<std::size_t>(s) * kLines + l]);
      std::printf("]");
    }
    std::printf("\n    ]");
  }
  std::printf("\n  ]\n}\n");
  return 0;
}
