// JSON inputs are refused above a fixed nesting depth before they are parsed, and error messages
// quote values only in part: a document nested 100k levels deep used to overflow the stack when
// a message printed it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/json_input.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

std::string nested(std::size_t levels, const std::string& inner = "1") {
  return std::string(levels, '[') + inner + std::string(levels, ']');
}

TEST(JsonDepth, AcceptsUpToTheLimitAndRefusesOneMore) {
  EXPECT_FALSE(json_too_deep_at(nested(kJsonMaxDepth)).has_value());
  // The byte offset of the bracket that goes one level too deep: the (limit + 1)-th, at offset limit.
  EXPECT_EQ(json_too_deep_at(nested(kJsonMaxDepth + 1)), kJsonMaxDepth);
  EXPECT_EQ(json_too_deep_at("{\"a\":" + nested(kJsonMaxDepth) + "}"), 5 + kJsonMaxDepth - 1);
}

TEST(JsonDepth, BracketsInsideStringsDoNotCount) {
  const std::string brackets(100000, '[');
  EXPECT_FALSE(json_too_deep_at("{\"key\": \"" + brackets + "\"}").has_value());
  // An escaped quote does not end the string.
  EXPECT_FALSE(json_too_deep_at("[\"\\\"" + brackets + "\"]").has_value());
  // Closing brackets balance opening ones: many shallow arrays in a row are fine.
  std::string wide = "[";
  for (int i = 0; i < 10000; ++i) wide += nested(10) + ",";
  wide += "1]";
  EXPECT_FALSE(json_too_deep_at(wide).has_value());
}

TEST(JsonDepth, ParseRefusesAHundredThousandLevelsNamingTheSource) {
  const std::string msg = error_of([] { parse_json_input(nested(100000), "deep.json", "a list"); });
  EXPECT_THAT(msg, HasSubstr("deep.json: arrays and objects nest more than 256 levels deep at byte 256"));
}

TEST(JsonDepth, ParseFailsOnSyntaxNamingTheSource) {
  const std::string msg = error_of([] { parse_json_input("{\"a\": }", "bad.json", "an object of keys"); });
  // The parser's tag ("[json.exception.parse_error.101] parse error at ") is left out.
  EXPECT_THAT(msg, HasSubstr("bad.json: invalid JSON (expected an object of keys): line 1, column 7: syntax error "
                             "while parsing value"));
  EXPECT_EQ(parse_json_input<nlohmann::ordered_json>("{\"b\": 1, \"a\": 2}", "ok.json", "").begin().key(), "b");
}

TEST(JsonExcerpt, CutsLongValuesAndSummarisesLargeOnes) {
  EXPECT_EQ(json_excerpt(nlohmann::ordered_json::parse(R"({"b": [1, 2], "a": "x"})")), R"({"b":[1,2],"a":"x"})");
  const std::string sixty(58, 'x');  // 60 characters with its quotes: kept whole
  EXPECT_EQ(json_excerpt(nlohmann::json(sixty)), "\"" + sixty + "\"");
  // Built with append: GCC 12 warns falsely (-Warray-bounds) on "literal" + std::string + "literal".
  std::string cut = "\"";
  cut.append(56, 'x').append("...");
  EXPECT_EQ(json_excerpt(nlohmann::json(sixty + "y")), cut);
  EXPECT_EQ(json_excerpt(nlohmann::json(std::vector<int>(1000000, 7))), "an array of 1000000 elements");
}

}  // namespace
}  // namespace chakrasim::test
