#pragma once
// One L2 slice: sectored, write-back with dirty sectors, residency control through its cache's persisting ways, and
// the DRAM traffic its misses and write-backs cause (fetch granularity from the arch).
#include "../cache/set_cache.h"
#include "../sim/sim_types.h"
#include "memhier/sim.h"

namespace memhier {

struct L2SliceSpec {
  CacheGeometry geometry;
  std::uint64_t fetch_bytes = 64;  // DRAM bytes per read miss, aligned
  int partition = 0;
  int partitions = 1;
  std::uint64_t dram_row_bytes = 1024;
};

class L2Slice {
 public:
  explicit L2Slice(const L2SliceSpec& spec) : m_spec(spec), m_cache(spec.geometry) {}
  void set_persisting_ways(std::uint32_t ways) { m_cache.set_persisting_ways(ways); }
  void demote_persisting() { m_cache.demote_persisting(); }
  // Writes dirty data back and empties the slice (between launches under ncu-style cache control).
  void flush(SimCounters& c);
  void access(const L2Request& r, SimCounters& c);

 private:
  void dram(std::uint64_t address, std::uint64_t bytes, bool write, SimCounters& c);

  L2SliceSpec m_spec;
  SetCache m_cache;
  std::uint64_t m_open_row = ~0ULL;

};

}  // namespace memhier
