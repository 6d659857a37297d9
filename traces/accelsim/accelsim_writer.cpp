// Accel-Sim .traceg export: memory instructions and barriers only, with opcodes that name their space (LDG, LDS, LDL,
// ...) and synthetic generic windows for shared and local addresses. Work becomes NOP lines before its record.
#include <fmt/format.h>

#include "memhier/accelsim.h"
#include "memhier/error.h"

namespace memhier {
namespace fs = std::filesystem;
namespace {

std::string size_suffix(int size) {
  switch (size) {
    case 1:
      return ".U8";
    case 2:
      return ".U16";
    case 8:
      return ".64";
    case 16:
      return ".128";
    default:
      return "";
  }
}

std::string hint_suffix(CacheHint h) {
  switch (h) {
    case CacheHint::nc:
      return ".CONSTANT";
    case CacheHint::cs:
      return ".EF";
    case CacheHint::cg:
      return ".STRONG.GPU";
    case CacheHint::none:
      break;
  }
  return "";
}

// Opcode and whether it writes a destination register.
std::pair<std::string, bool> opcode(const WarpRecord& r) {
  const std::string sz = size_suffix(r.size);
  switch (r.space) {
    case AddressSpace::shared:
      if (r.kind == AccessKind::async_copy)
        return {"LDGSTS.E" + std::string(r.hint == CacheHint::cg ? ".BYPASS" : "") + sz, false};
      if (r.kind == AccessKind::store) return {"STS" + sz, false};
      if (r.kind == AccessKind::atomic || r.kind == AccessKind::reduction) return {"ATOMS.ADD" + sz, true};
      return {"LDS" + sz, true};
    case AddressSpace::local:
      return r.kind == AccessKind::store ? std::pair{"STL" + sz, false} : std::pair{"LDL" + sz, true};
    case AddressSpace::constant:
      return {"LDC" + sz, true};
    case AddressSpace::texture:
      return {"TEX", true};
    case AddressSpace::global:
      break;
  }
  switch (r.kind) {
    case AccessKind::store:
      return {"STG.E" + sz + hint_suffix(r.hint), false};
    case AccessKind::atomic:
      return {"ATOMG.E.ADD" + sz, true};
    case AccessKind::reduction:
      return {"RED.E.ADD" + sz, false};
    case AccessKind::async_copy:
      return {"LDGSTS.E" + std::string(r.hint == CacheHint::cg ? ".BYPASS" : "") + sz, false};
    case AccessKind::bulk_copy:  // written by write_bulk_copy
    case AccessKind::load:
      break;
  }
  return {"LDG.E" + sz + hint_suffix(r.hint), true};
}

void write_addresses(std::FILE* out, std::span<const std::uint64_t> a) {
  bool stride_ok = true;
  const std::int64_t stride = a.size() > 1 ? static_cast<std::int64_t>(a[1] - a[0]) : 0;
  for (std::size_t i = 1; i < a.size(); ++i)
    stride_ok = stride_ok && static_cast<std::int64_t>(a[i] - a[i - 1]) == stride;
  if (stride_ok) {
    std::fprintf(out, " 1 0x%016llx %lld", static_cast<unsigned long long>(a[0]), static_cast<long long>(stride));
    return;
  }
  // Mode 2 carries no immediate: Accel-Sim's parser reads one delta too many there (docs/accelsim.md).
  std::fprintf(out, " 2 0x%016llx", static_cast<unsigned long long>(a[0]));
  for (std::size_t i = 1; i < a.size(); ++i) std::fprintf(out, " %lld", static_cast<long long>(a[i] - a[i - 1]));
}

// Accel-Sim versions disagree on how TMA and bulk-copy lines are written, so a bulk copy of N bytes goes out as the
// global reads it performs: ceil(N / 512) full-warp 16-byte loads with a 16-byte stride (lossy: re-imported, these
// are loads).
void write_bulk_copy(std::FILE* out, const WarpRecord& r, std::span<const std::uint64_t> issuers) {
  for (std::uint64_t base : issuers) {
    for (std::uint32_t done = 0; done < r.bulk_bytes; done += 512) {
      const std::uint32_t lanes = std::min<std::uint32_t>(32, (r.bulk_bytes - done + 15) / 16);
      const std::uint32_t mask = lanes == 32 ? 0xFFFFFFFFU : (1U << lanes) - 1U;
      std::fprintf(out, "%04x %08x 1 R2 LDG.E.128 1 R4 16 1 0x%016llx 16\n", r.pc, mask,
                   static_cast<unsigned long long>(base) + done);
    }
  }
}

struct File {
  std::FILE* f = nullptr;
  fs::path path;
  explicit File(fs::path p) : f(std::fopen(p.c_str(), "w")), path(std::move(p)) {
    if (f == nullptr) throw InputError({path.string()}, "", "cannot create the file");
  }
  ~File() {
    if (f != nullptr) std::fclose(f);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  void close() {
    const bool bad = std::ferror(f) != 0;
    const int rc = std::fclose(f);
    f = nullptr;
    if (bad || rc != 0) throw InputError({path.string()}, "", "write failed (disk full?)");
  }
};

}  // namespace

std::size_t write_accelsim(TraceSource& source, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError({dir.string()}, "", "cannot create the output directory: " + ec.message());
  File list(dir / "kernelslist.g");
  KernelLaunch k;
  BlockTrace block;
  std::size_t id = 0;
  while (source.next_kernel(k)) {
    ++id;
    // The name is one header line: a line break would end it there and read back as another name (a NUL, where
    // printf stops).
    if (k.name.find_first_of(std::string("\r\n\0", 3)) != std::string::npos)
      throw InputError({k.source}, "kernel",
                       fmt::format("the name {:?} holds a line break or a NUL, which an Accel-Sim trace's "
                                   "'-kernel name' line cannot carry",
                                   k.name));
    const std::string name = fmt::format("kernel-{}.traceg", id);
    std::fprintf(list.f, "%s\n", name.c_str());
    File out(dir / name);
    std::fprintf(out.f,
                 "-kernel name = %s\n-kernel id = %zu\n-grid dim = (%u,%u,%u)\n-block dim = (%u,%u,%u)\n-shmem = %u\n"
                 "-nregs = %u\n-binary version = 90\n-cuda stream id = 0\n-shmem base_addr = 0x%016llx\n"
                 "-local mem base_addr = 0x%016llx\n-nvbit version = 1.7\n-accelsim tracer version = 5\n"
                 "-enable lineinfo = 0\n\n#traces format = PC mask dest_num [reg_dests] opcode src_num [reg_srcs] "
                 "mem_width [adrrescompress?] [mem_addresses] immediate\n\n",
                 k.name.c_str(), id, k.grid.x, k.grid.y, k.grid.z, k.block.x, k.block.y, k.block.z,
                 k.static_shared_bytes + k.dynamic_shared_bytes, k.registers_per_thread,
                 static_cast<unsigned long long>(kAccelSimSharedBase),
                 static_cast<unsigned long long>(kAccelSimLocalBase));
    while (source.next_block(block)) {
      std::fprintf(out.f, "#BEGIN_TB\n\nthread block = %u,%u,%u\n\n", block.index.x, block.index.y, block.index.z);
      for (std::size_t w = 0; w < block.warp_count(); ++w) {
        auto records = block.warp(w);
        std::uint64_t lines = 0;
        for (const WarpRecord& r : records)
          lines += r.work + (r.kind == AccessKind::bulk_copy && r.is_memory()
                                 ? static_cast<std::uint64_t>(r.active_lanes()) * ((r.bulk_bytes + 511) / 512)
                                 : 1);
        std::fprintf(out.f, "warp = %zu\ninsts = %llu\n", w, static_cast<unsigned long long>(lines));
        for (const WarpRecord& r : records) {
          for (std::uint32_t i = 0; i < r.work; ++i) std::fprintf(out.f, "%04x %08x 0 NOP 0 0\n", r.pc, r.active_mask);
          if (!r.is_memory()) {
            std::fprintf(out.f, "%04x %08x 0 BAR.SYNC.DEFER_BLOCKING 0 0\n", r.pc, r.active_mask);
            continue;
          }
          auto a = block.lane_addresses(r);
          if (a.empty()) {  // issued with every lane predicated off: no memory access to write
            std::fprintf(out.f, "%04x %08x 0 NOP 0 0\n", r.pc, r.active_mask);
            continue;
          }
          if (r.kind == AccessKind::bulk_copy) {
            write_bulk_copy(out.f, r, a);
            continue;
          }
          std::array<std::uint64_t, kWarpSize> g{};
          const std::uint64_t window = r.space == AddressSpace::shared  ? kAccelSimSharedBase
                                       : r.space == AddressSpace::local ? kAccelSimLocalBase
                                                                        : 0;
          for (std::size_t i = 0; i < a.size(); ++i) {
            if (window == 0 && a[i] >= kAccelSimSharedBase && a[i] < kAccelSimLocalBase + (1ULL << 32U))
              throw InputError({}, "",
                               fmt::format("global address 0x{:x} falls in the synthetic shared/local window", a[i]));
            g[i] = window + a[i];
          }
          const auto [op, has_dst] = opcode(r);
          std::fprintf(out.f, "%04x %08x %d%s %s 1 R4 %d", r.pc, r.active_mask, has_dst ? 1 : 0, has_dst ? " R2" : "",
                       op.c_str(), r.kind == AccessKind::bulk_copy ? 16 : r.size);
          write_addresses(out.f, {g.data(), a.size()});
          std::fputc('\n', out.f);
        }
      }
      std::fprintf(out.f, "\n#END_TB\n\n");
    }
    out.close();
  }
  list.close();
  return id;
}

}  // namespace memhier
