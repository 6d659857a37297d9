// Timing model on hand-checkable cases, with the H100 file's constants: effective DRAM 2.78 TB/s, DRAM latency 675
// cycles at 1980 MHz, launch overhead 3.02 us (5.82 us on an idle GPU), shared memory 122/128 wavefronts per clock per
// SM (fitted), 2.02 cycles per access of a divergent constant load, block scheduling 157 cycles a block or 6.75 a warp,
// on 132 SMs; L2 read beats of 64 B at 8.44 TB/s, a write beat 1.35 as long; concurrent times add up as their 3-norm
// (timing.overlap_exponent). Times compare to 1e-9 relative (doctest's default Approx would accept any two times within
// 12 us).
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>

#include "memhier/arch_loader.h"
#include "memhier/calibrate.h"
#include "memhier/timing.h"
#include "test_support.h"

namespace {

using namespace memhier;

Arch h100() { return load_arch_file(test::arch_dir() / "h100.yaml"); }

// A launch of `blocks` blocks of `threads` threads, `per_sm` of them resident per SM (132 SMs).
KernelSim kernel(std::uint64_t blocks, std::uint32_t threads, int per_sm) {
  KernelSim k;
  k.launch.block = {threads, 1, 1};
  k.counters.blocks = blocks;
  k.occupancy.blocks_per_sm = per_sm;
  const std::uint64_t wave = 132U * static_cast<std::uint64_t>(per_sm);
  k.counters.waves = (blocks + wave - 1) / wave;
  k.achieved_warps_per_sm = static_cast<double>(std::min(blocks, wave)) / 132.0 * threads / 32.0;
  return k;
}

using test::exactly;

// The 3-norm of concurrent times (the H100 file's timing.overlap_exponent).
double norm3(std::initializer_list<double> times) {
  double sum = 0;
  for (double t : times) sum += t * t * t;
  return std::cbrt(sum);
}

// Block scheduling of `blocks` blocks of `cycles` each over 132 SMs at 1980 MHz.
double scheduling(double blocks, double cycles) { return std::ceil(blocks / 132) * cycles / 1.98e9; }

}  // namespace

TEST_CASE("pure DRAM streaming: bytes / effective bandwidth + launch") {
  KernelSim k = kernel(10000, 256, 8);
  k.counters.dram_read_bytes = 500'000'000;
  k.counters.dram_write_bytes = 500'000'000;
  Prediction p = predict(h100(), k);
  CHECK(p.bound == "dram");
  // 359.712 us of DRAM overlapping 76 blocks x 157 cycles of block scheduling per SM (6.026 us): 359.716 us.
  CHECK(p.seconds == exactly(norm3({1e9 / 2.78e12, scheduling(10000, 157)}) + 3.02e-6));
  CHECK(p.explanation.find("DRAM-bound") == 0);
  // The same launch finding the GPU idle pays the submission latency too.
  PredictOptions idle;
  idle.idle_gpu = true;
  CHECK(predict(h100(), k, idle).seconds == exactly(p.seconds - 3.02e-6 + 5.82e-6));
}

