#pragma once
// Division by a number fixed ahead of time, through a multiply by its reciprocal: the L2 placement divides every
// request's line by the L2's sets and by its slices, and a 64-bit division takes tens of host cycles where this takes a
// few. Exact for every numerator: the reciprocal's estimate is never above the quotient and a step or two corrects it.
#include <cstdint>

namespace memhier {

class Divisor {
 public:
  explicit Divisor(std::uint64_t d = 1) : m_d(d), m_reciprocal(~std::uint64_t{0} / d) {}
  [[nodiscard]] std::uint64_t divisor() const { return m_d; }
  // n / d; `remainder` gets n % d.
  [[nodiscard]] std::uint64_t divide(std::uint64_t n, std::uint64_t& remainder) const {
    __extension__ using u128 = unsigned __int128;
    // floor(n x floor((2^64 - 1) / d) / 2^64) <= n / d, and falls short by less than 2 (by at most 1 below 2^63).
    auto q = static_cast<std::uint64_t>((static_cast<u128>(n) * m_reciprocal) >> 64U);
    std::uint64_t r = n - q * m_d;
    // The one step every numerator below 2^63 may need (every line number is), without a branch (the host cannot
    // predict it: a stream's lines need it now and then), then any other.
    const bool short_by_one = r >= m_d;
    q += short_by_one ? 1 : 0;
    r -= short_by_one ? m_d : 0;
    while (r >= m_d) {
      ++q;
      r -= m_d;
    }
    remainder = r;
    return q;
  }

 private:
  std::uint64_t m_d;
  std::uint64_t m_reciprocal;
};

}  // namespace memhier
