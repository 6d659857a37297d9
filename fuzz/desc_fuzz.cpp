// libFuzzer target for kernel descriptions: any bytes as a description must load and generate records or give an
// InputError naming the description (or the --set it came from), never a crash, a hang, an unbounded allocation or
// another exception. Blocks are taken in parts of 32 records a warp, as the simulator takes long ones, and the first
// 8 blocks of the first 4 launches with up to 4 parts a warp are generated, so a description's size bounds nothing
// here; every memory record a block gives has as many addresses as active lanes.
#include <bit>
#include <cstdint>
#include <string>

#include "memhier/error.h"
#include "memhier/kernel_desc.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  const std::string label = "fuzz.yaml";
  auto check = [](const memhier::BlockTrace& b) {
    memhier::LaneBuffer buffer;
    for (const memhier::WarpRecord& r : b.records)
      if (r.is_memory() && b.lane_addresses(r, buffer).size() != static_cast<std::size_t>(std::popcount(r.active_mask)))
        __builtin_trap();
  };
  try {
    auto source = memhier::load_kernel_description_string(yaml, label);
    memhier::KernelLaunch launch;
    memhier::BlockTrace block;
    block.part_records = 32;
    block.compact_strided = true;
    for (int k = 0; k < 4 && source->next_kernel(launch); ++k) {
      for (int n = 0; n < 8 && source->next_block(block); ++n) {
        check(block);
        if (!block.rest) continue;
        memhier::BlockTrace part;
        part.part_records = 32;
        part.compact_strided = true;
        for (std::size_t w = 0; w < block.warp_count(); ++w)
          for (int p = 0; p < 4 && block.rest->next(w, part); ++p) check(part);
      }
    }
  } catch (const memhier::InputError& e) {
    if (e.where().file != label) __builtin_trap();
  }
  return 0;
}
