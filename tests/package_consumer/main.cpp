#include <memhier/memhier.h>

#include <cstdio>

int main() {
  memhier::Arch arch = memhier::load_arch_file(std::string(ARCH_DIR) + "/h100.yaml");
  memhier::LaunchResources launch{256, 32, 0, 0, -1, 1, true};
  std::printf("%s %d\n", arch.name.c_str(), memhier::compute_occupancy(arch, launch).blocks_per_sm);
  return 0;
}
