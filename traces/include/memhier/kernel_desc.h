#pragma once
// Kernel descriptions: a kernel's access pattern in YAML, before the kernel exists (docs/kernel-descriptions.md).
// Loading checks the whole description; the returned source then generates the exact per-warp trace on demand,
// one block at a time, so a description of any size streams in bounded memory.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "memhier/trace.h"

namespace memhier {

// `--set name=expression` from the command line; replaces the parameter's expression in the file.
struct ParamOverride {
  std::string name;
  std::string expression;
};
// Parses "name=expression"; throws InputError naming the flag.
ParamOverride parse_param_override(const std::string& text);

struct DescribedArray {
  std::string name;
  AddressSpace space = AddressSpace::global;
  std::uint32_t element_bytes = 4;
  std::uint64_t length = 0;  // elements
  std::uint64_t base = 0;    // global: virtual address; shared/local/constant: offset in its window
  [[nodiscard]] std::uint64_t bytes() const { return length * element_bytes; }
};

// What a loaded description resolved to, for reports.
struct DescriptionInfo {
  std::string kernel;
  std::string summary;
  std::vector<std::pair<std::string, std::int64_t>> params;  // in file order, after --set
  std::vector<DescribedArray> arrays;
  std::map<std::uint32_t, int> pc_lines;  // pc of each access or barrier -> line in the file
  std::uint32_t launches = 1;
};

class DescriptionSource : public TraceSource {
 public:
  [[nodiscard]] virtual const DescriptionInfo& info() const = 0;
  [[nodiscard]] virtual const KernelLaunch& launch() const = 0;
};

std::unique_ptr<DescriptionSource> load_kernel_description(const std::filesystem::path& path,
                                                           const std::vector<ParamOverride>& overrides = {});
std::unique_ptr<DescriptionSource> load_kernel_description_string(const std::string& yaml, const std::string& label,
                                                                  const std::vector<ParamOverride>& overrides = {});
// The parameters the description at `path` declares (its `params` keys, in file order; none where it has no such
// mapping). Reads the YAML only: load_kernel_description() checks the rest. Throws InputError where the file cannot be
// read or is not YAML.
std::vector<std::string> description_param_names(const std::filesystem::path& path);

}  // namespace memhier
