// What the CUDA runtime accepts and refuses for L2 residency control: the source of memhier simulate's checks of
// --set-aside and --window (and of a trace's windows) against the arch's l2.persisting_max and l2.max_window_size.
//
// For each request it prints the runtime's answer and what is then in effect:
//   - cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, S) for S from 0 to past persistingL2CacheMaxSize, then
//     cudaDeviceGetLimit (the set-aside granted);
//   - cudaStreamSetAttribute(cudaStreamAttributeAccessPolicyWindow) with num_bytes from 0 to past
//     accessPolicyMaxWindowSize and hitRatio outside [0, 1], then cudaStreamGetAttribute (the window in effect);
//   - the same windows as a launch attribute (cudaLaunchKernelEx), whose answer is the launch's.
// Usage: residency_limits. Output: one JSON object on stdout.
// Build: nvcc -O2 -arch=sm_90 residency_limits.cu -o residency_limits
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "cuda_check.h"

__global__ void touch(float* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1.0F;
}

namespace {

const char* name(cudaError_t e) { return cudaGetErrorName(e); }

}  // namespace

int main() {
  int dev = 0;
  CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, dev));
  int driver = 0, runtime = 0;
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  const std::size_t max_set_aside = static_cast<std::size_t>(p.persistingL2CacheMaxSize);
  const std::size_t max_window = static_cast<std::size_t>(p.accessPolicyMaxWindowSize);
  std::printf("{\n  \"name\": \"%s\",\n  \"driver\": %d,\n  \"runtime\": %d,\n", p.name, driver, runtime);
  std::printf("  \"l2CacheSize\": %d,\n  \"persistingL2CacheMaxSize\": %zu,\n  \"accessPolicyMaxWindowSize\": %zu,\n",
              p.l2CacheSize, max_set_aside, max_window);

  const std::size_t mib = std::size_t{1} << 20U;
  const std::size_t set_asides[] = {0,        4 * mib,   max_set_aside - 1, max_set_aside, max_set_aside + 1,
                                    64 * mib, 1024 * mib};
  std::printf("  \"set_aside\": [\n");
  for (std::size_t i = 0; i < sizeof(set_asides) / sizeof(set_asides[0]); ++i) {
    const cudaError_t e = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_asides[i]);
    std::size_t granted = 0;
    CHECK(cudaDeviceGetLimit(&granted, cudaLimitPersistingL2CacheSize));
    std::printf("    {\"requested\": %zu, \"result\": \"%s\", \"granted\": %zu}%s\n", set_asides[i], name(e), granted,
                i + 1 < sizeof(set_asides) / sizeof(set_asides[0]) ? "," : "");
  }
  std::printf("  ],\n");
  CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 4 * mib));

  const int n = 1 << 20;
  float* buf = nullptr;
  CHECK(cudaMalloc(&buf, 512 * mib));
  CHECK(cudaMemset(buf, 0, 512 * mib));
  struct Window {
    std::size_t bytes;
    float hit_ratio;
    cudaAccessProperty hit = cudaAccessPropertyPersisting;
    cudaAccessProperty miss = cudaAccessPropertyStreaming;
  };
  const Window windows[] = {{0, 1.0F},
                            {mib, 1.0F},
                            {max_window - 4096, 1.0F},
                            {max_window, 1.0F},
                            {max_window + 4096, 1.0F},
                            {256 * mib, 1.0F},
                            {mib, 1.5F},
                            {mib, -0.1F},
                            // The runtime API's documentation: missProp "must be either NORMAL or STREAMING".
                            {mib, 0.5F, cudaAccessPropertyPersisting, cudaAccessPropertyPersisting},
                            {mib, 0.5F, cudaAccessPropertyPersisting, cudaAccessPropertyNormal},
                            {mib, 0.5F, cudaAccessPropertyStreaming, cudaAccessPropertyNormal},
                            {mib, 0.5F, cudaAccessPropertyNormal, cudaAccessPropertyStreaming}};
  auto prop = [](cudaAccessProperty p) {
    return p == cudaAccessPropertyPersisting ? "persisting" : p == cudaAccessPropertyStreaming ? "streaming" : "normal";
  };
  const std::size_t count = sizeof(windows) / sizeof(windows[0]);
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreate(&s));
  std::printf("  \"stream_window\": [\n");
  for (std::size_t i = 0; i < count; ++i) {
    cudaStreamAttrValue none{};  // start each from no window
    CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &none));
    cudaStreamAttrValue v{};
    v.accessPolicyWindow.base_ptr = buf;
    v.accessPolicyWindow.num_bytes = windows[i].bytes;
    v.accessPolicyWindow.hitRatio = windows[i].hit_ratio;
    v.accessPolicyWindow.hitProp = windows[i].hit;
    v.accessPolicyWindow.missProp = windows[i].miss;
    const cudaError_t e = cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v);
    cudaGetLastError();
    cudaStreamAttrValue back{};
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &back));
    touch<<<n / 256, 256, 0, s>>>(buf, n);
    const cudaError_t launch = cudaGetLastError();
    const cudaError_t sync = cudaStreamSynchronize(s);
    std::printf(
        "    {\"num_bytes\": %zu, \"hit_ratio\": %.2f, \"hit_prop\": \"%s\", \"miss_prop\": \"%s\", \"result\": "
        "\"%s\", "
        "\"in_effect_num_bytes\": %zu, \"in_effect_hit_ratio\": %.2f, \"launch\": \"%s\", \"sync\": \"%s\"}%s\n",
        windows[i].bytes, windows[i].hit_ratio, prop(windows[i].hit), prop(windows[i].miss), name(e),
        back.accessPolicyWindow.num_bytes, back.accessPolicyWindow.hitRatio, name(launch), name(sync),
        i + 1 < count ? "," : "");
  }
  std::printf("  ],\n");

  std::printf("  \"launch_window\": [\n");
  for (std::size_t i = 0; i < count; ++i) {
    cudaLaunchAttribute a{};
    a.id = cudaLaunchAttributeAccessPolicyWindow;
    a.val.accessPolicyWindow.base_ptr = buf;
    a.val.accessPolicyWindow.num_bytes = windows[i].bytes;
    a.val.accessPolicyWindow.hitRatio = windows[i].hit_ratio;
    a.val.accessPolicyWindow.hitProp = windows[i].hit;
    a.val.accessPolicyWindow.missProp = windows[i].miss;
    cudaLaunchConfig_t c{};
    c.gridDim = dim3(n / 256);
    c.blockDim = dim3(256);
    c.stream = s;
    c.attrs = &a;
    c.numAttrs = 1;
    const cudaError_t e = cudaLaunchKernelEx(&c, touch, buf, n);
    cudaGetLastError();
    const cudaError_t sync = cudaStreamSynchronize(s);
    std::printf(
        "    {\"num_bytes\": %zu, \"hit_ratio\": %.2f, \"hit_prop\": \"%s\", \"miss_prop\": \"%s\", \"result\": "
        "\"%s\", "
        "\"sync\": \"%s\"}%s\n",
        windows[i].bytes, windows[i].hit_ratio, prop(windows[i].hit), prop(windows[i].miss), name(e), name(sync),
        i + 1 < count ? "," : "");
  }
  std::printf("  ]\n}\n");
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(buf));
  CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
  return 0;
}
