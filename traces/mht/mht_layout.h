#pragma once
// Fixed-size parts of a .mht file: file header, section header, footer (docs/mht-format.md). All little-endian.
#include <array>
#include <cstdint>

namespace memhier::mht {

inline constexpr std::array<char, 8> kMagic{'\x89', 'M', 'H', 'T', '\r', '\n', '\x1a', '\n'};
inline constexpr std::array<char, 8> kFooterMagic{'M', 'H', 'T', 'I', 'N', 'D', 'E', 'X'};
inline constexpr std::uint32_t kByteOrderMark = 0x01020304U;
inline constexpr std::uint64_t kHeaderBytes = 24;   // magic, major u16, minor u16, byte-order u32, reserved u64
inline constexpr std::uint64_t kSectionBytes = 24;  // tag u32, count u32, stored u64, raw u64
inline constexpr std::uint64_t kFooterBytes = 16;   // index offset u64, footer magic
inline constexpr std::uint64_t kMaxMetadataRawBytes = 64ULL << 20U;

constexpr std::uint32_t tag(char a, char b, char c, char d) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(a)) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b)) << 8U |
         static_cast<std::uint32_t>(static_cast<unsigned char>(c)) << 16U |
         static_cast<std::uint32_t>(static_cast<unsigned char>(d)) << 24U;
}
inline constexpr std::uint32_t kKernelTag = tag('K', 'E', 'R', 'N');
inline constexpr std::uint32_t kChunkTag = tag('C', 'H', 'N', 'K');
inline constexpr std::uint32_t kIndexTag = tag('I', 'N', 'D', 'X');

struct SectionHeader {
  std::uint32_t tag = 0;
  std::uint32_t count = 0;  // blocks in a chunk; 0 for other sections
  std::uint64_t stored = 0;
  std::uint64_t raw = 0;
};

}  // namespace memhier::mht
