// libFuzzer target for the .mht reader: any byte string must give records or an InputError, never a crash, a hang
// or an unbounded allocation.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "memhier/error.h"
#include "memhier/mht.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("memhier_fuzz_" + std::to_string(getpid()) + ".mht");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    memhier::MhtReader reader(path);
    memhier::KernelLaunch launch;
    memhier::BlockTrace block;
    while (reader.next_kernel(launch))
      while (reader.next_block(block)) {
      }
  } catch (const memhier::InputError&) {
    // the expected outcome for damaged input
  }
  std::error_code ignored;
  std::filesystem::remove(path, ignored);  // each input's file goes; none is left in the temp folder
  return 0;
}
