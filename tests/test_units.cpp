#include <doctest/doctest.h>

#include <stdexcept>

#include "memhier/units.h"
#include "test_support.h"

using namespace memhier::units;

TEST_CASE("1.1 sizes parse with binary and decimal units") {
  CHECK(parse_bytes("128B") == 128);
  CHECK(parse_bytes("48KiB") == 49152);
  CHECK(parse_bytes("50MiB") == 52428800);
  CHECK(parse_bytes("37.5MiB") == 39321600);  // the H200's persistingL2CacheMaxSize
  CHECK(parse_bytes("141GB") == 141000000000ULL);
  CHECK(parse_bytes(" 2 KiB ") == 2048);
}

TEST_CASE("1.2 sizes without a unit, with a bad unit, fractional bytes or negative are rejected") {
  CHECK_THROWS_AS(parse_bytes("50"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bytes("50MiBs"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bytes("0.3B"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bytes("-4KiB"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bytes("MiB"), std::invalid_argument);
}

TEST_CASE("1.3 bandwidth, per-clock, frequency and duration") {
  CHECK(parse_bandwidth("3.35TB/s") == test::exactly(3.35e12));
  CHECK(parse_bandwidth("900GB/s") == test::exactly(9e11));
  CHECK(parse_bytes_per_clock("128B/clk") == 128.0);
  CHECK(parse_frequency("1980MHz") == test::exactly(1.98e9));
  CHECK(parse_duration("3.3us") == test::exactly(3.3e-6));
  CHECK_THROWS_AS(parse_bandwidth("3.35TB"), std::invalid_argument);
  CHECK_THROWS_AS(parse_frequency("fast"), std::invalid_argument);
}

TEST_CASE("1.4 formatted sizes parse back to the same value") {
  for (std::uint64_t v : {0ULL, 1ULL, 1000ULL, 1024ULL, 39321600ULL, 132644864ULL, 52428800ULL, 150109880320ULL}) {
    CAPTURE(v);
    CHECK(parse_bytes(format_bytes(v)) == v);
  }
  CHECK(format_bytes(39321600) == "37.5MiB");
  CHECK(format_bytes(233472) == "228KiB");
}

TEST_CASE("1.4b sizes for reading: three significant digits in the largest unit reached") {
  CHECK(format_size(0) == "0B");
  CHECK(format_size(1023) == "1023B");
  CHECK(format_size(1024) == "1.00KiB");
  CHECK(format_size(43312384) == "41.3MiB");
  CHECK(format_size(92012032) == "87.7MiB");
  CHECK(format_size(233472) == "228KiB");
  CHECK(format_size(5ULL << 40) == "5.00TiB");
}

TEST_CASE("1.4c exact sizes for reading: at most four digits and two decimals, else three digits and the count") {
  CHECK(format_size_exact(0) == "0B");
  CHECK(format_size_exact(1000) == "1000B");
  CHECK(format_size_exact(19660800) == "18.75MiB");  // the H100's set-aside of 6 ways
  CHECK(format_size_exact(32768000) == "31.25MiB");  // its persistingL2CacheMaxSize
  CHECK(format_size_exact(3276800) == "3200KiB");    // 3.125 MiB: three decimals
  CHECK(format_size_exact(16ULL << 30) == "16GiB");
  CHECK(format_size_exact(134221824) == "128MiB (134221824 B)");  // 131076 KiB: more than four digits
  CHECK(format_size_exact(43312385) == "41.3MiB (43312385 B)");
}
