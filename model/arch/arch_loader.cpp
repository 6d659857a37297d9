#include "memhier/arch_loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "memhier/arch_schema.h"
#include "memhier/suggest.h"

namespace memhier {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxExtendsDepth = 8;

SourceLocation at(const std::string& file, const YAML::Mark& mark) {
  SourceLocation loc{file};
  if (mark.line >= 0) {
    loc.line = mark.line + 1;
    loc.column = mark.column + 1;
  }
  return loc;
}

std::string suggestion(const std::string& key) {
  std::vector<std::string_view> keys;
  for (const ArchField& f : arch_fields()) keys.emplace_back(f.key);
  return did_you_mean(key, keys);
}

bool is_section(const std::string& key) {
  std::string prefix = key + ".";
  for (const ArchField& f : arch_fields()) {
    if (f.key.starts_with(prefix)) return true;
  }
  return false;
}

struct Leaf {
  YAML::Node value;
  YAML::Mark mark;
};

// Flattens nested mappings into dotted keys, rejecting unknown keys, duplicates and wrongly shaped nodes.
void collect(const YAML::Node& map, const std::string& prefix, const std::string& file,
             std::map<std::string, Leaf>& leaves) {
  for (const auto& entry : map) {
    const YAML::Node& key_node = entry.first;
    if (!key_node.IsScalar()) throw InputError(at(file, key_node.Mark()), prefix, "keys must be plain names");
    std::string key = prefix.empty() ? key_node.Scalar() : prefix + "." + key_node.Scalar();
    if (leaves.contains(key)) throw InputError(at(file, key_node.Mark()), key, "duplicate key");
    const YAML::Node& value = entry.second;
    const ArchField* field = find_arch_field(key);
    bool known_leaf = field != nullptr || (prefix.empty() && key == "extends");
    if (value.IsMap()) {
      if (known_leaf) throw InputError(at(file, value.Mark()), key, "expected a value, got a mapping");
      if (!is_section(key)) throw InputError(at(file, key_node.Mark()), key, "unknown key" + suggestion(key));
      leaves[key] = Leaf{YAML::Node(), key_node.Mark()};  // marks the section as seen, for duplicate detection
      collect(value, key, file, leaves);
      continue;
    }
    if (!known_leaf) {
      if (is_section(key)) throw InputError(at(file, value.Mark()), key, "expected a mapping of keys");
      throw InputError(at(file, key_node.Mark()), key, "unknown key" + suggestion(key));
    }
    leaves[key] = Leaf{value, value.Mark()};
  }
}

void apply_field(Arch& arch, const ArchField& field, const Leaf& leaf, const std::string& file) {
  const YAML::Node& v = leaf.value;
  SourceLocation loc = at(file, leaf.mark);
  try {
    if (field.kind == FieldKind::bytes_list || field.kind == FieldKind::number_list) {
      const char* expected = field.kind == FieldKind::bytes_list ? "expected a list of sizes such as [0KiB, 8KiB]"
                                                                 : "expected a list of numbers such as [0, 0.5]";
      if (!v.IsSequence()) throw std::invalid_argument(expected);
      std::vector<std::string> items;
      for (const auto& item : v) {
        if (!item.IsScalar()) throw std::invalid_argument(expected);
        items.push_back(item.Scalar());
      }
      set_arch_field(arch, field, items);
    } else {
      if (!v.IsScalar()) {
        throw std::invalid_argument(fmt::format("expected a single {} value", to_string(field.kind)));
      }
      set_arch_field(arch, field, v.Scalar());
    }
  } catch (const std::invalid_argument& e) {
    throw InputError(loc, std::string(field.key), e.what());
  }
  arch.key_origin[std::string(field.key)] = loc;
}

Arch load_node(const YAML::Node& root, const std::string& file, const fs::path& dir, int depth);

// The accuracy record (AccuracyRecord) is one measurement: a file that sets some of its keys sets them all, or a
// what-if's one changed number would pass for a measurement of its own beside the inherited rest. A file that sets
// them is the GPU they were measured on.
void check_accuracy_record(const std::map<std::string, Leaf>& leaves, const std::string& file, Arch& arch) {
  std::string missing;
  const Leaf* first = nullptr;
  std::string first_key;
  for (const ArchField& f : arch_fields()) {
    if (!f.key.starts_with("accuracy.")) continue;
    const auto it = leaves.find(std::string(f.key));
    if (it == leaves.end()) {
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", f.key);
    } else if (first == nullptr) {
      first = &it->second;
      first_key = f.key;
    }
  }
  if (first == nullptr) return;  // none set here: the base's record, if any, stays with its measured_on
  if (!missing.empty())
    throw InputError(
        at(file, first->mark), first_key,
        fmt::format("the accuracy record is one measurement: set all of its keys or none (missing: {})", missing));
  arch.accuracy.measured_on = arch.name;
}

Arch load_text(const std::string& text, const std::string& file, const fs::path& dir, int depth) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(at(file, e.mark), "", "YAML syntax error: " + e.msg);
  }
  if (!root.IsMap()) throw InputError(SourceLocation{file, 1, 1}, "", "an architecture file must be a YAML mapping");
  return load_node(root, file, dir, depth);
}

