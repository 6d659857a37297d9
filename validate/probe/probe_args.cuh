#pragma once
// What probes share that needs nothing of the model's headers: the runs argument and the persisting set-aside.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include "cuda_check.h"

namespace probe {

// The persisting lines reset (cudaCtxResetPersistingL2Cache) and the persisting set-aside asked as `bytes`
// (cudaDeviceSetLimit); what the device then grants (cudaDeviceGetLimit) into `granted`. 1 on a CUDA error (CHECK),
// else 0.
inline int set_aside(std::size_t bytes, std::size_t& granted) {
  CHECK(cudaCtxResetPersistingL2Cache());
  CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes));
  CHECK(cudaDeviceGetLimit(&granted, cudaLimitPersistingL2CacheSize));
  return 0;
}

// A probe's first argument, its timed runs a configuration (`fallback` when absent); 0, with `name`'s usage on stderr,
// when it is not at least 1.
inline int runs_arg(int argc, char** argv, const char* name, int fallback) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : fallback;
  if (runs < 1) std::fprintf(stderr, "usage: %s [runs >= 1]\n", name);
  return runs < 1 ? 0 : runs;
}

}  // namespace probe
