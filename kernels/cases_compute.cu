// Suite cases for the shared-memory, matrix, reduction, softmax, histogram, stencil and asynchronous-copy kernels.
#include <algorithm>
#include <cmath>
#include <string>

#include "memhier/urand.h"
#include "suite.h"
#include "suite_kernels.cuh"

namespace suite {
namespace {

std::string mismatch(const char* what, std::size_t i, double got, double want) {
  return std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(got) + ", expected " +
         std::to_string(want);
}

struct Square {  // n x n inputs A (and B), output C
  int n = 0;
  DeviceArray<float> a, b, c;
  std::vector<float> ha, hb;
};

void square_setup(Square& s, int n, bool two_inputs) {
  s.n = n;
  const auto count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  s.ha = random_floats(count, 21);
  s.a.allocate(count);
  s.a.upload(s.ha);
  if (two_inputs) {
    s.hb = random_floats(count, 22);
    s.b.allocate(count);
    s.b.upload(s.hb);
  }
  s.c.allocate(count);
}

Case transpose_case(const char* kernel, int n, const char* regime, bool warm) {
  return make_case<Square>(
      kernel, "n=" + std::to_string(n), regime, warm, [=](Square& s) { square_setup(s, n, false); },
      [kernel = std::string(kernel)](Square& s, cudaStream_t st) {
        const dim3 grid(static_cast<unsigned>(s.n / 32), static_cast<unsigned>(s.n / 32)), block(32, 8);
        if (kernel == "transpose_naive") transpose_naive<<<grid, block, 0, st>>>(s.a.get(), s.c.get(), s.n);
        if (kernel == "transpose_tiled") transpose_shared<32><<<grid, block, 0, st>>>(s.a.get(), s.c.get(), s.n);
        if (kernel == "transpose_padded") transpose_shared<33><<<grid, block, 0, st>>>(s.a.get(), s.c.get(), s.n);
      },
      [](Square& s) -> std::string {
        auto c = s.c.download();
        const auto n = static_cast<std::size_t>(s.n);
        for (std::size_t y = 0; y < n; ++y)
          for (std::size_t x = 0; x < n; ++x)
            if (c[x * n + y] != s.ha[y * n + x]) return mismatch("out", x * n + y, c[x * n + y], s.ha[y * n + x]);
        return "";
      });
}

Case matmul_case(bool tiled, int n, const char* regime, bool warm) {
  return make_case<Square>(
      tiled ? "matmul_tiled" : "matmul_naive", "n=" + std::to_string(n), regime, warm,
      [=](Square& s) { square_setup(s, n, true); },
      [tiled](Square& s, cudaStream_t st) {
        const dim3 grid(static_cast<unsigned>((s.n + 15) / 16), static_cast<unsigned>((s.n + 15) / 16)), block(16, 16);
        if (tiled)
          matmul_tiled<<<grid, block, 0, st>>>(s.a.get(), s.b.get(), s.c.get(), s.n);
        else
          matmul_naive<<<grid, block, 0, st>>>(s.a.get(), s.b.get(), s.c.get(), s.n);
      },
      [](Square& s) -> std::string {
        auto c = s.c.download();
        const auto n = static_cast<std::size_t>(s.n);
        for (std::size_t e = 0; e < n * n; e += 1 + n * n / 2048) {
          const std::size_t row = e / n, col = e % n;
          double want = 0;
          for (std::size_t k = 0; k < n; ++k) want += static_cast<double>(s.ha[row * n + k]) * s.hb[k * n + col];
          if (!close(c[e], want)) return mismatch("C", e, c[e], want);
        }
        return "";
      });
}

struct Vector {
  long long n = 0;
  int p = 0, q = 0;  // kernel-specific sizes (rows/cols, stride/reps, blocks)
  DeviceArray<float> in, out;
  DeviceArray<int> data;
  DeviceArray<unsigned> hist;
  std::vector<float> h;
};

Case reduction_case() {
  const long long n = 1LL << 24;
  return make_case<Vector>(
      "reduction_shared", "n=" + pow2(24), "hbm", false,
      [=](Vector& s) {
        s.n = n;
        s.h = random_floats(static_cast<std::size_t>(n), 23);
        s.in.allocate(s.h.size());
        s.in.upload(s.h);
        s.out.allocate(static_cast<std::size_t>((n + 511) / 512));
      },
      [](Vector& s, cudaStream_t st) {
        reduction_shared<<<blocks_for(s.n, 512), 256, 0, st>>>(s.in.get(), s.out.get(), s.n);
      },
      [](Vector& s) -> std::string {
        auto out = s.out.download();
        for (std::size_t b = 0; b < out.size(); ++b) {
          double want = 0;
          for (std::size_t i = b * 512; i < std::min(s.h.size(), b * 512 + 512); ++i) want += s.h[i];
          if (!close(out[b], want)) return mismatch("out", b, out[b], want);
        }
        return "";
      });
}

Case softmax_case(bool optimized) {
  const int rows = 8192, cols = 1024;
  return make_case<Vector>(
      optimized ? "softmax_optimized" : "softmax_naive", "rows=8192 cols=1024", "hbm", false,
      [=](Vector& s) {
        s.p = rows;
        s.q = cols;
        s.h = random_floats(static_cast<std::size_t>(rows) * cols, 24);
        s.in.allocate(s.h.size());
        s.in.upload(s.h);
        s.out.allocate(s.h.size());
      },
      [optimized](Vector& s, cudaStream_t st) {
        if (optimized)
          softmax_optimized<<<static_cast<unsigned>(s.p), 256, 0, st>>>(s.in.get(), s.out.get(), s.q);
        else
          softmax_naive<<<blocks_for(s.p, 128), 128, 0, st>>>(s.in.get(), s.out.get(), s.p, s.q);
      },
      [](Vector& s) -> std::string {
        auto y = s.out.download();
        const auto cols = static_cast<std::size_t>(s.q);
        for (std::size_t r = 0; r < static_cast<std::size_t>(s.p); r += 37) {
          const float* x = &s.h[r * cols];
          const double m = *std::max_element(x, x + cols);
          double sum = 0;
          for (std::size_t c = 0; c < cols; ++c) sum += std::exp(x[c] - m);
          for (std::size_t c = 0; c < cols; ++c)
            if (!close(y[r * cols + c], std::exp(x[c] - m) / sum, 1e-3))
              return mismatch("y", r * cols + c, y[r * cols + c], std::exp(x[c] - m) / sum);
        }
        return "";
      });
}

Case histogram_case() {
  const long long n = 1LL << 24;
  return make_case<Vector>(
      "histogram_shared", "n=" + pow2(24) + " seed=7 blocks=1024", "hbm", false,
      [=](Vector& s) {
        s.n = n;
        std::vector<int> d(static_cast<std::size_t>(n));
        for (long long i = 0; i < n; ++i)
          d[static_cast<std::size_t>(i)] =
              static_cast<int>(memhier::urand(7, static_cast<unsigned long long>(i), 0, 256));
        s.data.allocate(d.size());
        s.data.upload(d);
        s.hist.allocate(256);
        s.hist.zero();
      },
      [](Vector& s, cudaStream_t st) { histogram_shared<<<1024, 256, 0, st>>>(s.data.get(), s.hist.get(), s.n); },
      [](Vector& s) -> std::string {
        auto hist = s.hist.download();
        std::vector<unsigned> want(256, 0);
        for (long long i = 0; i < s.n; ++i)
          ++want[static_cast<std::size_t>(memhier::urand(7, static_cast<unsigned long long>(i), 0, 256))];
        for (std::size_t b = 0; b < 256; ++b)
          if (hist[b] != want[b]) return mismatch("hist", b, hist[b], want[b]);
        return "";
      });
}

Case stencil_case() {
  const int n = 2048;
  return make_case<Square>(
      "stencil_2d", "n=2048", "hbm", false, [=](Square& s) { square_setup(s, n, false); },
      [](Square& s, cudaStream_t st) {
        const dim3 grid(static_cast<unsigned>(s.n / 16), static_cast<unsigned>(s.n / 16)), block(16, 16);
        stencil_2d<<<grid, block, 0, st>>>(s.a.get(), s.c.get(), s.n);
      },
      [](Square& s) -> std::string {
        auto out = s.c.download();
        const auto n = static_cast<std::size_t>(s.n);
        for (std::size_t y = 1; y + 1 < n; y += 7)
          for (std::size_t x = 1; x + 1 < n; ++x) {
            const auto& a = s.ha;
            const float want =
                0.2f * (a[y * n + x] + a[(y - 1) * n + x] + a[(y + 1) * n + x] + a[y * n + x - 1] + a[y * n + x + 1]);
            if (!close(out[y * n + x], want, 1e-5)) return mismatch("out", y * n + x, out[y * n + x], want);
          }
        return "";
      });
}

Case bank_case(int stride) {
  return make_case<Vector>(
      "bank_conflict_stride", "stride=" + std::to_string(stride) + " reps=64 blocks=1056", "l1", false,
      [=](Vector& s) {
        s.p = stride;
        s.q = 64;
        s.out.allocate(1056 * 256);
      },
      [](Vector& s, cudaStream_t st) { bank_conflict_stride<<<1056, 256, 0, st>>>(s.out.get(), s.p, s.q); },
      [](Vector& s) -> std::string {
        auto out = s.out.download();
        for (std::size_t i = 0; i < out.size(); i += 53) {
          const std::size_t tid = i % 256;
          double want = 0;
          for (std::size_t r = 0; r < static_cast<std::size_t>(s.q); ++r)
            want += static_cast<double>((tid * static_cast<std::size_t>(s.p) + r) % 8192);
          if (!close(out[i], want)) return mismatch("out", i, out[i], want);
        }
        return "";
      });
}

Case async_case(bool tma) {
  const int blocks = 264, tiles = 64;
  return make_case<Vector>(
      tma ? "tma_bulk_copy" : "async_copy_pipeline", "blocks=264 tiles=64", "hbm", false,
      [=](Vector& s) {
        s.p = blocks;
        s.q = tiles;
        s.h = random_floats(static_cast<std::size_t>(blocks) * tiles * 1024, 25);
        s.in.allocate(s.h.size());
        s.in.upload(s.h);
        s.out.allocate(static_cast<std::size_t>(blocks) * 256);
      },
      [tma](Vector& s, cudaStream_t st) {
        if (tma)
          tma_bulk_copy<<<static_cast<unsigned>(s.p), 256, 0, st>>>(s.in.get(), s.out.get(), s.q);
        else
          async_copy_pipeline<<<static_cast<unsigned>(s.p), 256, 0, st>>>(s.in.get(), s.out.get(), s.q);
      },
      [](Vector& s) -> std::string {
        auto out = s.out.download();
        for (std::size_t i = 0; i < out.size(); ++i) {
          const std::size_t b = i / 256, tid = i % 256;
          double want = 0;
          for (std::size_t t = 0; t < static_cast<std::size_t>(s.q); ++t)
            for (std::size_t e = 0; e < 4; ++e)
              want += s.h[(b * static_cast<std::size_t>(s.q) + t) * 1024 + tid * 4 + e];
          if (!close(out[i], want)) return mismatch("out", i, out[i], want);
        }
        return "";
      });
}

}  // namespace

std::vector<Case> compute_cases() {
  std::vector<Case> c;
  c.push_back(transpose_case("transpose_naive", 4096, "hbm", false));
  c.push_back(transpose_case("transpose_tiled", 4096, "hbm", false));
  c.push_back(transpose_case("transpose_tiled", 1024, "l2", true));
  c.push_back(transpose_case("transpose_padded", 4096, "hbm", false));
  c.push_back(matmul_case(false, 256, "l1", true));
  c.push_back(matmul_case(false, 1024, "l2", true));
  c.push_back(matmul_case(true, 256, "l1", true));
  c.push_back(matmul_case(true, 1024, "l2", true));
  c.push_back(reduction_case());
  c.push_back(softmax_case(false));
  c.push_back(softmax_case(true));
  c.push_back(histogram_case());
  c.push_back(stencil_case());
  for (int stride : {1, 2, 32}) c.push_back(bank_case(stride));
  c.push_back(async_case(false));
  c.push_back(async_case(true));
  return c;
}

}  // namespace suite
