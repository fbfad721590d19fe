// Sizes as people write them: units of 1000 and of 1024, decimals, case, and what is refused.
#include <gtest/gtest.h>

#include "core/units.h"

namespace chakrasim::test {
namespace {

TEST(ByteSize, UnitsOfOneThousandAndOf1024) {
  EXPECT_EQ(parse_byte_size("4096"), 4096u);
  EXPECT_EQ(parse_byte_size("100B"), 100u);
  EXPECT_EQ(parse_byte_size("64MiB"), 64u << 20);
  EXPECT_EQ(parse_byte_size("64mib"), 64u << 20);
  EXPECT_EQ(parse_byte_size("64 MiB"), 64u << 20);
  EXPECT_EQ(parse_byte_size("64Mi"), 64u << 20);
  EXPECT_EQ(parse_byte_size("1GB"), 1000000000u);
  EXPECT_EQ(parse_byte_size("1G"), 1000000000u);
  EXPECT_EQ(parse_byte_size("512KiB"), 512u << 10);
  EXPECT_EQ(parse_byte_size("2TiB"), std::uint64_t{2} << 40);
  EXPECT_EQ(parse_byte_size("1.5GiB"), std::uint64_t{3} << 29);
  EXPECT_EQ(parse_byte_size("9007199254740993"), 9007199254740993u);  // above 2^53, exact
}

TEST(ByteSize, RefusesWhatIsNotAWholeSize) {
  for (const char* bad : {"", "MiB", "-1", "1.5", "0.3B", "64parsec", "64MiBs", "1..5GB", ".5GB", "5.GB", "1e9",
                          "9223372036854775808", "9EiB"}) {
    EXPECT_FALSE(parse_byte_size(bad).has_value()) << bad;
  }
}

TEST(Duration, UnitsAndRefusals) {
  EXPECT_EQ(parse_duration_ns("1500"), 1500u);
  EXPECT_EQ(parse_duration_ns("1500ns"), 1500u);
  EXPECT_EQ(parse_duration_ns("300us"), 300000u);
  EXPECT_EQ(parse_duration_ns("300µs"), 300000u);
  EXPECT_EQ(parse_duration_ns("2.5ms"), 2500000u);
  EXPECT_EQ(parse_duration_ns("10 s"), 10000000000u);
  for (const char* bad : {"", "ms", "-1ms", "2.5min", "1e3", "3.s", "99999999999s"}) {
    EXPECT_FALSE(parse_duration_ns(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace chakrasim::test
