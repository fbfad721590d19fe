// Covers typed attribute access (chakra/attributes.h): the feeder's conversions for every oneof
// member, absent and duplicate attributes, the error messages, value_kind and the builders.
#include "chakra/attributes.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

#include "core/error.h"

namespace chakrasim::chakra {
namespace {

using ::testing::HasSubstr;

using ::chakrasim::test::error_of;

// A node with id 42, name "op", and the attribute `a`.
Node node_with(const Attribute& a) {
  Node n;
  n.set_id(42);
  n.set_name("op");
  *n.add_attr() = a;
  return n;
}

Attribute named(const std::string& name) {
  Attribute a;
  a.set_name(name);
  return a;
}

TEST(Attributes, EveryIntegerMemberReadsAsAnInteger) {
  struct Case {
    Attribute attr;
    std::int64_t expected;
  };
  std::vector<Case> cases;
  auto add = [&](auto setter, std::int64_t expected) {
    Attribute a = named("v");
    setter(a);
    cases.push_back({a, expected});
  };
  add([](Attribute& a) { a.set_int32_val(-7); }, -7);
  add([](Attribute& a) { a.set_int64_val(-(std::int64_t{1} << 40)); }, -(std::int64_t{1} << 40));
  add([](Attribute& a) { a.set_uint32_val(4294967295u); }, 4294967295);
  add([](Attribute& a) { a.set_uint64_val(std::uint64_t{1} << 50); }, std::int64_t{1} << 50);
  add([](Attribute& a) { a.set_sint32_val(-3); }, -3);
  add([](Attribute& a) { a.set_sint64_val(-5000000000); }, -5000000000);
  add([](Attribute& a) { a.set_fixed32_val(12345); }, 12345);
  add([](Attribute& a) { a.set_fixed64_val(9876543210u); }, 9876543210);
  add([](Attribute& a) { a.set_sfixed32_val(-11); }, -11);
  add([](Attribute& a) { a.set_sfixed64_val(-99); }, -99);
  add([](Attribute& a) { a.set_bool_val(true); }, 1);
  add([](Attribute& a) { a.set_bool_val(false); }, 0);
  for (const Case& c : cases) {
    SCOPED_TRACE(value_kind(c.attr));
    const Node n = node_with(c.attr);
    EXPECT_EQ(attr_int(n, "v"), c.expected);
    // Every integer member is also a number.
    EXPECT_EQ(attr_double(n, "v"), static_cast<double>(c.expected));
    EXPECT_EQ(attr_bool(n, "v"), c.expected != 0);
    if (c.expected >= 0) {
      EXPECT_EQ(attr_uint(n, "v"), static_cast<std::uint64_t>(c.expected));
    }
  }
}

TEST(Attributes, AttrUintKeepsTheFullUint64Range) {
  Attribute a = named("v");
  a.set_uint64_val(std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(attr_uint(node_with(a), "v"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(attr_double(node_with(a), "v"), 18446744073709551615.0);
  a.set_fixed64_val(std::numeric_limits<std::uint64_t>::max() - 1);
  EXPECT_EQ(attr_uint(node_with(a), "v"), std::numeric_limits<std::uint64_t>::max() - 1);
}

TEST(Attributes, AttrIntRejectsAUint64AboveInt64Max) {
  Attribute a = named("comm_size");
  a.set_uint64_val(std::uint64_t{1} << 63);
  const std::string msg = error_of([&] { attr_int(node_with(a), "comm_size"); });
  EXPECT_THAT(msg, HasSubstr("node 42 (\"op\")"));
  EXPECT_THAT(msg, HasSubstr("\"comm_size\""));
  EXPECT_THAT(msg, HasSubstr("uint64_val"));
  EXPECT_THAT(msg, HasSubstr("expected an integer that fits in int64"));
  // INT64_MAX itself fits.
  a.set_uint64_val(static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(attr_int(node_with(a), "comm_size"), std::numeric_limits<std::int64_t>::max());
}

TEST(Attributes, FloatAndDoubleAreRejectedAsIntegers) {
  Attribute f = named("comm_type");
  f.set_float_val(1.0f);
  Attribute d = named("comm_type");
  d.set_double_val(2.0);
  for (const Attribute& a : {f, d}) {
    const Node n = node_with(a);
    // The message shows the kind and the value: "float_val 1", "double_val 2".
    const std::string kind = a.value_case() == Attribute::kFloatVal ? "float_val 1" : "double_val 2";
    SCOPED_TRACE(kind);
    std::string msg = error_of([&] { attr_int(n, "comm_type"); });
    EXPECT_THAT(msg, HasSubstr("node 42 (\"op\"): attribute \"comm_type\" holds " + kind + "; expected an integer"));
    msg = error_of([&] { attr_uint(n, "comm_type"); });
    EXPECT_THAT(msg, HasSubstr("attribute \"comm_type\" holds " + kind + "; expected a non-negative integer"));
    msg = error_of([&] { attr_bool(n, "comm_type"); });
    EXPECT_THAT(msg, HasSubstr("holds " + kind + "; expected a bool"));
  }
}

TEST(Attributes, FloatAndDoubleReadAsDoubles) {
  Attribute f = named("peak");
  f.set_float_val(1.5f);
  EXPECT_EQ(attr_double(node_with(f), "peak"), 1.5);
  Attribute d = named("peak");
  d.set_double_val(-2.25e10);
  EXPECT_EQ(attr_double(node_with(d), "peak"), -2.25e10);
}

TEST(Attributes, NegativeIntegerIsRejectedByAttrUint) {
  for (auto setter : {+[](Attribute& a) { a.set_int64_val(-5); }, +[](Attribute& a) { a.set_int32_val(-5); },
                      +[](Attribute& a) { a.set_sint64_val(-5); }, +[](Attribute& a) { a.set_sfixed32_val(-5); }}) {
    Attribute a = named("comm_size");
    setter(a);
    const std::string msg = error_of([&] { attr_uint(node_with(a), "comm_size"); });
    EXPECT_THAT(msg, HasSubstr("node 42 (\"op\"): attribute \"comm_size\" is -5; expected a non-negative integer"));
  }
}

TEST(Attributes, StringOnlyReadsAsString) {
  Attribute s = named("pg_name");
  s.set_string_val("3");
  const Node n = node_with(s);
  EXPECT_EQ(attr_string(n, "pg_name"), "3");
  // A numeric-looking string is not an integer.
  std::string msg = error_of([&] { attr_int(n, "pg_name"); });
  EXPECT_THAT(msg, HasSubstr("attribute \"pg_name\" holds string_val \"3\"; expected an integer"));
  msg = error_of([&] { attr_double(n, "pg_name"); });
  EXPECT_THAT(msg, HasSubstr("holds string_val \"3\"; expected a number"));
  msg = error_of([&] { attr_bool(n, "pg_name"); });
  EXPECT_THAT(msg, HasSubstr("holds string_val \"3\"; expected a bool"));

  Attribute i = named("pg_name");
  i.set_int64_val(3);
  msg = error_of([&] { attr_string(node_with(i), "pg_name"); });
  EXPECT_THAT(msg, HasSubstr("node 42 (\"op\"): attribute \"pg_name\" holds int64_val 3; expected a string"));
  Attribute b = named("pg_name");
  b.set_bytes_val("3");
  msg = error_of([&] { attr_string(node_with(b), "pg_name"); });
  EXPECT_THAT(msg, HasSubstr("holds bytes_val; expected a string"));
}

TEST(Attributes, ListsAreNotScalars) {
  Attribute l = named("comm_size");
  l.mutable_int64_list()->add_values(4);
  const Node n = node_with(l);
  EXPECT_THAT(error_of([&] { attr_int(n, "comm_size"); }), HasSubstr("holds int64_list; expected an integer"));
  EXPECT_THAT(error_of([&] { attr_double(n, "comm_size"); }), HasSubstr("holds int64_list; expected a number"));
  EXPECT_THAT(error_of([&] { attr_bool_list(n, "comm_size"); }), HasSubstr("holds int64_list; expected a bool_list"));
}

TEST(Attributes, BoolList) {
  const Node n = node_with(make_bool_list("involved_dim", {true, false, true}));
  EXPECT_EQ(attr_bool_list(n, "involved_dim"), (std::vector<bool>{true, false, true}));
  // An empty list that is present (field 28 with no values, as the wire bytes e2 01 00 give).
  Attribute present_empty = named("involved_dim");
  present_empty.mutable_bool_list();
  EXPECT_EQ(attr_bool_list(node_with(present_empty), "involved_dim"), std::vector<bool>{});
  // A single bool is not a list.
  const std::string msg = error_of([] { attr_bool_list(node_with(make_bool("involved_dim", true)), "involved_dim"); });
  EXPECT_THAT(msg, HasSubstr("attribute \"involved_dim\" holds bool_val true; expected a bool_list"));
}

TEST(Attributes, MakeBoolListOfNoValuesStillHoldsABoolList) {
  // The builder must select the bool_list member even when there is nothing to add, or the
  // attribute holds no value at all and reads back as an error instead of an empty list.
  const Attribute a = make_bool_list("involved_dim", {});
  EXPECT_EQ(a.name(), "involved_dim");
  EXPECT_EQ(a.value_case(), Attribute::kBoolList);
  EXPECT_EQ(value_kind(a), "bool_list");
  std::optional<std::vector<bool>> values;
  EXPECT_NO_THROW(values = attr_bool_list(node_with(a), "involved_dim"));
  EXPECT_EQ(values, std::vector<bool>{});
}

TEST(Attributes, AttributeWithoutValueIsRejectedWithNoValue) {
  const Node n = node_with(named("comm_type"));
  EXPECT_EQ(value_kind(n.attr(0)), "no value");
  EXPECT_THAT(error_of([&] { attr_int(n, "comm_type"); }), HasSubstr("holds no value; expected an integer"));
  EXPECT_THAT(error_of([&] { attr_string(n, "comm_type"); }), HasSubstr("holds no value; expected a string"));
}

TEST(Attributes, AbsentAttributeIsNullopt) {
  const Node n = node_with(make_int64("comm_type", 1));
  EXPECT_EQ(find_attribute(n, "comm_size"), nullptr);
  EXPECT_EQ(attr_int(n, "comm_size"), std::nullopt);
  EXPECT_EQ(attr_uint(n, "comm_size"), std::nullopt);
  EXPECT_EQ(attr_double(n, "comm_size"), std::nullopt);
  EXPECT_EQ(attr_bool(n, "comm_size"), std::nullopt);
  EXPECT_EQ(attr_string(n, "comm_size"), std::nullopt);
  EXPECT_EQ(attr_bool_list(n, "comm_size"), std::nullopt);
  // Names are case-sensitive.
  EXPECT_EQ(attr_int(n, "Comm_Type"), std::nullopt);
  EXPECT_EQ(attr_int(Node{}, "comm_type"), std::nullopt);
}

TEST(Attributes, FirstMatchWinsOnDuplicates) {
  Node n;
  *n.add_attr() = make_int64("other", 9);
  *n.add_attr() = make_int64("comm_size", 100);
  *n.add_attr() = make_int64("comm_size", 200);
  *n.add_attr() = make_string("comm_size", "not read");
  EXPECT_EQ(attr_int(n, "comm_size"), 100);
  EXPECT_EQ(find_attribute(n, "comm_size"), &n.attr(1));
  // The later, ill-typed duplicate is never looked at, even by a string accessor.
  EXPECT_THAT(error_of([&] { attr_string(n, "comm_size"); }), HasSubstr("holds int64_val"));  // with its value after it
}

TEST(Attributes, ValueKindNamesTheOneofMember) {
  Attribute a = named("x");
  a.set_sfixed64_val(1);
  EXPECT_EQ(value_kind(a), "sfixed64_val");
  a.mutable_string_list()->add_values("s");
  EXPECT_EQ(value_kind(a), "string_list");
  a.set_double_val(0);
  EXPECT_EQ(value_kind(a), "double_val");
}

TEST(Attributes, BuildersSetNameAndTheUsualOneofMember) {
  const Attribute i64 = make_int64("a", -3);
  EXPECT_EQ(i64.name(), "a");
  EXPECT_EQ(i64.value_case(), Attribute::kInt64Val);
  EXPECT_EQ(i64.int64_val(), -3);
  const Attribute u64 = make_uint64("b", std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(u64.name(), "b");
  EXPECT_EQ(u64.value_case(), Attribute::kUint64Val);
  EXPECT_EQ(u64.uint64_val(), std::numeric_limits<std::uint64_t>::max());
  const Attribute i32 = make_int32("c", -2147483647 - 1);
  EXPECT_EQ(i32.value_case(), Attribute::kInt32Val);
  EXPECT_EQ(i32.int32_val(), -2147483647 - 1);
  const Attribute b = make_bool("d", false);
  EXPECT_EQ(b.value_case(), Attribute::kBoolVal);
  EXPECT_FALSE(b.bool_val());
  const Attribute s = make_string("e", "");
  EXPECT_EQ(s.value_case(), Attribute::kStringVal);
  EXPECT_EQ(s.string_val(), "");
  const Attribute l = make_bool_list("f", {false, true});
  EXPECT_EQ(l.value_case(), Attribute::kBoolList);
  ASSERT_EQ(l.bool_list().values_size(), 2);
  EXPECT_FALSE(l.bool_list().values(0));
  EXPECT_TRUE(l.bool_list().values(1));
  // A zero/false/empty oneof value is still present (and serialised).
  EXPECT_GT(b.ByteSizeLong(), 3u);
  EXPECT_GT(s.ByteSizeLong(), 3u);
}

}  // namespace
}  // namespace chakrasim::chakra
