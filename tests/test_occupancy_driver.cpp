// Replays what the CUDA driver answered on a real H200 (cudaOccupancyMaxActiveBlocksPerMultiprocessor on compiled
// kernels, validate/probe/occupancy_probe.cu) through our calculator with archs/h200.yaml.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "memhier/occupancy.h"
#include "test_support.h"

using namespace memhier;

TEST_CASE("5.2 occupancy agrees with the H200 driver on every probed launch") {
  auto path = std::filesystem::path(MEMHIER_TEST_RESULTS_DIR) / "h200-2026-11-22/foundation/occupancy_probe.json";
  auto probe = nlohmann::json::parse(test::read_text(path));
  REQUIRE(probe["device"] == "NVIDIA H200");
  Arch arch = load_arch("h200");
  int compared = 0;
  int mismatches = 0;
  std::string first;
  for (const auto& r : probe["records"]) {
    LaunchResources l;
    l.threads_per_block = r["threads"];
    l.registers_per_thread = r["regs"];
    l.static_shared_bytes = r["static_smem"];
    l.dynamic_shared_bytes = r["dynamic_smem"];
    l.carveout_percent = r["carveout"];
    int ours = compute_occupancy(arch, l).blocks_per_sm;
    int driver = r["blocks"];
    if (ours != driver && mismatches++ == 0) first = fmt::format("{} -> ours {}, driver {}", r.dump(), ours, driver);
    ++compared;
  }
  CHECK(compared == 4000);
  CHECK_MESSAGE(mismatches == 0, mismatches << " mismatches; first: " << first);
}
