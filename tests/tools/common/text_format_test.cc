// The text helpers the tools share (tools/common/text_format.h): UTF-8 decoding as RFC 3629 has it,
// Python's repr() of a float (expected strings: Python 3.11), and JSON excerpts for errors.
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "tools/common/text_format.h"

namespace chakrasim::test {
namespace {

using tools::decode_utf8;

// "aé中😀": 1, 2, 3 and 4 bytes; each decodes to its code point from its first byte.
TEST(TextFormat, DecodesEachLengthOfUtf8) {
  const std::string text = "a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80";
  const std::pair<std::size_t, char32_t> expected[] = {{0, U'a'}, {1, 0xe9}, {3, 0x4e2d}, {6, 0x1f600}};
  std::size_t length = 1;
  for (const auto& [at, code_point] : expected) {
    const auto c = decode_utf8(text, at);
    ASSERT_TRUE(c) << at;
    EXPECT_EQ(c->code_point, code_point);
    EXPECT_EQ(c->length, length++);
  }
  EXPECT_EQ(decode_utf8("\x7f", 0)->code_point, 0x7fu);
  EXPECT_EQ(decode_utf8("\xf4\x8f\xbf\xbf", 0)->code_point, 0x10ffffu);  // the last code point
}

TEST(TextFormat, RejectsWhatIsNotUtf8) {
  for (const std::string bad : {"\x80", "\xbf",                                  // a continuation byte first
                                "\xc0\x80", "\xc1\xbf",                          // overlong two-byte forms
                                "\xe0\x80\x80", "\xe0\x9f\xbf",                  // overlong three-byte forms
                                "\xf0\x8f\xbf\xbf",                              // overlong four-byte form
                                "\xed\xa0\x80", "\xed\xbf\xbf",                  // surrogates
                                "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff",  // above U+10FFFF
                                "\xc3", "\xe4\xb8", "\xf0\x9f\x98",              // cut short
                                "\xc3\x28", "\xe4\x28\xad"}) {                   // not a continuation
    EXPECT_FALSE(decode_utf8(bad, 0)) << testing::PrintToString(bad);
  }
}

TEST(TextFormat, PythonFloatRepr) {
  const std::pair<double, const char*> cases[] = {{0.0, "0.0"},
                                                  {-0.0, "-0.0"},
                                                  {1.0, "1.0"},
                                                  {2.5, "2.5"},
                                                  {0.1, "0.1"},
                                                  {-0.25, "-0.25"},
                                                  {1e-05, "1e-05"},
                                                  {0.0001, "0.0001"},
                                                  {1.5e-07, "1.5e-07"},
                                                  {1e16, "1e+16"},
                                                  {1e15, "1000000000000000.0"},
                                                  {123456789.125, "123456789.125"},
                                                  {1e100, "1e+100"},
                                                  {5e-324, "5e-324"},
                                                  {1.7976931348623157e308, "1.7976931348623157e+308"},
                                                  {-1.5e-300, "-1.5e-300"},
                                                  {12345678901234567.0, "1.2345678901234568e+16"}};
  for (const auto& [value, text] : cases) EXPECT_EQ(tools::python_float_repr(value), text) << text;
}

}  // namespace
}  // namespace chakrasim::test
