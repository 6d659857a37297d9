// Names of the trace enums (the same words in YAML, JSON and CLI output) and stream totals.
#include "memhier/trace.h"

#include <algorithm>

namespace memhier {
namespace {

constexpr std::array<std::string_view, kAddressSpaceCount> kSpaceNames{"global", "shared", "local", "constant",
                                                                       "texture"};
constexpr std::array<std::string_view, kAccessKindCount> kKindNames{"load",      "store",      "atomic",
                                                                    "reduction", "async_copy", "bulk_copy"};
constexpr std::array<std::string_view, kCacheHintCount> kHintNames{"default", "cg", "cs", "nc"};
constexpr std::array<std::string_view, 3> kPropertyNames{"normal", "streaming", "persisting"};

template <typename Enum, std::size_t N>
bool parse_name(const std::array<std::string_view, N>& names, std::string_view text, Enum& out) {
  auto it = std::find(names.begin(), names.end(), text);
  if (it == names.end()) return false;
  out = static_cast<Enum>(it - names.begin());
  return true;
}

}  // namespace

std::size_t TraceSource::next_blocks(std::span<BlockTrace> out, int /*threads*/) {
  std::size_t n = 0;
  while (n < out.size() && next_block(out[n])) ++n;
  return n;
}

std::string_view to_string(AddressSpace s) { return kSpaceNames.at(static_cast<std::size_t>(s)); }
std::string_view to_string(AccessKind k) { return kKindNames.at(static_cast<std::size_t>(k)); }
std::string_view to_string(CacheHint h) { return kHintNames.at(static_cast<std::size_t>(h)); }
std::string_view to_string(L2Property p) { return kPropertyNames.at(static_cast<std::size_t>(p)); }

bool parse_address_space(std::string_view text, AddressSpace& out) { return parse_name(kSpaceNames, text, out); }
bool parse_access_kind(std::string_view text, AccessKind& out) { return parse_name(kKindNames, text, out); }
bool parse_cache_hint(std::string_view text, CacheHint& out) { return parse_name(kHintNames, text, out); }
bool parse_l2_property(std::string_view text, L2Property& out) { return parse_name(kPropertyNames, text, out); }

void TraceCounts::add(const BlockTrace& b) {
  ++blocks;
  warps += b.warp_count();
  for (const WarpRecord& r : b.records) {
    work += r.work;
    if (!r.is_memory()) {
      ++barriers;
      continue;
    }
    ++memory_instructions;
    lane_accesses += static_cast<std::uint64_t>(r.active_lanes());
    ++by_space.at(static_cast<std::size_t>(r.space));
    ++by_kind.at(static_cast<std::size_t>(r.kind));
  }
}

TraceCounts& TraceCounts::operator+=(const TraceCounts& o) {
  blocks += o.blocks;
  warps += o.warps;
  memory_instructions += o.memory_instructions;
  barriers += o.barriers;
  lane_accesses += o.lane_accesses;
  work += o.work;
  for (std::size_t i = 0; i < by_space.size(); ++i) by_space.at(i) += o.by_space.at(i);
  for (std::size_t i = 0; i < by_kind.size(); ++i) by_kind.at(i) += o.by_kind.at(i);
  return *this;
}

}  // namespace memhier
