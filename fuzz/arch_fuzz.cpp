// libFuzzer target for architecture files, as a what-if study edits them: any bytes as an arch YAML must load or give
// an InputError naming the file (or the shipped arch it extends, where the value at fault comes from), never a crash,
// a hang or another exception.
// An arch that loads simulates a small launch of every kind of access (coalesced and strided global loads and stores,
// shared loads with conflicts, local stores, constant loads, an atomic, a bulk copy, a barrier) and predicts its time:
// counters and a finite, positive time, or an InputError naming the file.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "memhier/arch_loader.h"
#include "memhier/error.h"
#include "memhier/sim.h"
#include "memhier/timing.h"

namespace {

using namespace memhier;

// Two blocks of two warps.
class SmallLaunch final : public TraceSource {
 public:
  bool next_kernel(KernelLaunch& k) override {
    if (m_kernel) return false;
    m_kernel = true;
    k = {};
    k.name = "small";
    k.grid = {2, 1, 1};
    k.block = {64, 1, 1};
    k.registers_per_thread = 32;
    k.static_shared_bytes = 4096;
    k.source = "small";
    return true;
  }
  bool next_block(BlockTrace& b) override {
    if (m_blocks == 2) return false;
    b.clear();
    b.index = {m_blocks++, 0, 0};
    for (int w = 0; w < 2; ++w) {
      b.begin_warp();
      std::array<std::uint64_t, 32> lanes{};
      WarpRecord r;
      r.active_mask = 0xFFFFFFFFU;
      r.size = 4;
      for (std::size_t i = 0; i < 32; ++i) lanes[i] = 0x7f0000000000ULL + b.index.x * 256 + w * 128 + 4 * i;
      b.add(r, lanes);  // coalesced load
      r.kind = AccessKind::store;
      for (std::size_t i = 0; i < 32; ++i) lanes[i] = 0x7f0000100000ULL + 4096 * i;
      b.add(r, lanes);  // a column of stores
      r.kind = AccessKind::load;
      r.space = AddressSpace::shared;
      for (std::size_t i = 0; i < 32; ++i) lanes[i] = 128 * i;
      b.add(r, lanes);  // 32-way bank conflict
      r.space = AddressSpace::local;
      r.kind = AccessKind::store;
      for (std::size_t i = 0; i < 32; ++i) lanes[i] = 8;
      b.add(r, lanes);
      r.space = AddressSpace::constant;
      r.kind = AccessKind::load;
      for (std::size_t i = 0; i < 32; ++i) lanes[i] = 4 * (i % 4);
      b.add(r, lanes);
      r.space = AddressSpace::global;
      r.kind = AccessKind::atomic;
      for (std::size_t i = 0; i < 32; ++i) lanes[i] = 0x7f0000200000ULL + 4 * (i % 8);
      b.add(r, lanes);
      WarpRecord bulk;
      bulk.kind = AccessKind::bulk_copy;
      bulk.active_mask = 1;
      bulk.size = 16;
      bulk.bulk_bytes = 1024;
      b.add(bulk, std::array<std::uint64_t, 1>{0x7f0000300000ULL});
      WarpRecord bar;
      bar.record = RecordKind::barrier;
      bar.active_mask = 0xFFFFFFFFU;
      b.add(bar, {});
    }
    return true;
  }

 private:
  bool m_kernel = false;
  std::uint32_t m_blocks = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  const std::string label = "fuzz.yaml";
  try {
    const Arch arch = load_arch_string(yaml, label);
    SmallLaunch source;
    SimOptions options;
    options.threads = 1;
    for (const KernelSim& k : simulate(arch, source, options)) {
      const Prediction p = predict(arch, k);
      if (!std::isfinite(p.seconds) || !(p.seconds > 0)) __builtin_trap();
    }
  } catch (const InputError& e) {
    // The file given, a shipped arch it extends (whose value a change made invalid), or the launch.
    const std::string& file = e.where().file;
    if (file != label && file != "small" && !file.starts_with(MEMHIER_FUZZ_ARCH_DIR)) __builtin_trap();
  }
  return 0;
}
