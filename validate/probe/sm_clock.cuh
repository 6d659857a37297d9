#pragma once
// Where and when a probe's thread runs: its SM (%smid) and the GPU's global timer in ns (%globaltimer).
__device__ inline unsigned smid() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

__device__ inline unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
