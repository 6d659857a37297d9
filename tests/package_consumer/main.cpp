#include <memhier/kernel_desc.h>
#include <memhier/memhier.h>

#include <cstdio>

int main() {
  memhier::Arch arch = memhier::load_arch_file(std::string(ARCH_DIR) + "/h100.yaml");
  memhier::LaunchResources launch{256, 32, 0, 0, -1, 1, true};
  // A kernel description through the installed library (muparser and zstd come in through the package config).
  auto trace = memhier::load_kernel_description_string(
      "kernel: k\nlaunch: {grid: 2, block: 64, registers: 16}\narrays: {x: {element: 4, length: 128}}\n"
      "body: [{load: 'x[blockIdx.x * 64 + threadIdx.x]'}]\n",
      "inline.yaml");
  memhier::KernelLaunch k;
  memhier::BlockTrace b;
  memhier::TraceCounts counts;
  while (trace->next_kernel(k))
    while (trace->next_block(b)) counts.add(b);
  std::printf("%s %d %llu\n", arch.name.c_str(), memhier::compute_occupancy(arch, launch).blocks_per_sm,
              static_cast<unsigned long long>(counts.memory_instructions));
  return 0;
}
