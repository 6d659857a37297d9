#pragma once
// CHECK(call): on a CUDA error, print where and what, and return 1 from the calling function (probe mains).
#include <cuda_runtime.h>

#include <cstdio>

#define CHECK(x)                                                                               \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)
