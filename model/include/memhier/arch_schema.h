#pragma once
// The architecture schema: one typed, documented entry per YAML key. The loader, `archs show`, JSON output and
// what-if sweeps (`--vary l2.size=...`) all go through this table, so a parameter is declared exactly once.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "memhier/arch.h"

namespace memhier {

enum class FieldKind {
  text,             // free text
  version,          // "9.0"
  count,            // non-negative integer
  bytes,            // "50MiB"
  bytes_list,       // [0KiB, 8KiB, ...]
  number_list,      // [0, 0.5, 2.75]: plain numbers
  bandwidth,        // "3.35TB/s"
  bytes_per_clock,  // "128B/clk"
  frequency,        // "1980MHz"
  cycles,           // plain number of SM cycles (key ends in _cycles)
  number,           // plain number without a unit
  duration,         // "2.5us"
  replacement,      // lru | plru
};

using FieldRef = std::variant<std::string*, ComputeCapability*, int*, std::uint64_t*, std::vector<std::uint64_t>*,
                              double*, Replacement*, std::vector<double>*>;

struct ArchField {
  std::string_view key;  // dotted path, e.g. "l2.size"
  FieldKind kind;
  bool required;
  std::string_view description;
  FieldRef (*ref)(Arch&);
};

std::span<const ArchField> arch_fields();
const ArchField* find_arch_field(std::string_view key);  // nullptr if unknown

// Sets one field from its textual form, as written in YAML or on the command line. Throws std::invalid_argument.
void set_arch_field(Arch& arch, const ArchField& field, std::string_view text);
// A list's items (bytes_list, number_list).
void set_arch_field(Arch& arch, const ArchField& field, const std::vector<std::string>& items);
// The value in its canonical textual form (what `archs show` prints and what set_arch_field accepts back).
std::string format_arch_field(const Arch& arch, const ArchField& field);

std::string_view to_string(FieldKind kind);

}  // namespace memhier
