// JSON form of launches and trace totals. Reading checks every field, since it also reads untrusted files.
#include "memhier/trace_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace memhier {
namespace {

using nlohmann::json;

json dim_to_json(const Dim3& d) { return json::array({d.x, d.y, d.z}); }

template <typename T>
T get(const json& j, const char* key) {
  if (!j.contains(key)) throw std::invalid_argument(fmt::format("missing field '{}'", key));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(fmt::format("field '{}' has the wrong type", key));
  }
}

Dim3 dim_from_json(const json& j, const char* key) {
  auto v = get<std::vector<std::uint32_t>>(j, key);
  if (v.size() != 3 || v[0] == 0 || v[1] == 0 || v[2] == 0)
    throw std::invalid_argument(fmt::format("field '{}' must be three positive integers", key));
  return {v[0], v[1], v[2]};
}

L2Property property(const json& j, const char* key) {
  L2Property p{};
  if (!parse_l2_property(get<std::string>(j, key), p))
    throw std::invalid_argument(fmt::format("field '{}' is not normal, streaming or persisting", key));
  return p;
}

}  // namespace

json window_to_json(const AccessPolicyWindow& w) {
  return {{"base", w.base},
          {"bytes", w.bytes},
          {"hit_ratio", w.hit_ratio},
          {"hit_prop", to_string(w.hit_prop)},
          {"miss_prop", to_string(w.miss_prop)}};
}

json launch_to_json(const KernelLaunch& k) {
  json windows = json::array();
  for (const AccessPolicyWindow& w : k.windows) windows.push_back(window_to_json(w));
  return {{"name", k.name},
          {"grid", dim_to_json(k.grid)},
          {"block", dim_to_json(k.block)},
          {"cluster", dim_to_json(k.cluster)},
          {"registers_per_thread", k.registers_per_thread},
          {"static_shared_bytes", k.static_shared_bytes},
          {"dynamic_shared_bytes", k.dynamic_shared_bytes},
          {"local_bytes_per_thread", k.local_bytes_per_thread},
          {"captured_arch", k.captured_arch},
          {"windows", windows},
          {"persisting_set_aside_bytes", k.persisting_set_aside_bytes},
          {"reset_persisting", k.reset_persisting},
          {"source", k.source}};
}

KernelLaunch launch_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("launch is not an object");
  KernelLaunch k;
  k.name = get<std::string>(j, "name");
  k.grid = dim_from_json(j, "grid");
  k.block = dim_from_json(j, "block");
  k.cluster = dim_from_json(j, "cluster");
  if (k.block.count() > 1024) throw std::invalid_argument(fmt::format("block of {} threads", k.block.count()));
  k.registers_per_thread = get<std::uint32_t>(j, "registers_per_thread");
  if (k.registers_per_thread > 255)  // every GPU since Kepler: 255 a thread at most
    throw std::invalid_argument(
        fmt::format("field 'registers_per_thread' is {}; a thread has 0 to 255", k.registers_per_thread));
  k.static_shared_bytes = get<std::uint32_t>(j, "static_shared_bytes");
  k.dynamic_shared_bytes = get<std::uint32_t>(j, "dynamic_shared_bytes");
  k.local_bytes_per_thread = get<std::uint32_t>(j, "local_bytes_per_thread");
  k.captured_arch = get<std::string>(j, "captured_arch");
  const json& windows = j.contains("windows") ? j.at("windows") : json::array();
  if (!windows.is_array()) throw std::invalid_argument("field 'windows' is not a list");
  for (const json& w : windows) {
    AccessPolicyWindow win;
    win.base = get<std::uint64_t>(w, "base");
    win.bytes = get<std::uint64_t>(w, "bytes");
    win.hit_ratio = get<double>(w, "hit_ratio");
    if (!(win.hit_ratio >= 0.0 && win.hit_ratio <= 1.0)) throw std::invalid_argument("window hit_ratio outside [0, 1]");
    win.hit_prop = property(w, "hit_prop");
    win.miss_prop = property(w, "miss_prop");
    k.windows.push_back(win);
  }
  k.persisting_set_aside_bytes = get<std::uint64_t>(j, "persisting_set_aside_bytes");
  k.reset_persisting = get<bool>(j, "reset_persisting");
  k.source = get<std::string>(j, "source");
  return k;
}

json counts_to_json(const TraceCounts& c) {
  json by_space = json::object();
  for (int s = 0; s < kAddressSpaceCount; ++s)
    by_space[std::string(to_string(static_cast<AddressSpace>(s)))] = c.by_space.at(static_cast<std::size_t>(s));
  json by_kind = json::object();
  for (int k = 0; k < kAccessKindCount; ++k)
    by_kind[std::string(to_string(static_cast<AccessKind>(k)))] = c.by_kind.at(static_cast<std::size_t>(k));
  return {{"blocks", c.blocks},
          {"warps", c.warps},
          {"memory_instructions", c.memory_instructions},
          {"barriers", c.barriers},
          {"lane_accesses", c.lane_accesses},
          {"work", c.work},
          {"by_space", by_space},
          {"by_kind", by_kind}};
}

TraceCounts counts_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("counts is not an object");
  TraceCounts c;
  c.blocks = get<std::uint64_t>(j, "blocks");
  c.warps = get<std::uint64_t>(j, "warps");
  c.memory_instructions = get<std::uint64_t>(j, "memory_instructions");
  c.barriers = get<std::uint64_t>(j, "barriers");
  c.lane_accesses = get<std::uint64_t>(j, "lane_accesses");
  c.work = get<std::uint64_t>(j, "work");
  const json by_space = get<json>(j, "by_space");
  for (int s = 0; s < kAddressSpaceCount; ++s)
    c.by_space.at(static_cast<std::size_t>(s)) =
        get<std::uint64_t>(by_space, std::string(to_string(static_cast<AddressSpace>(s))).c_str());
  const json by_kind = get<json>(j, "by_kind");
  for (int k = 0; k < kAccessKindCount; ++k)
    c.by_kind.at(static_cast<std::size_t>(k)) =
        get<std::uint64_t>(by_kind, std::string(to_string(static_cast<AccessKind>(k))).c_str());
  return c;
}

std::string json_text(const json& j, int indent) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

std::string utf8_text(const std::string& s) {
  if (std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) return s;
  return json::parse(json_text(json(s))).get<std::string>();  // the same replacement, whatever nlohmann's rules
}

}  // namespace memhier
