#pragma once
// A host-cache prefetch the optimizer keeps. GCC counts __builtin_prefetch as no side effect, so a function that only
// computes an address and prefetches it is found "pure", and a call whose result goes unused is deleted: a hint the SM
// front once gave for the next record's L1 lines (stops 46 to 59) compiled to a bare return from 1e6f0d0 on (GCC 12
// -O3; -fdump-tree-all shows its local-pure-const pass finding it pure). An asm statement marked volatile is a side
// effect the compiler may not drop. (A __builtin_prefetch inside a loop that does other work, as in replay_order.h,
// stays.)
#include <cstddef>

namespace memhier {

inline void host_prefetch(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

// host_prefetch of every 64 bytes of [p, p + bytes): the host lines of a table that starts at one (a set of an L2
// slice or of the TPC merge table, an L1's tables, a block's first records).
inline void host_prefetch_bytes(const void* p, std::size_t bytes) {
  const auto* c = static_cast<const char*>(p);
  for (std::size_t o = 0; o < bytes; o += 64) host_prefetch(c + o);
}

}  // namespace memhier
