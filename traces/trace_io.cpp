#include "memhier/trace_io.h"

#include <fmt/format.h>

#include <array>
#include <fstream>

#include "memhier/accelsim.h"
#include "memhier/error.h"
#include "memhier/mht.h"

namespace memhier {
namespace fs = std::filesystem;

TraceFormat detect_trace_format(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError({path.string()}, "", "no such file or directory");
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / "kernelslist.g", ec)) return TraceFormat::accelsim;
    throw InputError({path.string()}, "", "a directory, but without the kernelslist.g of an Accel-Sim trace");
  }
  // A device, pipe or socket (/dev/zero named k.yaml) would be read without end.
  if (!fs::is_regular_file(path, ec))
    throw InputError({path.string()}, "", "not a regular file (a device, pipe or socket)");
  const std::string ext = path.extension().string();
  if (ext == ".yaml" || ext == ".yml") return TraceFormat::description;
  if (ext == ".mht") return TraceFormat::mht;
  if (ext == ".g" || ext == ".traceg") return TraceFormat::accelsim;
  std::ifstream in(path, std::ios::binary);
  std::array<char, 4> head{};
  in.read(head.data(), head.size());
  if (in && head[0] == '\x89' && head[1] == 'M' && head[2] == 'H' && head[3] == 'T') return TraceFormat::mht;
  throw InputError({path.string()}, "",
                   "unknown trace format: expected a kernel description (.yaml), a .mht trace, or an Accel-Sim "
                   "kernelslist.g / .traceg");
}

std::unique_ptr<TraceSource> open_trace(const fs::path& path, const std::vector<ParamOverride>& sets) {
  const TraceFormat f = detect_trace_format(path);
  if (f != TraceFormat::description && !sets.empty())
    throw InputError({"--set"}, sets.front().name,
                     fmt::format("--set applies to kernel descriptions; {} is a trace", path.string()));
  switch (f) {
    case TraceFormat::description:
      return load_kernel_description(path, sets);
    case TraceFormat::mht:
      return std::make_unique<MhtReader>(path);
    case TraceFormat::accelsim:
      return std::make_unique<AccelSimReader>(path);
  }
  return nullptr;
}

}  // namespace memhier
