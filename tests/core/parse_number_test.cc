// A number as the whole of a piece of text: what is read, and what gives nothing.
#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "core/parse_number.h"

namespace chakrasim::test {
namespace {

TEST(ParseNumber, TheWholeTextIsTheNumber) {
  EXPECT_EQ(parse_number<std::uint64_t>("4096"), 4096u);
  EXPECT_EQ(parse_number<std::uint64_t>("18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(parse_number<std::int64_t>("-1"), -1);
  EXPECT_EQ(parse_number<std::uint32_t>("0"), 0u);
  EXPECT_EQ(parse_number<double>("0.25"), 0.25);
  EXPECT_EQ(parse_number<double>("1e3"), 1000.0);
  // from_chars's infinities and NaN, which readers of finite numbers refuse themselves.
  EXPECT_EQ(parse_number<double>("inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(parse_number<double>("-Infinity"), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(*parse_number<double>("nan")));
}

TEST(ParseNumber, AnythingElseGivesNothing) {
  for (const char* text : {"", " 1", "1 ", "1x", "+1", "0x10", "1.5", "-1", "18446744073709551616", "ten"}) {
    EXPECT_FALSE(parse_number<std::uint64_t>(text)) << '"' << text << '"';
  }
  EXPECT_FALSE(parse_number<std::uint32_t>("4294967296"));  // out of the type's range
  EXPECT_FALSE(parse_number<std::int64_t>("--1"));
  for (const char* text : {"", ".", "1.5.", "1e", "1e999", "1.0 "}) {
    EXPECT_FALSE(parse_number<double>(text)) << '"' << text << '"';
  }
}

}  // namespace
}  // namespace chakrasim::test
