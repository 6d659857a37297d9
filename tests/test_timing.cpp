// Timing model on hand-checkable cases, with the H100 file's constants: effective DRAM 2.55 TB/s (fitted), DRAM latency 675
// cycles at 1980 MHz, launch overhead 4.62 us (fitted), shared memory 1 wavefront per clock per SM on 132 SMs.
#include <doctest/doctest.h>

#include "memhier/arch_loader.h"
#include "memhier/calibrate.h"
#include "memhier/timing.h"
#include "test_support.h"

namespace {

using namespace memhier;

Arch h100() { return load_arch_file(test::arch_dir() / "h100.yaml"); }

KernelSim kernel(std::uint64_t blocks, double warps_per_sm) {
  KernelSim k;
  k.counters.blocks = blocks;
  k.achieved_warps_per_sm = warps_per_sm;
  k.occupancy.blocks_per_sm = 1;
  return k;
}

}  // namespace

TEST_CASE("pure DRAM streaming: bytes / effective bandwidth + launch") {
  KernelSim k = kernel(10000, 64);
  k.counters.dram_read_bytes = 500'000'000;
  k.counters.dram_write_bytes = 500'000'000;
  Prediction p = predict(h100(), k);
  CHECK(p.bound == "dram");
  CHECK(p.seconds == doctest::Approx(1e9 / 2.55e12 + 4.62e-6));  // 318.535 us
  CHECK(p.explanation.find("DRAM-bound") == 0);
}

TEST_CASE("latency-bound pointer chase: accesses x latency") {
  // One warp, 1000 dependent loads that miss L1 and L2: 1000 x 675 cycles / 1.98 GHz = 340.909 us.
  KernelSim k = kernel(1, 1);
  k.counters.global_ld_requests = 1000;
  k.counters.global_ld_sectors = 1000;
  k.counters.l1_sector_lookups = 1000;
  k.counters.l2_read_sectors = 1000;
  k.counters.dram_read_bytes = 64000;
  k.counters.warp_instructions = 1000;
  Prediction p = predict(h100(), k);
  CHECK(p.bound == "latency");
  CHECK(p.seconds == doctest::Approx(1000 * 675 / 1.98e9 + 4.07e-6));
  CHECK(p.explanation.find("latency-bound: 1.0 warps per SM") == 0);
}

TEST_CASE("a bank-conflicted kernel scales with wavefronts") {
  KernelSim k = kernel(1320, 32);
  k.counters.shared_ld_requests = 1'000'000;
  k.counters.shared_ld_wavefronts = 32'000'000;  // 32-way conflicts
  k.counters.shared_ld_bank_conflicts = 31'000'000;
  Prediction a = predict(h100(), k);
  CHECK(a.bound == "shared");
  // 32e6 wavefronts / (132 SMs x 1980 MHz) = 122.436 us
  CHECK(a.seconds == doctest::Approx(32e6 / (132 * 1.98e9) + 4.07e-6));
  k.counters.shared_ld_wavefronts = 1'000'000;  // conflict-free
  k.counters.shared_ld_bank_conflicts = 0;
  Prediction b = predict(h100(), k);
  CHECK(b.seconds < a.seconds / 10);
}

TEST_CASE("calibrate: a fit on synthetic runs recovers the launch overhead and throughput scales it was made with") {
  // Made with overhead 3 us, DRAM 1.25x slower than the model, L2 0.8x; the fit starts from the model's 4 us.
  std::vector<memhier::TimingMeasurement> m;
  const double overhead = 3e-6;
  for (int i = 1; i <= 6; ++i) {
    const double dram = 10e-6 * i, l2 = 4e-6 * i;
    const int launches = i % 2 + 1;
    m.push_back({"dram" + std::to_string(i), launches * overhead + 1.25 * dram, launches, "dram", dram});
    m.push_back({"l2" + std::to_string(i), launches * overhead + 0.8 * l2, launches, "l2", l2});
  }
  m.push_back({"lat", 1e-3, 1, "latency", 5e-4});     // latency-bound: not fitted
  m.push_back({"lonely", 1e-3, 1, "shared", 2e-4});  // one case only: below min_cases, left out
  const memhier::CalibrationFit fit = memhier::fit_timing(m, 4e-6, 2);
  CHECK(fit.launch_overhead_seconds == doctest::Approx(3e-6).epsilon(1e-9));
  CHECK(fit.scale.at("dram") == doctest::Approx(1.25).epsilon(1e-9));
  CHECK(fit.scale.at("l2") == doctest::Approx(0.8).epsilon(1e-9));
  CHECK(fit.scale.count("shared") == 0);
  CHECK(fit.residuals.size() == 12);
  CHECK(fit.rms_relative_error_after < 1e-9);
  CHECK(fit.rms_relative_error_before > 0.05);
  CHECK_THROWS(memhier::fit_timing({m[12], m[13]}, 4e-6, 2));  // nothing left to fit
}
