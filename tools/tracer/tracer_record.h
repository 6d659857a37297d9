#pragma once
// The tracer's device-to-host record stream. The patches (tracer_patches.cu) append records to one device buffer per
// context; the host (tracer.cpp) copies it out after each launch and turns it into memhier::BlockTrace records.
// Layout: TraceHeader, then records back to back: RecordHeader followed by `address_count` 8-byte values.
#include <cstdint>

namespace memhier::tracer {

struct TraceHeader {
  unsigned long long used;             // bytes reserved by records (may exceed capacity: the rest were dropped)
  unsigned long long capacity;         // bytes available after this header
  unsigned long long dropped_records;  // warp records that did not fit
  unsigned long long dropped_bytes;
  unsigned long long valid_end;  // start of the first record that did not fit (~0: none); data ends there
  std::uint32_t enabled;         // 0: this launch is not captured
  std::uint32_t sample;          // capture blocks whose linear index is a multiple of this
};

enum RecordType : std::uint8_t { kLoad, kStore, kAtomic, kBarrier, kAsyncCopy, kBulkCopy };
enum RecordSpace : std::uint8_t { kGlobal, kShared, kLocal };

struct RecordHeader {
  unsigned long long pc;        // absolute; the host subtracts the function's start
  std::uint32_t block;          // linear blockIdx (x fastest)
  std::uint16_t warp;           // linear threadIdx / 32
  std::uint8_t type;            // RecordType
  std::uint8_t space;           // RecordSpace
  std::uint32_t mask;           // lanes taking part
  std::uint16_t size;           // bytes per lane
  std::uint16_t address_count;  // values that follow: lanes (x2 for async copies: sources, then shared offsets)
  std::uint32_t bulk_bytes;     // bulk copies: bytes moved
  std::uint32_t reserved;
};
static_assert(sizeof(RecordHeader) == 32, "records stay 8-byte aligned");
static_assert(sizeof(TraceHeader) % 8 == 0, "records stay 8-byte aligned");

}  // namespace memhier::tracer
