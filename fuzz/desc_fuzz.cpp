// libFuzzer target for kernel descriptions, from the YAML to the simulator: any bytes as a description must load,
// generate records and simulate, or give an InputError naming the description (or the --set it came from), never a
// crash, a hang, an unbounded allocation or another exception. The first 3 launches' first 4 blocks are simulated on a
// small V100 and H100 (sim_checks.h) on one thread, the caches kept between launches or not, each warp's records in the
// simulator's parts (256 records a warp) with at most 2 parts after the first, so a description's size bounds nothing
// here. Every memory record has as many addresses as active lanes; the counters must hold together with the records
// given (holds_together()), be the same when an SM's L2 requests go in rounds, and each launch must get a finite,
// positive time.
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "memhier/error.h"
#include "memhier/kernel_desc.h"
#include "memhier/sim.h"
#include "memhier/timing.h"
#include "sim_checks.h"

namespace {

using namespace memhier;

constexpr int kLaunches = 3;
constexpr int kBlocks = 4;
constexpr int kLaterParts = 2;

void check(const BlockTrace& b) {
  LaneBuffer buffer;
  for (const WarpRecord& r : b.records)
    if (r.is_memory() && b.lane_addresses(r, buffer).size() != static_cast<std::size_t>(std::popcount(r.active_mask)))
      __builtin_trap();
}

// A block's later parts, at most kLaterParts a warp, each checked and counted.
class CappedRest final : public BlockRest {
 public:
  CappedRest(std::shared_ptr<BlockRest> rest, std::size_t warps, TraceCounts& counts)
      : m_rest(std::move(rest)), m_taken(warps, 0), m_counts(counts) {}
  bool next(std::size_t w, BlockTrace& out) override {
    if (w >= m_taken.size()) __builtin_trap();
    if (m_taken[w] == kLaterParts || !m_rest->next(w, out)) {
      out.clear();
      out.begin_warp();
      return false;
    }
    ++m_taken[w];
    check(out);
    TraceCounts part;
    part.add(out);
    part.blocks = 0;  // a part of a block already counted
    m_counts += part;
    return true;
  }

 private:
  std::shared_ptr<BlockRest> m_rest;
  std::vector<int> m_taken;
  TraceCounts& m_counts;
};

// The first kLaunches launches' first kBlocks blocks of a description, counted as the simulator takes them.
class Bounded final : public TraceSource {
 public:
  explicit Bounded(TraceSource& source) : m_source(source) {}
  bool next_kernel(KernelLaunch& launch) override {
    if (m_counts.size() == kLaunches || !m_source.next_kernel(launch)) return false;
    m_counts.emplace_back();
    m_blocks = 0;
    return true;
  }
  bool next_block(BlockTrace& block) override {
    if (m_counts.empty() || m_blocks == kBlocks || !m_source.next_block(block)) return false;
    ++m_blocks;
    check(block);
    m_counts.back().add(block);
    if (block.rest) block.rest = std::make_shared<CappedRest>(block.rest, block.warp_count(), m_counts.back());
    return true;
  }
  [[nodiscard]] const std::vector<TraceCounts>& counts() const { return m_counts; }

 private:
  TraceSource& m_source;
  int m_blocks = 0;
  std::vector<TraceCounts> m_counts;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  const std::string label = "fuzz.yaml";
  for (const Arch& arch : small_archs()) {
    try {
      auto source = load_kernel_description_string(yaml, label);
      Bounded bounded(*source);
      SimOptions options;
      options.threads = 1;
      options.flush_between_launches = (size & 64U) == 0;  // or --keep-cache
      const std::vector<KernelSim> result = simulate(arch, bounded, options);
      if (result.size() != bounded.counts().size()) __builtin_trap();
      // Again with an SM's L2 requests in rounds of a few (its list full at `round`): the same counts.
      auto again = load_kernel_description_string(yaml, label);
      Bounded bounded_again(*again);
      options.round_requests = 1 + size % 64;
      const std::vector<KernelSim> in_rounds = simulate(arch, bounded_again, options);
      if (in_rounds.size() != result.size()) __builtin_trap();
      for (std::size_t k = 0; k < result.size(); ++k) {
        if (!(in_rounds[k].counters == result[k].counters)) __builtin_trap();
        if (!holds_together(result[k].counters, bounded.counts()[k], arch)) __builtin_trap();
        const Prediction p = predict(arch, result[k]);
        if (!std::isfinite(p.seconds) || !(p.seconds > 0)) __builtin_trap();
      }
    } catch (const InputError& e) {
      if (e.where().file != label) __builtin_trap();
    }
  }
  return 0;
}
