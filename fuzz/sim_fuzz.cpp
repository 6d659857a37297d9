// libFuzzer target for the simulator behind .mht traces, which mht_fuzz rarely reaches (a mutated chunk fails its
// checksum). The input bytes build launches and blocks: any shape, register count, shared and local memory, cluster,
// access-policy windows and set-aside; records of every space, kind, hint and size, partial masks, barriers, work and
// bulk copies, with addresses near the places that go wrong (0, the top of the address space, line and window edges).
// They are written with MhtWriter (which refuses what a reader would) and read back: a file the writer finishes must
// read back as it was written. Then it is simulated on a small V100 and H100 on one thread, and timed: counters that
// hold together (holds_together()), the same when an SM's L2 requests go in rounds, and a finite, positive time; or an
// InputError naming the .mht file.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "memhier/arch_loader.h"
#include "memhier/error.h"
#include "memhier/mht.h"
#include "memhier/sim.h"
#include "memhier/timing.h"
#include "memhier/trace_json.h"
#include "sim_checks.h"

namespace {

using namespace memhier;

// An address: near 0, the top of the address space, a window's base, or anywhere; lanes often in runs.
std::uint64_t address(FuzzedDataProvider& in, std::uint64_t window_base) {
  const std::uint64_t off = in.ConsumeIntegralInRange<std::uint64_t>(0, 1U << 20U);
  switch (in.ConsumeIntegralInRange(0, 4)) {
    case 0:
      return off;
    case 1:
      return ~std::uint64_t{0} - off;
    case 2:
      return window_base + off;
    case 3:
      return (std::uint64_t{1} << 40U) + off;
    default:
      return in.ConsumeIntegral<std::uint64_t>();
  }
}

Dim3 dim(FuzzedDataProvider& in, std::uint32_t max) {
  return {in.ConsumeIntegralInRange<std::uint32_t>(1, max), in.ConsumeIntegralInRange<std::uint32_t>(1, 2),
          in.ConsumeIntegralInRange<std::uint32_t>(1, 2)};
}

KernelLaunch make_launch(FuzzedDataProvider& in, std::uint64_t& window_base) {
  KernelLaunch k;
  k.name = in.ConsumeBool() ? "k" : in.ConsumeRandomLengthString(16);
  k.grid = dim(in, in.ConsumeBool() ? 8 : 0xFFFFFFFFU);
  k.block = dim(in, in.ConsumeBool() ? 96 : 1100);
  k.cluster = in.ConsumeBool() ? Dim3{} : dim(in, 20);
  k.registers_per_thread = in.ConsumeIntegralInRange<std::uint32_t>(0, 260);
  k.static_shared_bytes = in.ConsumeBool() ? 0 : in.ConsumeIntegral<std::uint32_t>() % (1U << 18U);
  k.dynamic_shared_bytes = in.ConsumeBool() ? 0 : in.ConsumeIntegral<std::uint32_t>();
  k.local_bytes_per_thread = in.ConsumeBool() ? 0 : in.ConsumeIntegral<std::uint32_t>() % (1U << 20U);
  k.captured_arch = in.ConsumeBool() ? "" : "h100";
  window_base = address(in, 0);
  for (int n = in.ConsumeIntegralInRange(0, 2); n > 0; --n) {
    AccessPolicyWindow w;
    w.base = in.ConsumeBool() ? window_base : address(in, window_base);
    w.bytes =
        in.ConsumeBool() ? in.ConsumeIntegralInRange<std::uint64_t>(0, 1U << 16U) : in.ConsumeIntegral<std::uint64_t>();
    w.hit_ratio = in.ConsumeProbability<double>() * 1.25;  // now and then outside [0, 1]
    w.hit_prop = static_cast<L2Property>(in.ConsumeIntegralInRange(0, 2));
    w.miss_prop = static_cast<L2Property>(in.ConsumeIntegralInRange(0, 2));
    k.windows.push_back(w);
  }
  k.persisting_set_aside_bytes =
      in.ConsumeBool() ? 0 : in.ConsumeIntegral<std::uint64_t>() >> in.ConsumeIntegralInRange(0, 63);
  k.reset_persisting = in.ConsumeBool();
  k.source = "fuzz";
  return k;
}

void add_record(FuzzedDataProvider& in, BlockTrace& b, std::uint64_t window_base) {
  WarpRecord r;
  r.pc = in.ConsumeIntegralInRange<std::uint32_t>(0, 64) * 16;
  r.work = in.ConsumeBool() ? 0 : in.ConsumeIntegral<std::uint32_t>() >> in.ConsumeIntegralInRange(0, 31);
  if (in.ConsumeIntegralInRange(0, 7) == 0) {
    r.record = RecordKind::barrier;
    r.active_mask = 0xFFFFFFFFU;
    b.add(r, {});
    return;
  }
  r.space = static_cast<AddressSpace>(in.ConsumeIntegralInRange(0, kAddressSpaceCount - 1));
  r.kind = static_cast<AccessKind>(in.ConsumeIntegralInRange(0, kAccessKindCount - 1));
  r.hint = static_cast<CacheHint>(in.ConsumeIntegralInRange(0, kCacheHintCount - 1));
  r.size = static_cast<std::uint8_t>(1U << in.ConsumeIntegralInRange(0, 4));
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0:
      r.active_mask = 0xFFFFFFFFU;
      break;
    case 1:
      r.active_mask = 0;
      break;
    case 2:
      r.active_mask = 1;
      break;
    default:
      r.active_mask = in.ConsumeIntegral<std::uint32_t>();
  }
  if (r.kind == AccessKind::bulk_copy) {
    r.active_mask &= 1U;  // one lane moves the bytes
    r.bulk_bytes =
        in.ConsumeBool() ? in.ConsumeIntegralInRange<std::uint32_t>(0, 1U << 13U) : in.ConsumeIntegral<std::uint32_t>();
  }
  std::array<std::uint64_t, kWarpSize> lanes{};
  const auto n = static_cast<std::size_t>(std::popcount(r.active_mask));
  const std::uint64_t first = address(in, window_base);
  const std::uint64_t stride = in.ConsumeBool() ? r.size : in.ConsumeIntegralInRange<std::uint64_t>(0, 4096);
  const bool scattered = in.ConsumeIntegralInRange(0, 3) == 0;
  for (std::size_t i = 0; i < n; ++i) lanes[i] = scattered ? address(in, window_base) : first + i * stride;
  b.add(r, std::span<const std::uint64_t>(lanes.data(), n));
}

