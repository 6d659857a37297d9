#pragma once
// The validation suite's cases: one kernel of suite_kernels.cuh at one problem size, with the description and
// parameters memhier predicts it from. The runner (runner.cu) times them; ncu and the tracer run them once.
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace suite {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void check_cuda(cudaError_t e, const char* what, const char* file, int line);
#define SUITE_CHECK(x) ::suite::check_cuda((x), #x, __FILE__, __LINE__)

// A device array that frees itself; inputs are filled on the host and copied once.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) { allocate(n); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(m_p); }
  void allocate(std::size_t n) {
    cudaFree(m_p);
    m_p = nullptr;
    m_n = n;
    SUITE_CHECK(cudaMalloc(&m_p, n * sizeof(T)));
  }
  T* get() const { return m_p; }
  std::size_t size() const { return m_n; }
  std::size_t bytes() const { return m_n * sizeof(T); }
  void upload(const std::vector<T>& h) { SUITE_CHECK(cudaMemcpy(m_p, h.data(), bytes(), cudaMemcpyHostToDevice)); }
  void zero() { SUITE_CHECK(cudaMemset(m_p, 0, bytes())); }
  std::vector<T> download() const {
    std::vector<T> h(m_n);
    SUITE_CHECK(cudaMemcpy(h.data(), m_p, bytes(), cudaMemcpyDeviceToHost));
    return h;
  }

 private:
  T* m_p = nullptr;
  std::size_t m_n = 0;
};

// Random non-zero floats in [0.5, 1.5), a pure function of (seed, i).
std::vector<float> random_floats(std::size_t n, unsigned long long seed);
// Relative comparison for sums computed in a different order on the CPU.
bool close(double got, double want, double rel = 1e-3);

struct Case {
  std::string kernel;  // the example description in traces/examples (and the CUDA kernel's name)
  std::string params;  // `memhier --set` assignments that make the description match this case, space-separated
  std::string regime;  // where the working set lives: l1, l2 or hbm
  bool warm = false;   // about cache reuse: runs back to back without flushing L2 in between
  int launches = 1;    // kernel launches per run (the description's `launches:`)
  std::function<void()> setup;            // allocate and fill inputs
  std::function<void(cudaStream_t)> run;  // one run: `launches` kernel launches on the stream
  std::function<std::string()> check;     // after one run: "" when the output matches the CPU reference
  std::function<void()> teardown;         // free device memory
  std::string id() const { return params.empty() ? kernel : kernel + " " + params; }
};

// Wraps a case whose state S (device arrays, sizes) lives from setup to teardown.
template <class S>
Case make_case(std::string kernel, std::string params, std::string regime, bool warm, std::function<void(S&)> setup,
               std::function<void(S&, cudaStream_t)> run, std::function<std::string(S&)> check, int launches = 1) {
  auto holder = std::make_shared<std::unique_ptr<S>>();
  Case c;
  c.kernel = std::move(kernel);
  c.params = std::move(params);
  c.regime = std::move(regime);
  c.warm = warm;
  c.launches = launches;
  c.setup = [holder, setup] {
    *holder = std::make_unique<S>();
    setup(**holder);
  };
  c.run = [holder, run](cudaStream_t s) { run(**holder, s); };
  c.check = [holder, check] { return check(**holder); };
  c.teardown = [holder] { holder->reset(); };
  return c;
}

inline unsigned blocks_for(long long threads, int block) {
  return static_cast<unsigned>((threads + block - 1) / block);
}
inline std::string pow2(int e) { return "1<<" + std::to_string(e); }

// Evicts L2 between timed runs of cases that are not about reuse.
class L2Flusher {
 public:
  L2Flusher();
  void flush(cudaStream_t stream);

 private:
  DeviceArray<float> m_buffer;
};

std::vector<Case> memory_cases();   // copies, gathers, particles, constant, spill, persisting window
std::vector<Case> compute_cases();  // transposes, matmul, reduction, softmax, histogram, stencil, banks, async, TMA
std::vector<Case> make_cases();

}  // namespace suite
