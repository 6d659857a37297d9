#include "memhier/units.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace memhier::units {
namespace {

struct Unit {
  std::string_view suffix;
  double scale;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits "3.35 TB/s" into 3.35 and "TB/s" and scales by the unit; `what` names the quantity for the message.
template <std::size_t N>
double parse_with_units(std::string_view text, const std::array<Unit, N>& table, std::string_view what,
                        std::string_view example) {
  std::string_view s = trim(text);
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data()) {
    throw std::invalid_argument(fmt::format("expected {} such as '{}', got '{}'", what, example, text));
  }
  std::string_view suffix = trim(std::string_view(end, static_cast<std::size_t>(s.data() + s.size() - end)));
  for (const Unit& u : table) {
    if (suffix == u.suffix) {
      if (!std::isfinite(value) || value < 0) {
        throw std::invalid_argument(fmt::format("{} must be a finite non-negative number, got '{}'", what, text));
      }
      return value * u.scale;
    }
  }
  std::string known;
  for (const Unit& u : table) known += fmt::format("{}{}", known.empty() ? "" : ", ", u.suffix);
  throw std::invalid_argument(fmt::format("{} '{}' needs one of the units {} (e.g. '{}')", what, text, known, example));
}

constexpr double kKi = 1024.0;
constexpr std::array<Unit, 9> kByteUnits{{{"B", 1},
                                          {"KB", 1e3},
                                          {"MB", 1e6},
                                          {"GB", 1e9},
                                          {"TB", 1e12},
                                          {"KiB", kKi},
                                          {"MiB", kKi* kKi},
                                          {"GiB", kKi* kKi* kKi},
                                          {"TiB", kKi* kKi* kKi* kKi}}};
constexpr std::array<Unit, 9> kBandwidthUnits{{{"B/s", 1},
                                               {"KB/s", 1e3},
                                               {"MB/s", 1e6},
                                               {"GB/s", 1e9},
                                               {"TB/s", 1e12},
                                               {"KiB/s", kKi},
                                               {"MiB/s", kKi* kKi},
                                               {"GiB/s", kKi* kKi* kKi},
                                               {"TiB/s", kKi* kKi* kKi* kKi}}};
constexpr std::array<Unit, 1> kPerClockUnits{{{"B/clk", 1}}};
constexpr std::array<Unit, 4> kFrequencyUnits{{{"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}}};
constexpr std::array<Unit, 4> kDurationUnits{{{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}}};

}  // namespace

std::uint64_t parse_bytes(std::string_view text) {
  double bytes = parse_with_units(text, kByteUnits, "a size", "50MiB");
  double whole = std::round(bytes);
  if (std::fabs(bytes - whole) > 1e-6 * std::max(1.0, bytes)) {
    throw std::invalid_argument(fmt::format("size '{}' is not a whole number of bytes", text));
  }
  if (whole >= 1.8e19) throw std::invalid_argument(fmt::format("size '{}' is too large", text));
  return static_cast<std::uint64_t>(whole);
}

double parse_bandwidth(std::string_view text) {
  return parse_with_units(text, kBandwidthUnits, "a bandwidth", "3.35TB/s");
}
double parse_bytes_per_clock(std::string_view text) {
  return parse_with_units(text, kPerClockUnits, "bytes per clock", "128B/clk");
}
double parse_frequency(std::string_view text) {
  return parse_with_units(text, kFrequencyUnits, "a frequency", "1980MHz");
}
double parse_duration(std::string_view text) { return parse_with_units(text, kDurationUnits, "a duration", "2.5us"); }

namespace {

// Binary units, largest first (format_bytes, format_size, format_size_exact).
constexpr std::array<std::pair<std::uint64_t, std::string_view>, 4> kBinary{
    {{1ULL << 40, "TiB"}, {1ULL << 30, "GiB"}, {1ULL << 20, "MiB"}, {1ULL << 10, "KiB"}}};

}  // namespace

std::string format_bytes(std::uint64_t bytes) {
  for (auto [scale, name] : kBinary) {
    // Largest unit that states the size exactly with at most one decimal (37.5MiB), so it parses back unchanged.
    if (bytes >= scale && (bytes * 10) % scale == 0) {
      return fmt::format("{}{}", static_cast<double>(bytes) / static_cast<double>(scale), name);
    }
  }
  return fmt::format("{}B", bytes);
}

std::string format_size(std::uint64_t bytes) {
  for (auto [scale, name] : kBinary) {
    if (bytes < scale) continue;
    const double v = static_cast<double>(bytes) / static_cast<double>(scale);
    return fmt::format("{:.{}f}{}", v, v < 10 ? 2 : v < 100 ? 1 : 0, name);
  }
  return fmt::format("{}B", bytes);
}

std::string format_size_exact(std::uint64_t bytes) {
  for (auto [scale, name] : kBinary)
    if (bytes >= scale && bytes / scale < 10000 && (bytes % scale) * 100 % scale == 0)
      return fmt::format("{}{}", static_cast<double>(bytes) / static_cast<double>(scale), name);
  if (bytes < 1024) return fmt::format("{}B", bytes);
  return fmt::format("{} ({} B)", format_size(bytes), bytes);
}

std::string format_bandwidth(double bps) {
  if (bps >= 1e12) return fmt::format("{:g}TB/s", bps / 1e12);
  if (bps >= 1e9) return fmt::format("{:g}GB/s", bps / 1e9);
  if (bps >= 1e6) return fmt::format("{:g}MB/s", bps / 1e6);
  return fmt::format("{:g}B/s", bps);
}

std::string format_frequency(double hz) {
  if (hz >= 1e9 && std::fmod(hz, 1e6) != 0) return fmt::format("{:g}GHz", hz / 1e9);
  if (hz >= 1e6) return fmt::format("{:g}MHz", hz / 1e6);
  return fmt::format("{:g}Hz", hz);
}

std::string format_duration(double s) {
  if (s >= 1) return fmt::format("{:g}s", s);
  if (s >= 1e-3) return fmt::format("{:g}ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:g}us", s * 1e6);
  return fmt::format("{:g}ns", s * 1e9);
}

}  // namespace memhier::units
