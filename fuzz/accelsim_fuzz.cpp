// libFuzzer target for the Accel-Sim trace reader and the simulator behind it: any bytes as a .traceg file must give
// launches and blocks or an InputError naming the file and line, never a crash, a hang, an unbounded allocation or
// another exception; every block it gives has its launch's warps, and every memory record as many addresses as active
// lanes. Then the same file is simulated on the V100 (the smallest L2 to build an input) and the H100 (partitions,
// TPC merges, residency control) and timed: counters that hold together with the blocks read (holds_together()) and a
// finite, positive time, or an InputError naming the file.
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "memhier/accelsim.h"
#include "memhier/arch_loader.h"
#include "memhier/error.h"
#include "memhier/sim.h"
#include "memhier/timing.h"
#include "sim_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("memhier_fuzz_" + std::to_string(getpid()) + ".traceg");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  std::vector<memhier::TraceCounts> counts;  // of each launch read, for the simulation's counters
  try {
    memhier::AccelSimReader reader(path);
    memhier::KernelLaunch launch;
    memhier::BlockTrace block;
    while (reader.next_kernel(launch)) {
      const std::uint32_t warps = launch.warps_per_block();
      counts.emplace_back();
      while (reader.next_block(block)) {
        counts.back().add(block);
        if (block.warp_count() != warps) __builtin_trap();
        for (const memhier::WarpRecord& r : block.records) {
          if (!r.is_memory() || r.active_mask == 0) continue;
          if (block.lane_addresses(r).size() != static_cast<std::size_t>(std::popcount(r.active_mask)))
            __builtin_trap();
        }
      }
    }
  } catch (const memhier::InputError& e) {
    // The error names this file and, past its opening, a line of it.
    if (e.where().file != path.string()) __builtin_trap();
  }
  static const memhier::Arch archs[] = {memhier::load_arch_file(MEMHIER_FUZZ_ARCH_DIR "/v100.yaml"),
                                        memhier::load_arch_file(MEMHIER_FUZZ_ARCH_DIR "/h100.yaml")};
  for (const memhier::Arch& arch : archs) {
    try {
      memhier::AccelSimReader reader(path);
      memhier::SimOptions options;
      options.threads = 1;
      const std::vector<memhier::KernelSim> result = memhier::simulate(arch, reader, options);
      if (result.size() > counts.size()) __builtin_trap();  // the reading above gave them all, or failed
      for (std::size_t k = 0; k < result.size(); ++k) {
        const memhier::SimCounters& c = result[k].counters;
        if (c.global_ld_requests != 0 && c.global_ld_sectors == 0) __builtin_trap();  // a request touches a sector
        if (!memhier::holds_together(c, counts[k], arch)) __builtin_trap();
        const memhier::Prediction p = memhier::predict(arch, result[k]);
        if (!std::isfinite(p.seconds) || !(p.seconds > 0)) __builtin_trap();
      }
    } catch (const memhier::InputError& e) {
      if (e.where().file != path.string()) __builtin_trap();
    }
  }
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  return 0;
}
