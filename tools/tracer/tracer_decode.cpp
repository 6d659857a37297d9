// Record stream -> BlockTrace, grouped by block and warp. Records of one warp were reserved in issue order (each warp
// runs its instructions one after another), so a stable grouping by (block, warp) keeps program order.
#include "tracer_decode.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "memhier/error.h"
#include "tracer_record.h"

namespace memhier::tracer {
namespace {

struct Located {
  std::uint64_t key;     // block << 16 | warp
  std::uint64_t offset;  // of the RecordHeader in the stream
};

std::string short_name(std::string s) {
  if (!s.empty() && s.back() == ')') {  // drop the parameter list: back to the '(' matching the last ')'
    int depth = 0;
    for (std::size_t i = s.size(); i-- > 0;) {
      depth += s[i] == ')' ? 1 : s[i] == '(' ? -1 : 0;
      if (depth == 0) {
        s.resize(i);
        break;
      }
    }
  }
  int depth = 0;  // drop template arguments
  std::string out;
  for (char c : s) {
    if (c == '<') ++depth;
    if (depth == 0) out += c;
    if (c == '>') --depth;
  }
  if (const auto colon = out.rfind("::"); colon != std::string::npos) out = out.substr(colon + 2);
  if (const auto space = out.rfind(' '); space != std::string::npos) out = out.substr(space + 1);  // return type
  return out;
}

WarpRecord base_record(const RecordHeader& h, std::uint64_t function_pc) {
  WarpRecord r;
  r.pc = static_cast<std::uint32_t>(h.pc >= function_pc ? h.pc - function_pc : h.pc);
  r.active_mask = h.mask;
  r.size = static_cast<std::uint8_t>(h.size == 0 ? 4 : h.size);
  r.space = h.space == kShared ? AddressSpace::shared : h.space == kLocal ? AddressSpace::local : AddressSpace::global;
  switch (h.type) {
    case kStore:
      r.kind = AccessKind::store;
      break;
    case kAtomic:
      r.kind = AccessKind::atomic;
      break;
    case kAsyncCopy:
      r.kind = AccessKind::async_copy;
      break;
    case kBulkCopy:
      r.kind = AccessKind::bulk_copy;
      break;
    default:
      r.kind = AccessKind::load;
      break;
  }
  if (h.type == kBarrier) r.record = RecordKind::barrier;
  return r;
}

}  // namespace

std::string demangled_name(const char* mangled) {
  if (mangled == nullptr) return "unknown";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return short_name(status == 0 && d ? std::string(d.get()) : std::string(mangled));
}

std::string arch_from_device_name(const std::string& device) {
  static const std::pair<const char*, const char*> table[] = {
      {"H200", "h200"}, {"H100", "h100"}, {"B200", "b200"},       {"A100", "a100"},
      {"V100", "v100"}, {"L40S", "l40s"}, {"RTX 4090", "rtx4090"}};
  for (const auto& [needle, arch] : table)
    if (device.find(needle) != std::string::npos) return arch;
  return "";
}

DecodeStats write_launch(MhtWriter& writer, const KernelLaunch& launch, std::uint64_t function_pc, std::uint32_t sample,
                         std::span<const unsigned char> bytes) {
  const std::uint64_t blocks = launch.grid.count();
  const std::uint32_t warps = launch.warps_per_block();
  std::vector<Located> found;
  for (std::uint64_t off = 0; off < bytes.size();) {
    if (off + sizeof(RecordHeader) > bytes.size())
      throw InputError({"tracer records of " + launch.name, 0, 0, static_cast<std::int64_t>(off)}, "",
                       fmt::format("record header runs past the end ({} bytes)", bytes.size()));
    RecordHeader h;
    std::memcpy(&h, bytes.data() + off, sizeof h);
    const std::uint64_t size = sizeof h + 8ULL * h.address_count;
    if (off + size > bytes.size() || h.block >= blocks || h.warp >= warps)
      throw InputError({"tracer records of " + launch.name, 0, 0, static_cast<std::int64_t>(off)}, "",
                       fmt::format("bad record (block {}, warp {}, {} values)", h.block, h.warp, h.address_count));
    found.push_back({(std::uint64_t{h.block} << 16U) | h.warp, off});
    off += size;
  }
  std::stable_sort(found.begin(), found.end(), [](const Located& a, const Located& b) { return a.key < b.key; });

  DecodeStats stats;
  writer.begin_kernel(launch);
  BlockTrace block;
  std::vector<std::uint64_t> lanes;
  std::size_t next = 0;
  const std::uint32_t step = std::max<std::uint32_t>(sample, 1);
  for (std::uint64_t b = 0; b < blocks; b += step) {
    block.clear();
    block.index = {static_cast<std::uint32_t>(b % launch.grid.x),
                   static_cast<std::uint32_t>(b / launch.grid.x % launch.grid.y),
                   static_cast<std::uint32_t>(b / (std::uint64_t{launch.grid.x} * launch.grid.y))};
    while (next < found.size() && (found[next].key >> 16U) < b) ++next;  // blocks skipped by sampling
    for (std::uint32_t w = 0; w < warps; ++w) {
      block.begin_warp();
      for (; next < found.size() && found[next].key == ((b << 16U) | w); ++next) {
        RecordHeader h;
        std::memcpy(&h, bytes.data() + found[next].offset, sizeof h);
        const auto* values = bytes.data() + found[next].offset + sizeof h;
        WarpRecord r = base_record(h, function_pc);
        const int n = std::popcount(h.mask);
        if (r.record == RecordKind::barrier) {
          block.add(r, {});
          ++stats.records;
          continue;
        }
        lanes.resize(static_cast<std::size_t>(n));
        std::memcpy(lanes.data(), values, lanes.size() * 8);
        if (r.kind == AccessKind::bulk_copy) r.bulk_bytes = h.bulk_bytes;
        if (r.kind == AccessKind::async_copy && r.size == 16) r.hint = CacheHint::cg;  // cp.async.cg: 16 B, no L1
        block.add(r, lanes);
        stats.records += 1;
        stats.lane_accesses += static_cast<std::uint64_t>(n);
        if (r.kind == AccessKind::async_copy && h.address_count == 2 * n) {  // the shared-memory write
          std::memcpy(lanes.data(), values + lanes.size() * 8, lanes.size() * 8);
          r.space = AddressSpace::shared;
          block.add(r, lanes);
          stats.records += 1;
          stats.lane_accesses += static_cast<std::uint64_t>(n);
        }
      }
    }
    writer.add_block(block);
    ++stats.blocks;
  }
  writer.end_kernel();
  return stats;
}

}  // namespace memhier::tracer
