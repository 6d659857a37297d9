// Helpers shared by the suite's cases: CUDA error checks, deterministic inputs, tolerant comparison, the case list.
#include <algorithm>
#include <cmath>
#include <string>

#include "memhier/urand.h"
#include "suite.h"

namespace suite {

void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess)
    throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " + cudaGetErrorString(e));
}

std::vector<float> random_floats(std::size_t n, unsigned long long seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = 0.5f + static_cast<float>(memhier::urand_bits(seed, i) >> 40U) / static_cast<float>(1U << 24U);
  return v;
}

bool close(double got, double want, double rel) { return std::abs(got - want) <= rel * std::max(1.0, std::abs(want)); }

std::vector<Case> make_cases() {
  std::vector<Case> all = memory_cases();
  for (Case& c : compute_cases()) all.push_back(std::move(c));
  return all;
}

}  // namespace suite
