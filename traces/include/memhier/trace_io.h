#pragma once
// Opening any trace by its path: kernel description (.yaml/.yml), .mht, or Accel-Sim (kernelslist.g, its directory,
// or one .traceg). Everything downstream sees only a TraceSource.
#include <filesystem>
#include <memory>
#include <vector>

#include "memhier/kernel_desc.h"
#include "memhier/trace.h"

namespace memhier {

enum class TraceFormat { description, mht, accelsim };

// By extension, falling back on the file's first bytes. Throws InputError for a path that is none of them.
TraceFormat detect_trace_format(const std::filesystem::path& path);
// `sets` apply to kernel descriptions; giving them for another format is an error.
std::unique_ptr<TraceSource> open_trace(const std::filesystem::path& path, const std::vector<ParamOverride>& sets = {});

}  // namespace memhier