// The records and lanes of `a` and `b` are the same (what the writer was given, what the reader gives back).
bool same_block(const BlockTrace& a, const BlockTrace& b) {
  if (a.index != b.index || a.warp_begin != b.warp_begin || a.records.size() != b.records.size()) return false;
  LaneBuffer buffer;
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    const WarpRecord& x = a.records[i];
    const WarpRecord& y = b.records[i];
    if (x.pc != y.pc || x.active_mask != y.active_mask || x.work != y.work || x.bulk_bytes != y.bulk_bytes ||
        x.record != y.record ||
        (x.is_memory() && (x.space != y.space || x.kind != y.kind || x.hint != y.hint || x.size != y.size)))
      return false;
    const auto la = a.lane_addresses(x);
    const auto lb = b.lane_addresses(y, buffer);
    if (!std::equal(la.begin(), la.end(), lb.begin(), lb.end())) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("memhier_sim_fuzz_" + std::to_string(getpid()) + ".mht");
  FuzzedDataProvider in(data, size);
  std::vector<KernelLaunch> launches;
  std::vector<std::vector<BlockTrace>> blocks;
  std::vector<TraceCounts> counts;
  try {
    MhtWriter writer(path);
    for (int kernels = in.ConsumeIntegralInRange(1, 3); kernels > 0; --kernels) {
      std::uint64_t window_base = 0;
      launches.push_back(make_launch(in, window_base));
      writer.begin_kernel(launches.back());
      blocks.emplace_back();
      counts.emplace_back();
      const std::uint32_t warps = launches.back().warps_per_block();
      for (int n = in.ConsumeIntegralInRange(1, 4); n > 0; --n) {
        BlockTrace& b = blocks.back().emplace_back();
        b.clear();
        const Dim3& g = launches.back().grid;
        b.index = {in.ConsumeIntegralInRange<std::uint32_t>(0, g.x - 1),
                   in.ConsumeIntegralInRange<std::uint32_t>(0, g.y - 1),
                   in.ConsumeIntegralInRange<std::uint32_t>(0, g.z - 1)};
        for (std::uint32_t w = 0; w < warps; ++w) {
          b.begin_warp();
          for (int r = in.ConsumeIntegralInRange(0, w < 2 ? 6 : 1); r > 0; --r) add_record(in, b, window_base);
        }
        writer.add_block(b);
        counts.back().add(b);
      }
      writer.end_kernel();
    }
    writer.close();
  } catch (const InputError&) {  // a launch the writer refuses: nothing to read
    return 0;
  }
  // What the writer finished reads back as it was written.
  try {
    MhtReader reader(path);
    KernelLaunch launch;
    BlockTrace b;
    for (std::size_t k = 0; reader.next_kernel(launch); ++k) {
      if (k >= launches.size()) __builtin_trap();
      // As written: names that are not UTF-8 with U+FFFD for their other bytes (json_text), the source the .mht's path.
      KernelLaunch written = launch_from_json(nlohmann::json::parse(json_text(launch_to_json(launches[k]))));
      written.source = path.string();
      if (!(launch == written)) __builtin_trap();
      std::size_t i = 0;
      while (reader.next_block(b))
        if (i >= blocks[k].size() || !same_block(blocks[k][i++], b)) __builtin_trap();
      if (i != blocks[k].size()) __builtin_trap();
    }
  } catch (const InputError&) {
    __builtin_trap();
  }
  // Caches emptied between launches or kept (--keep-cache); and an SM's L2 requests taken in rounds of a few (its
  // list full at `round`), which must count as one pass does.
  const bool keep_cache = in.ConsumeBool();
  const auto round = in.ConsumeIntegralInRange<std::uint64_t>(1, 64);
  for (const Arch& arch : small_archs()) {
    try {
      MhtReader reader(path);
      SimOptions options;
      options.threads = 1;
      options.flush_between_launches = !keep_cache;
      const std::vector<KernelSim> result = simulate(arch, reader, options);
      if (result.size() != launches.size()) __builtin_trap();
      MhtReader again(path);
      SimOptions rounds = options;
      rounds.round_requests = round;
      const std::vector<KernelSim> in_rounds = simulate(arch, again, rounds);
      for (std::size_t k = 0; k < result.size(); ++k)
        if (!(in_rounds[k].counters == result[k].counters)) __builtin_trap();
      for (std::size_t k = 0; k < result.size(); ++k)
        if (!holds_together(result[k].counters, counts[k], arch)) __builtin_trap();
      for (const KernelSim& k : result) {  // and a time: finite and positive whatever the trace
        const Prediction p = predict(arch, k);
        if (!std::isfinite(p.seconds) || !(p.seconds > 0)) __builtin_trap();
      }
    } catch (const InputError& e) {
      if (e.where().file != path.string()) __builtin_trap();
    }
  }
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  return 0;
}
