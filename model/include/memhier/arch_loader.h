#pragma once
// Strict loading of architecture YAML files: unknown, missing, mistyped or impossible values are InputErrors naming
// file, line, column and key. `extends: NAME` starts from another architecture and overrides some keys.
#include <filesystem>
#include <string>
#include <vector>

#include "memhier/arch.h"

namespace memhier {

Arch load_arch_file(const std::filesystem::path& path);
// For tests and embedded use: `label` stands in for the file name in errors; `extends` is looked up by name.
Arch load_arch_string(const std::string& yaml_text, const std::string& label);
// Throws InputError pointing at the key (and file) that set the offending value.
void validate_arch(const Arch& arch);

// Resolves NAME or a path to an architecture file. Search order for a bare name: $MEMHIER_ARCH_PATH (colon
// separated), the source tree's archs/, the installed share/memhier/archs. Names are case-insensitive.
std::filesystem::path find_arch_file(const std::string& name_or_path);
std::vector<std::filesystem::path> arch_search_dirs();
// Every *.yaml in the first search directory that has any, sorted by name.
std::vector<std::filesystem::path> list_arch_files();
Arch load_arch(const std::string& name_or_path);

}  // namespace memhier