TEST_CASE("L2 slices: a read beat of 64 B at 8.44 TB/s, a write beat 1.35 times as long") {
  // One block, so that nothing but the L2 counts (its block scheduling: 157 cycles, 79.3 ns).
  KernelSim reads = kernel(1, 256, 8);
  reads.counters.l2_beats = 1'000'000;
  Prediction r = predict(h100(), reads);
  CHECK(r.bound == "l2");
  CHECK(r.terms[1].name == "l2");
  CHECK(r.terms[1].seconds == exactly(64e6 / 8.44e12));  // 7.583 us
  // The same beats, 400,000 of them a write's: 600,000 + 400,000 x 1.35 read beats.
  KernelSim mixed = reads;
  mixed.counters.l2_write_beats = 400'000;
  const Prediction m = predict(h100(), mixed);
  CHECK(m.terms[1].seconds == exactly(64 * 1.14e6 / 8.44e12));  // 8.645 us
  CHECK(m.terms[1].detail.find("600000 read + 400000 write beats of 64 B") == 0);
  // 300,000 of the read beats an atomic's instead: 300,000 + 400,000 x 1.35 + 300,000 x 1.31 read beats.
  KernelSim atomics = mixed;
  atomics.counters.l2_atom_beats = 300'000;
  const Prediction a = predict(h100(), atomics);
  CHECK(a.terms[1].seconds == exactly(64 * (300'000 + 400'000 * 1.35 + 300'000 * 1.31) / 8.44e12));  // 8.943 us
  CHECK(a.terms[1].detail ==
        "300000 read + 400000 write beats + 300000 atomic beats of 64 B at 8.44TB/s, a write's 1.35x a read's, an "
        "atomic's 1.31x");
}

TEST_CASE("DRAM rows: activations at the read and write rates, overlapping the bytes as a 3-norm") {
  // 1 GB read and written (359.712 us at 2.78 TB/s); 8 million rows opened by reads (227.273 us at 35.2 G/s) and 2
  // million by write-backs (83.333 us at 24.0 G/s): 310.606 us of activations, with the bytes 424.528 us.
  KernelSim k = kernel(10000, 256, 8);
  k.counters.dram_read_bytes = 500'000'000;
  k.counters.dram_write_bytes = 500'000'000;
  k.counters.dram_row_hits = 5'000'000;
  k.counters.dram_row_misses = 10'000'000;
  k.counters.dram_write_row_misses = 2'000'000;
  const double bytes = 1e9 / 2.78e12, rows = 8e6 / 35.2e9 + 2e6 / 24.0e9;
  Prediction p = predict(h100(), k);
  CHECK(p.bound == "dram");
  CHECK(p.terms.front().seconds == exactly(norm3({bytes, rows})));
  CHECK(p.terms.front().seconds == doctest::Approx(424.528e-6).epsilon(1e-5).scale(0));
  CHECK(p.seconds == exactly(norm3({norm3({bytes, rows}), scheduling(10000, 157)}) + 3.02e-6));
  CHECK(p.terms.front().detail == "1000.0 MB at 2.78TB/s, 10000000 rows opened (67% of accesses)");
  // Activations past half the bytes' time: the explanation names them.
  CHECK(p.explanation.find(
            "; 67% of the DRAM accesses open a row (scattered accesses or write-backs), whose activations take "
            "310.606us beside the bytes' 359.712us") != std::string::npos);
  // The same rows all opened by reads (284.091 us of activations): 411.091 us.
  k.counters.dram_write_row_misses = 0;
  CHECK(predict(h100(), k).terms.front().seconds == exactly(norm3({bytes, 10e6 / 35.2e9})));
  CHECK(predict(h100(), k).terms.front().seconds == doctest::Approx(411.091e-6).epsilon(1e-5).scale(0));
  // An arch that gives no activation rates charges bytes only, whatever rows the accesses open.
  Arch plain = h100();
  plain.dram.read_activation_rate = plain.dram.write_activation_rate = 0;
  CHECK(predict(plain, k).terms.front().seconds == exactly(bytes));
  CHECK(predict(plain, k).terms.front().detail == "1000.0 MB at 2.78TB/s");
  CHECK(predict(plain, k).explanation.find("of the time at the effective bandwidth") != std::string::npos);
}

TEST_CASE("a large set-aside: each byte written back costs l2.setaside_write_cost more, half alone, fully with reads") {
  // The H100's costs by ways set aside: none up to 8, then 0.615 and 1.0 ps a byte
  // (validate/results/h100-2026-11-27c). 400 MB read and 200 MB written with 10 ways set aside: 215.827 us for the
  // bytes at 2.78 TB/s and 200 us for the write-backs; written alone, half the write-backs' cost.
  KernelSim k = kernel(10000, 256, 8);
  k.counters.dram_read_bytes = 400'000'000;
  k.counters.dram_write_bytes = 200'000'000;
  k.residency.persisting_ways = 10;
  const Arch a = h100();
  CHECK(predict(a, k).terms.front().seconds == exactly(6e8 / 2.78e12 + 1.0e-12 * 2e8));
  CHECK(predict(a, k).terms.front().seconds == doctest::Approx(415.827e-6).epsilon(1e-5).scale(0));
  CHECK(predict(a, k).terms.front().detail.find(", write-backs 200us slower with 10 L2 ways set aside") !=
        std::string::npos);
  k.residency.persisting_ways = 9;  // 0.615 ps
  CHECK(predict(a, k).terms.front().seconds == exactly(6e8 / 2.78e12 + 0.615e-12 * 2e8));
  k.residency.persisting_ways = 8;  // none: bytes alone, and no word of it
  CHECK(predict(a, k).terms.front().seconds == exactly(6e8 / 2.78e12));
  CHECK(predict(a, k).terms.front().detail == "600.0 MB at 2.78TB/s");
  k.residency.persisting_ways = 10;
  k.counters.dram_read_bytes = 50'000'000;  // reads under half the writes: 50 MB + 100 MB of the writes at full cost
  CHECK(predict(a, k).terms.front().seconds == exactly(2.5e8 / 2.78e12 + 1.0e-12 * 1.5e8));
  k.counters.dram_read_bytes = 0;
  CHECK(predict(a, k).terms.front().seconds == exactly(2e8 / 2.78e12 + 1.0e-12 * 1e8));
  // Past the list's end the last entry holds; an arch without one has none. The cost is a time, whatever the
  // DRAM's bandwidth (the H200 inherits the H100's list: the same 100 us here).
  k.residency.persisting_ways = 12;
  CHECK(predict(a, k).terms.front().seconds == exactly(2e8 / 2.78e12 + 1.0e-12 * 1e8));
  Arch fast = a;
  fast.dram.effective_bandwidth = 3.86e12;
  CHECK(predict(fast, k).terms.front().seconds == exactly(2e8 / 3.86e12 + 1.0e-12 * 1e8));
  Arch none = a;
  none.l2.setaside_write_cost.clear();
  CHECK(predict(none, k).terms.front().seconds == exactly(2e8 / 2.78e12));
}

TEST_CASE("block scheduling: a rate per block, or per warp for large blocks; it overlaps other work imperfectly") {
  // Empty blocks: 65536 blocks of 256 threads = 497 blocks on the busiest SM x 157 cycles = 39.409 us (the H100
  // measured 42.528 us with the launch).
  KernelSim empty = kernel(65536, 256, 8);
  Prediction e = predict(h100(), empty);
  CHECK(e.bound == "blocks");
  CHECK(e.explanation ==
        "block-scheduling-bound: 65536 blocks at 157 cycles each per SM; fewer blocks doing more work "
        "each would cut it");
  CHECK(e.seconds == exactly(497 * 157 / 1.98e9 + 3.02e-6));
  // 1024-thread blocks: 32 warps x 6.75 cycles = 216 cycles a block, more than 157.
  CHECK(predict(h100(), kernel(16896, 1024, 2)).seconds == exactly(128 * 216 / 1.98e9 + 3.02e-6));
  // DRAM traffic that alone takes as long as the scheduling: together 2^(1/3) = 1.26 times either.
  empty.counters.dram_read_bytes = static_cast<std::uint64_t>(2.78e12 * (497 * 157 / 1.98e9));
  const double dram = static_cast<double>(empty.counters.dram_read_bytes) / 2.78e12;
  CHECK(predict(h100(), empty).seconds == exactly(norm3({dram, 497 * 157 / 1.98e9}) + 3.02e-6));
  CHECK(predict(h100(), empty).seconds - 3.02e-6 == doctest::Approx(std::cbrt(2.0) * dram).epsilon(1e-6));
}

TEST_CASE("latency-bound pointer chase: accesses x latency") {
  // One warp, 1000 dependent loads (1000 waits) that miss L1 and L2: 1000 x 675 cycles / 1.98 GHz = 340.909 us.
  KernelSim k = kernel(1, 32, 1);
  k.counters.global_ld_requests = 1000;
  k.counters.load_waits = 1000;
  k.counters.global_ld_sectors = 1000;
  k.counters.l1_sector_lookups = 1000;
  k.counters.l2_read_sectors = 1000;
  k.counters.dram_read_bytes = 64000;
  k.counters.warp_instructions = 1000;
  Prediction p = predict(h100(), k);
  CHECK(p.bound == "latency");
  // The other times (1000 issue slots: 126 ns; one block: 79 ns; DRAM: 23 ns) add under 1e-10 to its 3-norm.
  CHECK(p.seconds == exactly(1000 * 675 / 1.98e9 + 3.02e-6));
  // Reductions that hit in L2 beside them change no wait (no warp waits for a reduction) ...
  KernelSim reds = k;
  reds.counters.l2_red_sectors = reds.counters.l2_red_hits = 1000;
  CHECK(predict(h100(), reds).terms.back().seconds == exactly(1000 * 675 / 1.98e9));
  // ... atomics that hit do: half the sectors waited for hit (285 cycles, the mean of near and far), the waits take
  // (285 + 675) / 2 = 480 cycles each.
  KernelSim atoms = k;
  atoms.counters.l2_atom_sectors = atoms.counters.l2_atom_hits = 1000;
  CHECK(predict(h100(), atoms).terms.back().seconds == exactly(1000 * 480 / 1.98e9));
  // The same loads in runs of two independent ones wait half as often.
  k.counters.load_waits = 500;
  CHECK(predict(h100(), k).seconds == exactly(500 * 675 / 1.98e9 + 3.02e-6));
  // 133 such blocks of one warp on one block per SM: two waves, the second holding one block, twice the time.
  KernelSim two = kernel(133, 32, 1);
  two.counters = k.counters;
  two.counters.blocks = 133;
  two.counters.waves = 2;
  for (std::uint64_t SimCounters::*f :
       {&SimCounters::global_ld_requests, &SimCounters::global_ld_sectors, &SimCounters::l1_sector_lookups,
        &SimCounters::l2_read_sectors, &SimCounters::dram_read_bytes, &SimCounters::warp_instructions,
        &SimCounters::load_waits})
    two.counters.*f *= 133;
  // Alongside: 133 x 64000 B of DRAM (3.06 us), issue on the busiest SM (two blocks), two blocks to schedule.
  const double issue = 2 * 1000 / (4 * 1.98e9);
  CHECK(predict(h100(), two).seconds ==
        exactly(norm3({2 * 500 * 675 / 1.98e9, 133 * 64000 / 2.78e12, issue, scheduling(133, 157)}) + 3.02e-6));
  CHECK(p.explanation.find("latency-bound: 1.0 warps per SM") == 0);
}

TEST_CASE("a bank-conflicted kernel scales with wavefronts") {
  KernelSim k = kernel(1320, 1024, 1);  // 10 full waves of 32 warps per SM
  k.counters.shared_ld_requests = 1'000'000;
  k.counters.shared_ld_wavefronts = 32'000'000;  // 32-way conflicts
  k.counters.shared_ld_bank_conflicts = 31'000'000;
  Prediction a = predict(h100(), k);
  CHECK(a.bound == "shared");
  // 32e6 wavefronts / (132 SMs x 1980 MHz x 0.953125 per clock: the fitted 122 B/clk over 32 banks x 4 B), with 10
  // blocks of 32 warps per SM to schedule at 216 cycles each.
  // Each conflict also delays the warp that waits for the load: 31e6 cycles over 42240 warps, 10 waves.
  const double shared = 32e6 / (132 * 1.98e9 * (122.0 / 128));
  const double waits = 31e6 / (1320 * 32) * 10 / 1.98e9;
  CHECK(a.seconds == exactly(norm3({shared, scheduling(1320, 216), waits}) + 3.02e-6));
  // 1321 blocks: one SM runs 11 blocks while the rest run 10, and the shared-memory time follows the busiest SM.
  KernelSim tail = k;
  tail.counters.blocks = 1321;
  tail.counters.waves = 11;
  CHECK(predict(h100(), tail).seconds ==
        exactly(norm3({shared * 11 * 132 / 1321, scheduling(1321, 216), 31e6 / (1321 * 32) * 11 / 1.98e9}) + 3.02e-6));
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
  m.push_back({"lat", 1e-3, 1, "latency", 5e-4});    // latency-bound: not fitted
  m.push_back({"lonely", 1e-3, 1, "shared", 2e-4});  // one case only: below min_cases, left out
  const memhier::CalibrationFit fit = memhier::fit_timing(m, 4e-6, 2);
  CHECK(fit.launch_overhead_seconds == exactly(3e-6));
  CHECK(fit.scale.at("dram") == doctest::Approx(1.25).epsilon(1e-9));
  CHECK(fit.scale.at("l2") == doctest::Approx(0.8).epsilon(1e-9));
  CHECK(fit.scale.count("shared") == 0);
  CHECK(fit.residuals.size() == 12);
  CHECK(fit.rms_relative_error_after < 1e-9);
  CHECK(fit.rms_relative_error_before > 0.05);
  CHECK_THROWS(memhier::fit_timing({m[12], m[13]}, 4e-6, 2));  // nothing left to fit
}

TEST_CASE("barriers hold the shared-memory pipe; shared accesses and barriers add up") {
  // The H100 barrier probe: 8 blocks of 8 warps per SM, 4096 rounds of __syncthreads() each: 64 x 4096 x 2.08
  // cycles = 545260 cycles per SM (measured: 545776 cycles for the slowest block, 284.3 us event-timed).
  KernelSim k = kernel(1056, 256, 8);
  k.counters.barriers = 1056ULL * 8 * 4096;
  k.counters.warp_instructions = k.counters.barriers;
  Prediction p = predict(h100(), k);
  CHECK(p.bound == "shared");
  const double pipe = 64.0 * 4096 * 2.08 / 1.98e9;
  // Each warp also waits 28 cycles a barrier on its critical path: 4096 x 28 cycles for the one wave.
  const double waits = 4096.0 * 28 / 1.98e9;
  const double issue = 64.0 * 4096 / (4 * 1.98e9);
  CHECK(p.seconds == exactly(norm3({pipe, waits, issue, scheduling(1056, 157)}) + 3.02e-6));
  // The reduction step: half the warps load twice and store once more per round (3 x 4 = 12 wavefronts a block):
  // 96 wavefronts at 122/128 per clock + 64 barriers = 233.8 cycles a round per SM; the probe measured 232.48.
  k.counters.shared_ld_requests = k.counters.shared_ld_wavefronts = 1056ULL * 8 * 4096;
  k.counters.shared_st_requests = k.counters.shared_st_wavefronts = 1056ULL * 4 * 4096;
  Prediction step = predict(h100(), k);
  const double round = 96 / (122.0 / 128) + 64 * 2.08;
  CHECK(round == doctest::Approx(232.48).epsilon(0.01));  // the model within 1% of the measurement
  for (const TimeTerm& t : step.terms)
    if (t.name == "shared") CHECK(t.seconds == exactly(4096 * round / 1.98e9));
}

TEST_CASE("constant loads: a broadcast costs its issue slot, a divergent load each of its distinct addresses") {
  // 1320 blocks of 256 threads (8 warps), 10 per SM: 10560 warps, 64 constant loads each = 675840 requests.
  KernelSim k = kernel(1320, 256, 10);
  k.counters.constant_requests = 675'840;
  k.counters.constant_serialized = 675'840;  // one address a load
  k.counters.constant_broadcasts = 675'840;
  k.counters.warp_instructions = 675'840;
  Prediction b = predict(h100(), k);
  const auto term = [](const Prediction& p, const std::string& name) {
    for (const TimeTerm& t : p.terms)
      if (t.name == name) return t.seconds;
    return -1.0;
  };
  CHECK(term(b, "constant") == 0);
  CHECK(b.bound != "constant");
  // 32 distinct addresses a load: 32 accesses each, 2.02 SM cycles an access (H100 file) over 132 SMs at 1980 MHz.
  k.counters.constant_serialized = 32 * 675'840;
  k.counters.constant_broadcasts = 0;
  Prediction d = predict(h100(), k);
  CHECK(d.bound == "constant");
  const double constant = 32.0 * 675'840 * 2.02 / (1.98e9 * 132);
  CHECK(term(d, "constant") == exactly(constant));
  const double issue = 675'840 / (4 * 1.98e9 * 132);
  // Each warp waits 64 times for a 21-cycle hit plus its 32 accesses (10560 warps, one wave).
  const double waits = 675'840 * (21 + 32 * 2.02) / 10560 / 1.98e9;
  CHECK(d.seconds == exactly(norm3({constant, issue, scheduling(1320, 157), waits}) + 3.02e-6));
  // Two addresses a load cost two accesses, not one replay: the cost is linear in d from d = 2 (constant_distinct).
  k.counters.constant_serialized = 2 * 675'840;
  CHECK(term(predict(h100(), k), "constant") == exactly(2.0 * 675'840 * 2.02 / (1.98e9 * 132)));
  // Accesses whose line the constant cache lacked add constant_cache.miss_replays (0.24 on the H100) lookups each.
  k.counters.constant_serialized = 32 * 675'840;
  k.counters.constant_misses = 32 * 675'840;
  CHECK(term(predict(h100(), k), "constant") == exactly(32.0 * 675'840 * (1 + 0.24) * 2.02 / (1.98e9 * 132)));
}

TEST_CASE("calibrate rewrites a key's line and drops its old comment's continuation, nothing else") {
  const std::string yaml =
      "# file comment\n"
      "l1:\n"
      "  bandwidth_per_sm: 122B/clk  # old fit;\n"
      "                              # its second line\n"
      "                              # and third\n"
      "  # about miss_merge_sms, at the key's indentation\n"
      "  miss_merge_sms: 2           # merge\n"
      "                              # continued\n"
      "shared_memory:\n"
      "  bandwidth_per_sm: 128B/clk  # shared\n"
      "                              # continued\n";
  std::string text = yaml;
  REQUIRE(replace_arch_value(text, "l1", "bandwidth_per_sm", "130B/clk", "fitted"));
  CHECK(text ==
        "# file comment\n"
        "l1:\n"
        "  bandwidth_per_sm: 130B/clk                   # fitted\n"
        "  # about miss_merge_sms, at the key's indentation\n"
        "  miss_merge_sms: 2           # merge\n"
        "                              # continued\n"
        "shared_memory:\n"
        "  bandwidth_per_sm: 128B/clk  # shared\n"
        "                              # continued\n");
  // The same key under another section; a key with no continuation; an absent key leaves the text as it was.
  text = yaml;
  REQUIRE(replace_arch_value(text, "shared_memory", "bandwidth_per_sm", "1B/clk", "x"));
  CHECK(text == yaml.substr(0, yaml.find("  bandwidth_per_sm: 128B/clk")) +
                    "  bandwidth_per_sm: 1B/clk                     # x\n");
  text = "launch:\n  overhead: 3us # a\nl2:\n  size: 1MiB\n";
  REQUIRE(replace_arch_value(text, "launch", "overhead", "2.00us", "fit"));
  CHECK(text == "launch:\n  overhead: 2.00us                     # fit\nl2:\n  size: 1MiB\n");
  CHECK_FALSE(replace_arch_value(text, "launch", "block_cycles", "1", "fit"));
  CHECK(text == "launch:\n  overhead: 2.00us                     # fit\nl2:\n  size: 1MiB\n");
}

TEST_CASE("calibrate leaves the accuracy record out of its output (remove_arch_section)") {
  const std::string yaml =
      "launch:\n  overhead: 3us # a\n"
      "accuracy:                  # the record\n"
      "                           # continued\n"
      "  run: validate/results/x\n"
      "  worst: \"k: -1.0%\"       # its comment\n"
      "# about what follows\n"
      "l2:\n  size: 1MiB\n";
  std::string text = yaml;
  REQUIRE(remove_arch_section(text, "accuracy", "left out"));
  CHECK(text == "launch:\n  overhead: 3us # a\n# left out\n# about what follows\nl2:\n  size: 1MiB\n");
  // At the end of the file; a key named like the section under another one is not it; absent: unchanged.
  text = "l2:\n  accuracy: 1\naccuracy:\n  run: x\n";
  REQUIRE(remove_arch_section(text, "accuracy", "gone"));
  CHECK(text == "l2:\n  accuracy: 1\n# gone\n");
  CHECK_FALSE(remove_arch_section(text, "accuracy", "gone"));
  CHECK(text == "l2:\n  accuracy: 1\n# gone\n");
}
