#pragma once
// Accel-Sim trace interop: import `kernelslist.g` + `kernel-N.traceg` (tracer versions 3 to 5, all three address
// modes, optional line info) and export memory-only traces its parser accepts. Format notes: docs/accelsim.md.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "memhier/trace.h"

namespace memhier {

// Synthetic generic-address windows used when exporting shared and local accesses (Accel-Sim tells the spaces apart
// by the header's base addresses).
inline constexpr std::uint64_t kAccelSimSharedBase = 0x00007ffe00000000ULL;
inline constexpr std::uint64_t kAccelSimLocalBase = 0x00007ffe01000000ULL;

// Reads a kernelslist.g (or the directory holding one, or a single .traceg file).
class AccelSimReader final : public TraceSource {
 public:
  explicit AccelSimReader(const std::filesystem::path& path);
  ~AccelSimReader() override;
  bool next_kernel(KernelLaunch& launch) override;
  bool next_block(BlockTrace& block) override;
  [[nodiscard]] const std::vector<std::filesystem::path>& kernel_files() const { return m_files; }

 private:
  struct State;
  std::vector<std::filesystem::path> m_files;
  std::size_t m_next = 0;
  std::unique_ptr<State> m_state;
};

// Writes every launch of `source` as dir/kernel-N.traceg plus dir/kernelslist.g. Returns the launches written.
std::size_t write_accelsim(TraceSource& source, const std::filesystem::path& dir);

}  // namespace memhier
