#pragma once
// Timing model (DESIGN.md "Timing model"): simulated counts + launch facts + arch -> seconds.
// time = launch overhead + k-norm(device memory, SM memory pipes, issue, block scheduling, latency), where device
// memory is the larger of the DRAM and L2 terms and the SM pipes the largest of L1, shared memory and constant cache.
// Every constant is an arch parameter.
#include <string>
#include <vector>

#include "memhier/arch.h"
#include "memhier/sim.h"

namespace memhier {

struct TimeTerm {
  std::string name;    // dram, l2, l1, shared, constant, issue, blocks, latency
  double seconds = 0;  // the time this resource alone needs
  std::string detail;  // what it was computed from
};

struct Prediction {
  std::string kernel;
  double seconds = 0;  // predicted kernel time including launch overhead
  double launch_seconds = 0;
  // The launch's time on the GPU, as ncu's gpu__time_duration gives it: seconds less the launch overhead, plus the
  // GPU's own part of a launch (launch.gpu_overhead; where the arch has none, launch_seconds stays in).
  double gpu_seconds = 0;
  bool idle_gpu = false;  // launch_seconds is launch.idle_overhead (PredictOptions::idle_gpu)
  std::vector<TimeTerm> terms;
  std::string bound;          // name of the term that sets the time
  std::string explanation;    // e.g. "DRAM-bound at 96% of effective bandwidth"
  double dram_bandwidth = 0;  // achieved DRAM bytes/s over the predicted time
  int active_sms = 0;
  double warps_per_sm = 0;  // achieved resident warps
  double warps_needed = 0;  // resident warps per SM that would hide latency behind the binding throughput term
};

struct PredictOptions {
  // The launch finds the GPU idle (timed alone after a synchronize, as a warm benchmark loop does): its overhead is
  // launch.idle_overhead, which includes the host's submission latency, instead of launch.overhead.
  bool idle_gpu = false;
};

Prediction predict(const Arch& arch, const KernelSim& sim, const PredictOptions& options = {});
// The extra DRAM time of a byte written back with `ways` of the L2's ways set aside, in seconds:
// l2.setaside_write_cost's entry in picoseconds (past its end, its last; without one, 0).
double setaside_write_cost(const Arch& arch, std::uint32_t ways);

}  // namespace memhier
