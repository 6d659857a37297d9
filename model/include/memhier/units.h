#pragma once
// Parsing and printing of quantities with explicit units ("50MiB", "3.35TB/s", "128B/clk", "1980MHz", "2.5us").
// Parsers throw std::invalid_argument with a message saying what was expected; callers add the location.
#include <cstdint>
#include <string>
#include <string_view>

namespace memhier::units {

// Bytes: B, KB/MB/GB/TB (powers of 1000), KiB/MiB/GiB/TiB (powers of 1024). The result must be a whole byte count.
std::uint64_t parse_bytes(std::string_view text);
// Bytes per second: B/s, KB/s, MB/s, GB/s, TB/s (decimal), KiB/s ... TiB/s.
double parse_bandwidth(std::string_view text);
// Bytes per SM clock cycle: "128B/clk".
double parse_bytes_per_clock(std::string_view text);
// Hz, kHz, MHz, GHz.
double parse_frequency(std::string_view text);
// Seconds from s, ms, us, ns.
double parse_duration(std::string_view text);

std::string format_bytes(std::uint64_t bytes);  // exact binary unit when it divides, else decimal with B
// A size for people to read: three significant digits in the largest binary unit it reaches ("41.3MiB"), bytes below
// 1 KiB. Not exact: for traffic and file sizes, not for values that must parse back.
std::string format_size(std::uint64_t bytes);
// A size for people that stays exact: the largest binary unit that states it in at most four digits and two decimals
// ("18.75MiB"), else format_size() and the byte count ("128MiB (134221824 B)"). For limits a GPU reports to the byte.
std::string format_size_exact(std::uint64_t bytes);
std::string format_bandwidth(double bytes_per_second);
std::string format_frequency(double hz);
std::string format_duration(double seconds);

}  // namespace memhier::units
