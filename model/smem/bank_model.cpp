#include "bank_model.h"

#include <algorithm>
#include <array>
#include <bit>

#include "../util/sort_unique.h"

namespace memhier {

namespace {

// Accesses wider than a bank word, in half-warp phases: each phase as many wavefronts as its most-loaded bank has
// distinct words; `ideal` one per phase with an active lane.
// A word of bank_bytes is address >> shift, its bank word & mask (both powers of two: shared_wavefronts()).
BankResult phased_wavefronts(std::span<const std::uint8_t> lanes, std::span<const std::uint64_t> addresses,
                             unsigned size, unsigned shift, std::uint64_t mask) {
  constexpr unsigned lanes_per_phase = 16;
  BankResult r;
  std::array<std::uint64_t, 128> words{};  // distinct words of one phase: up to 32 lanes x 4 words
  std::size_t i = 0;
  while (i < addresses.size()) {
    const unsigned phase = lanes[i] / lanes_per_phase;
    int n = 0;
    for (; i < addresses.size() && lanes[i] / lanes_per_phase == phase; ++i) {
      const std::uint64_t first = addresses[i] >> shift;
      const std::uint64_t last = (addresses[i] + size - 1) >> shift;
      for (std::uint64_t w = first; w <= last; ++w) words[static_cast<std::size_t>(n++)] = w;
    }
    n = static_cast<int>(sort_unique(words.data(), static_cast<std::size_t>(n)));
    std::array<std::uint32_t, 64> per_bank{};
    std::uint32_t most = 0;
    for (int k = 0; k < n; ++k) most = std::max(most, ++per_bank[words[static_cast<std::size_t>(k)] & mask]);
    r.wavefronts += most;
    ++r.ideal;
  }
  return r;
}

// The wavefronts of an access of one phase: its most-loaded bank's distinct words (words and banks as above). A
// word seen before (a broadcast) is found in a small open-addressed table (at most 64 words: 32 lanes, each one word
// or, straddling, two; 128 slots), so a column of 32 words in one bank costs 32 lookups, not a walk of its bank's
// list at each.
std::uint32_t one_phase(std::span<const std::uint64_t> addresses, unsigned size, unsigned shift, std::uint64_t mask) {
  constexpr std::size_t kSlots = 128;
  std::array<std::uint64_t, kSlots> seen;  // the words, where `used` has the slot's bit
  std::array<std::uint64_t, kSlots / 64> used{};
  std::array<std::uint8_t, 64> per_bank{};  // banks: at most 64 (arch validation)
  auto taken = [&](std::size_t slot) { return (used[slot / 64] >> (slot % 64) & 1U) != 0; };
  std::uint32_t most = 0;
  for (const std::uint64_t a : addresses) {
    for (std::uint64_t w = a >> shift; w <= (a + size - 1) >> shift; ++w) {
      auto slot = static_cast<std::size_t>((w * 0x9E3779B97F4A7C15ULL) >> 57U);  // 7 bits
      while (taken(slot) && seen[slot] != w) slot = (slot + 1) % kSlots;
      if (taken(slot)) continue;  // a broadcast of a word already counted
      seen[slot] = w;
      used[slot / 64] |= std::uint64_t{1} << (slot % 64);
      most = std::max<std::uint32_t>(most, ++per_bank[static_cast<std::size_t>(w & mask)]);
    }
  }
  return addresses.empty() ? 0 : most;
}

// As phased_wavefronts() and one_phase() for lanes whose bytes are one stretch in every phase: `words` consecutive
// words put ceil(words / banks) in the most-loaded bank.
BankResult run_wavefronts(std::span<const std::uint8_t> lanes, std::span<const std::uint64_t> addresses, unsigned size,
                          unsigned shift, unsigned banks, unsigned lanes_per_phase) {
  BankResult r;
  const auto bank_bits = static_cast<unsigned>(std::countr_zero(banks));
  std::size_t i = 0;
  while (i < addresses.size()) {
    const unsigned phase = lanes[i] / lanes_per_phase;
    const std::size_t first = i;
    while (i < addresses.size() && lanes[i] / lanes_per_phase == phase) ++i;
    const std::uint64_t words = ((addresses[i - 1] + size - 1) >> shift) - (addresses[first] >> shift) + 1;
    r.wavefronts += static_cast<std::uint32_t>((words + banks - 1) >> bank_bits);
    ++r.ideal;
  }
  return r;
}

// Whether the addresses ascend at most `size` apart (a tile's row, a broadcast, one lane): the bytes of any run of
// lanes are then one stretch of words. Scattered lanes fail at the first pair that jumps.
bool one_stretch(std::span<const std::uint64_t> addresses, unsigned size) {
  for (std::size_t i = 1; i < addresses.size(); ++i)
    if (addresses[i] - addresses[i - 1] > size) return false;  // a descending pair wraps past `size` too
  return true;
}

}  // namespace

BankResult shared_wavefronts(std::span<const std::uint8_t> lanes, std::span<const std::uint64_t> addresses,
                             unsigned size, unsigned banks, unsigned bank_bytes) {
  BankResult r;
  // Banks and their width are powers of two (arch validation): shifts and masks, not divisions.
  const auto shift = static_cast<unsigned>(std::countr_zero(bank_bytes));
  const std::uint64_t mask = banks - 1U;
  if (one_stretch(addresses, size)) {
    r = run_wavefronts(lanes, addresses, size, shift, banks, size <= bank_bytes ? 32 : 16);
  } else if (size <= bank_bytes) {
    // One phase: each bank's distinct words counted through a table of the words seen; an access straddling a word
    // boundary touches two words.
    r.wavefronts = one_phase(addresses, size, shift, mask);
    r.ideal = addresses.empty() ? 0 : 1;
  } else {
    r = phased_wavefronts(lanes, addresses, size, shift, mask);
  }
  // Bytes the lanes move, a bank word per bank a wavefront (more than one phase's worth with fewer than 32 banks).
  const auto data = static_cast<std::uint64_t>(addresses.size()) * size, width = std::uint64_t{banks} * bank_bytes;
  r.ideal = std::max(r.ideal, static_cast<std::uint32_t>((data + width - 1) / width));
  return r;
}

namespace {

// strided_wavefronts() for lanes at most `size` apart, ascending, or one lane: each phase's bytes are one stretch
// (shared_wavefronts' one_stretch, run_wavefronts). The k-th active lane is at first + k x stride, so a phase spans
// the words from its first active lane's first byte to its last one's last.
[[gnu::noinline]] BankResult stretch_wavefronts(std::uint64_t first, std::uint64_t stride, std::uint32_t mask,
                                                unsigned size, unsigned banks, unsigned bank_bytes) {
  const auto shift = static_cast<unsigned>(std::countr_zero(bank_bytes));
  const auto bank_bits = static_cast<unsigned>(std::countr_zero(banks));
  const unsigned per_phase = size <= bank_bytes ? 32 : 16;
  BankResult r;
  unsigned before = 0;  // active lanes of earlier phases
  for (unsigned p = 0; p < 32; p += per_phase) {
    const std::uint32_t phase = per_phase == 32 ? mask : mask >> p & 0xFFFFU;
    const auto count = static_cast<unsigned>(std::popcount(phase));
    if (count == 0) continue;
    const std::uint64_t a = first + before * stride, b = first + (before + count - 1) * stride;
    const std::uint64_t words = ((b + size - 1) >> shift) - (a >> shift) + 1;
    r.wavefronts += static_cast<std::uint32_t>((words + banks - 1) >> bank_bits);
    ++r.ideal;
    before += count;
  }
  return r;
}

}  // namespace

std::optional<BankResult> strided_wavefronts(std::uint64_t first, std::uint64_t stride, std::uint32_t mask,
                                             unsigned size, unsigned banks, unsigned bank_bytes) {
  constexpr std::uint64_t kFar = std::uint64_t{1} << 32U;
  const auto n = static_cast<unsigned>(std::popcount(mask));
  if (n == 0) return std::nullopt;
  // Banks and their width are powers of two (arch validation): shifts and masks, not divisions.
  const std::uint64_t word_mask = bank_bytes - 1U;
  const auto word_bits = static_cast<unsigned>(std::countr_zero(bank_bytes));
  const auto width_bits = word_bits + static_cast<unsigned>(std::countr_zero(banks));
  BankResult r;
  if (size == bank_bytes && (first & word_mask) == 0 && (stride & word_mask) == 0) {
    if (stride >= kFar && ~stride + 1 >= kFar) return std::nullopt;
    if (stride == 0) {
      r.wavefronts = 1;
    } else {
      // The period, banks / gcd(d, banks), of a power of two: banks over d's lowest set bit (1 for d = 0).
      const auto d = static_cast<unsigned>((stride >> word_bits) & (banks - 1U));
      const unsigned period_bits = d == 0 ? 0U : static_cast<unsigned>(std::countr_zero(banks) - std::countr_zero(d));
      r.wavefronts = (n + (1U << period_bits) - 1) >> period_bits;
    }
    r.ideal = 1;
  } else if ((n == 1 || stride <= size) && first < (std::uint64_t{1} << 62U)) {
    r = stretch_wavefronts(first, stride, mask, size, banks, bank_bytes);
  } else {
    return std::nullopt;
  }
  const std::uint64_t bytes = std::uint64_t{n} * size;
  r.ideal = std::max(r.ideal, static_cast<std::uint32_t>((bytes + (std::uint64_t{1} << width_bits) - 1) >> width_bits));
  return r;
}

}  // namespace memhier
