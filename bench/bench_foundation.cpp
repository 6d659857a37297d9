// Costs of the foundation's operations: loading an architecture (with and without `extends`) and computing
// occupancy, which sweeps and the block scheduler call once per launch configuration.
#include <benchmark/benchmark.h>

#include <random>

#include "memhier/arch_loader.h"
#include "memhier/occupancy.h"

namespace {

const std::string kArchDir = MEMHIER_BENCH_ARCH_DIR;

void load_h100(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(memhier::load_arch_file(kArchDir + "/h100.yaml"));
}
BENCHMARK(load_h100);

void load_h200_extends_h100(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(memhier::load_arch_file(kArchDir + "/h200.yaml"));
}
BENCHMARK(load_h200_extends_h100);

void occupancy_random_launches(benchmark::State& state) {
  memhier::Arch arch = memhier::load_arch_file(kArchDir + "/h100.yaml");
  std::mt19937 rng(1);
  std::vector<memhier::LaunchResources> launches(1024);
  for (auto& l : launches) {
    l.threads_per_block = 32 * static_cast<int>(rng() % 32 + 1);
    l.registers_per_thread = static_cast<int>(rng() % 256);
    l.dynamic_shared_bytes = rng() % (100 * 1024);
  }
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(memhier::compute_occupancy(arch, launches[i++ % launches.size()]));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(occupancy_random_launches);

}  // namespace

BENCHMARK_MAIN();
