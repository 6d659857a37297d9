// libFuzzer target for the .mht reader: any byte string must give records or an InputError, never a crash, a hang
// or an unbounded allocation; next_blocks() must give what next_block() gives, block for block and error for error;
// blocks read compact (as the simulator reads them) the same lanes; and blocks read in parts (as the simulator asks
// for long ones) the same records and lanes, or the same error, their later parts never failing.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "memhier/error.h"
#include "memhier/mht.h"

namespace {

bool same_block(const memhier::BlockTrace& a, const memhier::BlockTrace& b) {
  if (a.index.x != b.index.x || a.index.y != b.index.y || a.index.z != b.index.z) return false;
  if (a.warp_begin != b.warp_begin || a.records.size() != b.records.size()) return false;
  if (!std::equal(a.addresses.begin(), a.addresses.end(), b.addresses.begin(), b.addresses.end())) return false;
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    const memhier::WarpRecord& x = a.records[i];
    const memhier::WarpRecord& y = b.records[i];
    if (x.pc != y.pc || x.active_mask != y.active_mask || x.address_index != y.address_index || x.work != y.work ||
        x.bulk_bytes != y.bulk_bytes || x.record != y.record || x.space != y.space || x.kind != y.kind ||
        x.hint != y.hint || x.size != y.size || x.layout != y.layout)
      return false;
  }
  return true;
}

// Whether `a` and `b` (the same block read written out, and compact or put together from parts) have the same
// records with the same lanes.
bool same_lanes(const memhier::BlockTrace& a, const memhier::BlockTrace& b) {
  if (a.warp_begin != b.warp_begin || a.records.size() != b.records.size() || a.lanes != b.lanes) return false;
  memhier::LaneBuffer buffer;
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    const memhier::WarpRecord& ra = a.records[i];
    const memhier::WarpRecord& rb = b.records[i];
    if (ra.pc != rb.pc || ra.active_mask != rb.active_mask || ra.work != rb.work || ra.bulk_bytes != rb.bulk_bytes ||
        ra.record != rb.record || ra.space != rb.space || ra.kind != rb.kind || ra.hint != rb.hint ||
        ra.size != rb.size)
      return false;
    const auto x = a.lane_addresses(a.records[i]);
    const auto y = b.lane_addresses(b.records[i], buffer);
    if (!std::equal(x.begin(), x.end(), y.begin(), y.end())) return false;
    if (!x.empty() && b.first_last(b.records[i]) != std::pair{x.front(), x.back()}) return false;
  }
  return true;
}

// Every block of the file and the error that ended the reading (empty: none). `request` 0: next_block() one at a time;
// otherwise next_blocks() in requests of 1 to `request` blocks in turn, on several threads where the build has OpenMP
// (this one has not: the parallel decoder's path then runs on one thread). `compact`: block by block, as the simulator
// reads them (compact_strided).
std::pair<std::vector<memhier::BlockTrace>, std::string> read_all(const std::filesystem::path& path,
                                                                  std::size_t request, bool compact = false) {
  std::vector<memhier::BlockTrace> blocks;
  try {
    memhier::MhtReader reader(path);
    memhier::KernelLaunch launch;
    std::size_t turn = 0;
    while (reader.next_kernel(launch)) {
      if (request == 0) {
        memhier::BlockTrace b;
        b.compact_strided = compact;
        while (reader.next_block(b)) blocks.push_back(b);
        continue;
      }
      for (;;) {
        std::vector<memhier::BlockTrace> part(1 + turn++ % request);
        const std::size_t n = reader.next_blocks(part, 4);
        for (std::size_t i = 0; i < n; ++i) blocks.push_back(std::move(part[i]));
        if (n < part.size()) break;
      }
    }
  } catch (const memhier::InputError& e) {  // the expected outcome for damaged input
    return {std::move(blocks), e.what()};
  }
  return {std::move(blocks), ""};
}

// Every block read in parts of 3 records a warp (BlockTrace::part_records, compact), each put back together, written
// out, from its first parts and the later ones its rest gives; and the error that ended the reading. A later part
// failing traps: its records were checked when the block was read.
std::pair<std::vector<memhier::BlockTrace>, std::string> read_in_parts(const std::filesystem::path& path) {
  std::vector<memhier::BlockTrace> blocks;
  try {
    memhier::MhtReader reader(path);
    memhier::KernelLaunch launch;
    memhier::BlockTrace b, part;
    b.compact_strided = part.compact_strided = true;
    b.part_records = 3;
    while (reader.next_kernel(launch))
      while (reader.next_block(b)) {
        memhier::BlockTrace& whole = blocks.emplace_back();
        whole.clear();
        whole.index = b.index;
        memhier::LaneBuffer buffer;
        auto add = [&](const memhier::BlockTrace& from, std::size_t w) {
          for (const memhier::WarpRecord& r : from.warp(w)) whole.add(r, from.lane_addresses(r, buffer));
        };
        for (std::size_t w = 0; w < b.warp_count(); ++w) {
          whole.begin_warp();
          add(b, w);
          try {
            while (b.rest && b.rest->next(w, part)) add(part, 0);
          } catch (const memhier::InputError&) {
            __builtin_trap();
          }
        }
      }
  } catch (const memhier::InputError& e) {
    return {std::move(blocks), e.what()};
  }
  return {std::move(blocks), ""};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("memhier_fuzz_" + std::to_string(getpid()) + ".mht");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  // Block by block, then in requests of several blocks: the same blocks, or the same error (a block read ahead of
  // a damaged chunk may be missing from the second reading, which stops at the whole request's first error).
  const auto [one, one_error] = read_all(path, 0);
  const auto [many, many_error] = read_all(path, 7);
  if (one_error != many_error || many.size() > one.size() || (one_error.empty() && many.size() != one.size()))
    __builtin_trap();
  for (std::size_t i = 0; i < many.size(); ++i)
    if (!same_block(one[i], many[i])) __builtin_trap();
  // As the simulator reads them (strided lanes and runs kept compact): the same lanes, or the same error.
  const auto [compact, compact_error] = read_all(path, 0, true);
  if (compact_error != one_error || compact.size() != one.size()) __builtin_trap();
  for (std::size_t i = 0; i < one.size(); ++i)
    if (!same_lanes(one[i], compact[i])) __builtin_trap();
  // In parts, as the simulator asks for long blocks: the same records and lanes, or the same error.
  const auto [parts, parts_error] = read_in_parts(path);
  if (parts_error != one_error || parts.size() != one.size()) __builtin_trap();
  for (std::size_t i = 0; i < one.size(); ++i)
    if (!same_lanes(one[i], parts[i])) __builtin_trap();
  std::error_code ignored;
  std::filesystem::remove(path, ignored);  // each input's file goes; none is left in the temp folder
  return 0;
}
