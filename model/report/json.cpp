#include <climits>

#include "memhier/arch_schema.h"
#include "memhier/report.h"
#include "memhier/trace_json.h"

namespace memhier {
namespace {

nlohmann::json field_value(const Arch& arch, const ArchField& field) {
  FieldRef ref = field.ref(const_cast<Arch&>(arch));  // read only
  switch (field.kind) {
    case FieldKind::count:
      return *std::get<int*>(ref);
    case FieldKind::bytes:
      return *std::get<std::uint64_t*>(ref);
    case FieldKind::bytes_list:
      return *std::get<std::vector<std::uint64_t>*>(ref);
    case FieldKind::number_list:
      return *std::get<std::vector<double>*>(ref);
    case FieldKind::bandwidth:
    case FieldKind::bytes_per_clock:
    case FieldKind::frequency:
    case FieldKind::cycles:
    case FieldKind::number:
    case FieldKind::duration:
      return *std::get<double*>(ref);
    case FieldKind::text:
    case FieldKind::version:
    case FieldKind::replacement:
      break;
  }
  return format_arch_field(arch, field);
}

nlohmann::json::json_pointer pointer_for(std::string_view dotted_key) {
  std::string path(1, '/');  // built by appending: GCC 12 reports a false -Wrestrict on "/" + string
  for (char c : dotted_key) path.push_back(c == '.' ? '/' : c);
  return nlohmann::json::json_pointer(path);
}

nlohmann::json limit(int blocks) { return blocks == INT_MAX ? nlohmann::json(nullptr) : nlohmann::json(blocks); }

}  // namespace

nlohmann::json arch_to_json(const Arch& arch) {
  nlohmann::json out = nlohmann::json::object();
  for (const ArchField& field : arch_fields()) {
    out[pointer_for(field.key)] = field_value(arch, field);
  }
  out["source_file"] = arch.source_file;
  return out;
}

nlohmann::json occupancy_to_json(const Occupancy& o) {
  return {
      {"blocks_per_sm", o.blocks_per_sm},
      {"limiters", limiter_names(o.limiters)},
      {"blocks_limit",
       {{"warps", limit(o.blocks_by_warps)},
        {"registers", limit(o.blocks_by_registers)},
        {"shared_memory", limit(o.blocks_by_shared_memory)},
        {"blocks", limit(o.blocks_by_blocks)},
        {"barriers", limit(o.blocks_by_barriers)}}},
      {"warps_per_block", o.warps_per_block},
      {"active_warps_per_sm", o.active_warps_per_sm},
      {"occupancy", o.occupancy},
      {"allocated_registers_per_block", o.allocated_registers_per_block},
      {"allocated_shared_bytes_per_block", o.allocated_shared_per_block},
      {"shared_carveout_bytes", o.shared_carveout},
      {"l1_capacity_bytes", o.l1_capacity},
      {"not_launchable", o.not_launchable.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.not_launchable)},
  };
}

nlohmann::json residency_to_json(const L2Residency& r) {
  nlohmann::json windows = nlohmann::json::array();
  for (const AccessPolicyWindow& w : r.windows) windows.push_back(window_to_json(w));
  return {{"set_aside_requested_bytes", r.set_aside_requested},
          {"set_aside_granted_bytes", r.set_aside_granted},
          {"persisting_ways", r.persisting_ways},
          {"dirty_ways", r.dirty_ways},
          {"windows", windows},
          {"left_out", r.left_out}};
}

}  // namespace memhier