std::string read_file(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw InputError(SourceLocation{path.string()}, "", "a folder, not an architecture file");
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))  // a device or pipe would be read without end
    throw InputError(SourceLocation{path.string()}, "", "not a regular file (a device, pipe or socket)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path.string()}, "", "cannot open architecture file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Arch load_base(const Leaf& extends, const std::string& file, const fs::path& dir, int depth) {
  if (!extends.value.IsScalar()) throw InputError(at(file, extends.mark), "extends", "expected an architecture name");
  if (depth >= kMaxExtendsDepth) {
    throw InputError(at(file, extends.mark), "extends", "chain of 'extends' is too deep (is there a cycle?)");
  }
  const std::string& name = extends.value.Scalar();
  fs::path sibling = dir / (name + ".yaml");
  fs::path base_path;
  try {
    std::error_code ec;  // a name no file can have (too long, say) is no sibling: find_arch_file() says unknown
    base_path = fs::exists(sibling, ec) ? sibling : find_arch_file(name);
  } catch (const InputError& e) {
    throw InputError(at(file, extends.mark), "extends", e.message());
  }
  return load_text(read_file(base_path), base_path.string(), base_path.parent_path(), depth + 1);
}

Arch load_node(const YAML::Node& root, const std::string& file, const fs::path& dir, int depth) {
  std::map<std::string, Leaf> leaves;
  collect(root, "", file, leaves);
  Arch arch;
  auto extends = leaves.find("extends");
  bool has_base = extends != leaves.end();
  if (has_base) arch = load_base(extends->second, file, dir, depth);
  for (const ArchField& field : arch_fields()) {
    auto it = leaves.find(std::string(field.key));
    if (it != leaves.end()) {
      apply_field(arch, field, it->second, file);
    } else if (field.required && !has_base) {
      throw InputError(SourceLocation{file, 1, 1}, std::string(field.key),
                       fmt::format("missing required key ({}: {})", to_string(field.kind), field.description));
    }
  }
  if (has_base && !leaves.contains("name")) {
    throw InputError(SourceLocation{file, 1, 1}, "name", "a file that extends another must set its own name");
  }
  check_accuracy_record(leaves, file, arch);
  arch.source_file = file;
  validate_arch(arch);
  return arch;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

Arch load_arch_file(const fs::path& path) { return load_text(read_file(path), path.string(), path.parent_path(), 0); }

Arch load_arch_string(const std::string& yaml_text, const std::string& label) {
  return load_text(yaml_text, label, fs::path(), 0);
}

std::vector<fs::path> arch_search_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("MEMHIER_ARCH_PATH"); env != nullptr && *env != '\0') {
    std::string_view s = env;
    while (!s.empty()) {
      auto colon = s.find(':');
      if (colon != 0) dirs.emplace_back(s.substr(0, colon));
      s = colon == std::string_view::npos ? std::string_view() : s.substr(colon + 1);
    }
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "share" / "memhier" / "archs");  // relocated install
#ifdef MEMHIER_SOURCE_ARCH_DIR
  dirs.emplace_back(MEMHIER_SOURCE_ARCH_DIR);
#endif
#ifdef MEMHIER_INSTALL_ARCH_DIR
  dirs.emplace_back(MEMHIER_INSTALL_ARCH_DIR);
#endif
  return dirs;
}

std::vector<fs::path> list_arch_files() {
  std::map<std::string, fs::path> by_name;
  for (const fs::path& dir : arch_search_dirs()) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".yaml") by_name.emplace(entry.path().stem().string(), entry.path());
    }
  }
  std::vector<fs::path> files;
  files.reserve(by_name.size());
  for (auto& [name, path] : by_name) files.push_back(path);
  return files;
}

fs::path find_arch_file(const std::string& name_or_path) {
  bool looks_like_path =
      name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml") || name_or_path.ends_with(".yml");
  // A path the file system refuses (too long, say) is no file: an InputError below, not the file system's own throw.
  std::error_code ec;
  if (looks_like_path) {
    if (!fs::is_regular_file(name_or_path, ec)) {
      throw InputError(SourceLocation{name_or_path}, "", "no such architecture file");
    }
    return name_or_path;
  }
  std::string name = lower(name_or_path);
  for (const fs::path& dir : arch_search_dirs()) {
    fs::path candidate = dir / (name + ".yaml");
    if (fs::is_regular_file(candidate, ec)) return candidate;
  }
  std::string known;
  for (const fs::path& p : list_arch_files()) known += (known.empty() ? "" : ", ") + p.stem().string();
  throw InputError(SourceLocation{}, "arch",
                   fmt::format("unknown architecture '{}' (known: {}; or give a path to a .yaml file)", name_or_path,
                               known.empty() ? "none found; set MEMHIER_ARCH_PATH" : known));
}

Arch load_arch(const std::string& name_or_path) { return load_arch_file(find_arch_file(name_or_path)); }

}  // namespace memhier
