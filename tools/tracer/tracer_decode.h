#pragma once
// Turns the tracer's raw record stream (tracer_record.h) for one launch into .mht blocks. No CUDA here, so the
// decoding is unit-tested on machines without a GPU (tests/test_tracer_decode.cpp).
#include <cstdint>
#include <span>
#include <string>

#include "memhier/mht.h"
#include "memhier/trace.h"

namespace memhier::tracer {

struct DecodeStats {
  std::uint64_t records = 0;        // warp-level records written (async copies count twice: read and write)
  std::uint64_t lane_accesses = 0;  // active lanes over memory records
  std::uint64_t blocks = 0;
};

// "_ZN5suite12_GLOBAL__N_114coalesced_copyEPKfPfx" -> "coalesced_copy": the demangled name without scopes,
// template arguments or parameters (the mangled name when it does not demangle).
std::string demangled_name(const char* mangled);

// The architecture file that matches a device name ("NVIDIA H100 80GB HBM3" -> "h100"); empty when none does.
std::string arch_from_device_name(const std::string& device);

// Decodes `bytes` (records back to back) and writes one kernel: every block of the grid (every `sample`-th when
// sampling) in linear order, each warp's records in the order the warp issued them. Throws InputError on a record
// that runs past the end or names a block or warp outside the launch.
DecodeStats write_launch(MhtWriter& writer, const KernelLaunch& launch, std::uint64_t function_pc, std::uint32_t sample,
                         std::span<const unsigned char> bytes);

}  // namespace memhier::tracer
