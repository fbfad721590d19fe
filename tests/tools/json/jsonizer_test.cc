// chakra jsonize / dejsonize. Worked example: data3.0.et (the text converter's DATA workload,
// rank 0) jsonized with --compat is byte-identical to the reference jsonizer's data3.0.json, and
// every .et of the reference (the archives' too) goes ET -> JSON -> ET unchanged in both forms.
// The rest builds small traces in code: each attribute type, the values canonical JSON prints
// in odd ways (64-bit integers, NaN, -0.0, non-ASCII), unknown fields, and bad input.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "chakra/trace_builder.h"
#include "support/test_support.h"
#include "tools/json/jsonizer.h"

namespace chakrasim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using tools::JsonForm;

std::string round_trip(const std::string& et_bytes, JsonForm form) {
  const std::string json = tools::trace_to_json(chakra::parse_trace(et_bytes, "in.et"), form);
  return chakra::serialize_trace(tools::trace_from_json(json, "in.json"));
}

// The metadata and nodes of the document form, parsed; fails the test if it is not one document.
nlohmann::ordered_json document_of(const chakra::Trace& trace) {
  return nlohmann::ordered_json::parse(tools::trace_to_json(trace, JsonForm::kDocument));
}

TEST(Jsonizer, CompatFormIsByteIdenticalToTheReferenceJsonizer) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const chakra::Trace trace = chakra::read_trace(ref / "golden/text_converter/data3.0.et");
  EXPECT_EQ(tools::trace_to_json(trace, JsonForm::kCompat), file_bytes(ref / "golden/jsonizer/data3.0.json"));
  // and the reference's file reads back into the .et it was made from
  const chakra::Trace back = tools::trace_from_json(file_bytes(ref / "golden/jsonizer/data3.0.json"), "data3.0.json");
  EXPECT_EQ(chakra::serialize_trace(back), file_bytes(ref / "golden/text_converter/data3.0.et"));
}

TEST(Jsonizer, EveryReferenceEtRoundTripsByteForByteInBothForms) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const fs::path extracted = temp_dir("jsonizer_archives");
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(ref)) {
    const std::string name = entry.path().filename().string();
    const bool archive = name.ends_with(".tgz") || name.ends_with(".tar.gz");
    if (entry.is_regular_file() && archive) {
      const fs::path into = extracted / name;
      fs::create_directories(into);
      const std::string command = "tar -xzf '" + entry.path().string() + "' -C '" + into.string() + "' 2>/dev/null";
      ASSERT_EQ(std::system(command.c_str()), 0) << command;
    }
    if (entry.is_regular_file() && name.ends_with(".et")) files.push_back(entry.path());
  }
  std::size_t from_archives = 0;
  for (const auto& entry : fs::recursive_directory_iterator(extracted)) {
    if (entry.is_regular_file() && entry.path().extension() == ".et") {
      files.push_back(entry.path());
      ++from_archives;
    }
  }
  EXPECT_GE(files.size(), 165u);  // 164 beside the reference, the feeder tests' trace inside its archive
  EXPECT_GE(from_archives, 1u);
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    const std::string bytes = file_bytes(path);
    EXPECT_EQ(round_trip(bytes, JsonForm::kDocument), bytes);
    EXPECT_EQ(round_trip(bytes, JsonForm::kCompat), bytes);
  }
}

TEST(Jsonizer, EveryAttributeTypeOfTheGeneratorRoundTrips) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const std::string bytes = file_bytes(ref / "golden/generator/one_metadata_node_all_types.0.et");
  const chakra::Trace trace = chakra::parse_trace(bytes, "all_types.et");
  const auto doc = document_of(trace);
  const auto& attrs = doc["nodes"][0]["attr"];
  ASSERT_EQ(attrs.size(), 30u);  // every member of the oneof but any_val, one value and one list each
  EXPECT_EQ(attrs[0]["doubleVal"], 1.2345);
  EXPECT_EQ(attrs[7]["int64List"]["values"][0], "9876543210");
  EXPECT_EQ(attrs[29]["bytesList"]["values"][0], "MTIzNDU=");
  EXPECT_EQ(round_trip(bytes, JsonForm::kDocument), bytes);
}

// One node holding each oneof member, with the values canonical JSON treats specially.
chakra::Trace every_type_trace() {
  chakra::TraceBuilder builder("1.0.0");
  chakra::Node& node = builder.add(chakra::NodeType::kComp, "all \"types\" \\ é 🚀 \x01\x7f\n");
  auto add = [&](const std::string& name) -> chakra::Attribute& {
    chakra::Attribute& a = *node.add_attr();
    a.set_name(name);
    return a;
  };
  add("d").set_double_val(-0.0);
  add("dl").mutable_double_list()->add_values(std::numeric_limits<double>::quiet_NaN());
  add("dl").mutable_double_list()->add_values(-std::numeric_limits<double>::infinity());
  add("big").set_double_val(1e16);
  add("tiny").set_double_val(1e-5);
  add("subnormal").mutable_double_list()->add_values(std::numeric_limits<double>::denorm_min());
  add("f").set_float_val(0.1f);
  add("fl").mutable_float_list()->add_values(std::numeric_limits<float>::max());
  add("i32").set_int32_val(std::numeric_limits<std::int32_t>::min());
  add("i32l").mutable_int32_list()->add_values(-1);
  add("i64").set_int64_val(std::numeric_limits<std::int64_t>::min());
  add("i64l").mutable_int64_list()->add_values(0);
  add("u32").set_uint32_val(std::numeric_limits<std::uint32_t>::max());
  add("u32l").mutable_uint32_list();
  add("u64").set_uint64_val(std::numeric_limits<std::uint64_t>::max());
  add("u64l").mutable_uint64_list()->add_values(1);
  add("s32").set_sint32_val(-7);
  add("s32l").mutable_sint32_list()->add_values(7);
  add("s64").set_sint64_val(-7);
  add("s64l").mutable_sint64_list()->add_values(7);
  add("x32").set_fixed32_val(0);
  add("x32l").mutable_fixed32_list()->add_values(3);
  add("x64").set_fixed64_val(0);
  add("x64l").mutable_fixed64_list()->add_values(3);
  add("sx32").set_sfixed32_val(-3);
  add("sx32l").mutable_sfixed32_list()->add_values(-3);
  add("sx64").set_sfixed64_val(-3);
  add("sx64l").mutable_sfixed64_list()->add_values(-3);
  add("b").set_bool_val(false);
  add("bl").mutable_bool_list()->add_values(true);
  add("s").set_string_val("");
  add("sl").mutable_string_list()->add_values("x");
  std::string every_byte;
  for (int i = 0; i < 256; ++i) every_byte += static_cast<char>(i);
  add("y").set_bytes_val(every_byte);
  add("yl").mutable_bytes_list()->add_values("\xff");
  node.mutable_inputs();  // present but empty: kept as {}
  node.add_ctrl_deps(std::numeric_limits<std::uint64_t>::max());
  return builder.trace();
}

TEST(Jsonizer, EveryOneofMemberAndItsEdgeValuesRoundTripInBothForms) {
  const std::string bytes = chakra::serialize_trace(every_type_trace());
  EXPECT_EQ(round_trip(bytes, JsonForm::kDocument), bytes);
  EXPECT_EQ(round_trip(bytes, JsonForm::kCompat), bytes);
}

TEST(Jsonizer, ValuesArePrintedAsProtobufJsonAndPythonJsonDumpsPrintThem) {
  const std::string json = tools::trace_to_json(every_type_trace(), JsonForm::kDocument);
  // Floats as Python's repr, specials as strings; 64-bit integers as strings, 32-bit as numbers.
  for (const char* expected :
       {"\"doubleVal\": -0.0", "\"NaN\"", "\"-Infinity\"", "\"doubleVal\": 1e+16", "\"doubleVal\": 1e-05",
        "\"floatVal\": 0.1", "3.4028235e+38", "\"int32Val\": -2147483648", "\"int64Val\": \"-9223372036854775808\"",
        "\"uint32Val\": 4294967295", "\"uint64Val\": \"18446744073709551615\"", "\"sint64Val\": \"-7\"",
        "\"fixed32Val\": 0", "\"boolVal\": false", "\"stringVal\": \"\"", "\"uint32List\": {}", "\"inputs\": {}",
        "\"ctrlDeps\": [\n        \"18446744073709551615\"\n      ]",
        "\"yl\",\n          \"bytesList\": {\n"
        "            \"values\": [\n              \"/w==\"",
        // ensure_ascii: quote, backslash, é, the rocket as a surrogate pair, control characters, DEL
        "\"name\": \"all \\\"types\\\" \\\\ \\u00e9 \\ud83d\\ude80 \\u0001\\u007f\\n\""}) {
    EXPECT_THAT(json, HasSubstr(expected));
  }
  EXPECT_EQ(json.find_first_not_of("\n\t !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`"
                                   "abcdefghijklmnopqrstuvwxyz{|}~"),
            std::string::npos)
      << "the JSON is plain ASCII";
}

TEST(Jsonizer, DocumentFormIsOneJsonDocumentInFieldNumberOrderWithDefaultsLeftOut) {
  chakra::TraceBuilder builder("0.0.4");
  builder.add(chakra::NodeType::kComp, "first");          // id 0 and duration 0: both left out
  chakra::Node& second = builder.comp("second", 5, {0});  // comp() adds is_cpu_op = false
  second.add_ctrl_deps(0);
  const auto doc = document_of(builder.trace());
  ASSERT_EQ(doc.size(), 2u);
  EXPECT_EQ(doc["metadata"], nlohmann::ordered_json::parse(R"({"version": "0.0.4"})"));
  ASSERT_EQ(doc["nodes"].size(), 2u);
  EXPECT_EQ(doc["nodes"][0], nlohmann::ordered_json::parse(R"({"name": "first", "type": "COMP_NODE"})"));
  std::vector<std::string> keys;
  for (const auto& [key, value] : doc["nodes"][1].items()) keys.push_back(key);
  EXPECT_THAT(keys, ::testing::ElementsAre("id", "name", "type", "ctrlDeps", "dataDeps", "durationMicros", "attr"));
  EXPECT_EQ(doc["nodes"][1]["id"], "1");
  EXPECT_EQ(doc["nodes"][1]["attr"][0]["boolVal"], false);  // a oneof member is printed even when false
}

TEST(Jsonizer, CompatFormIsTheObjectsBackToBackWithoutATrailingNewline) {
  chakra::TraceBuilder builder("");
  builder.add(chakra::NodeType::kInvalid, "");  // an all-default node: {}
  builder.add(chakra::NodeType::kComp, "c").set_duration_micros(3);
  EXPECT_EQ(tools::trace_to_json(builder.trace(), JsonForm::kCompat), "{}{}{\n  \"id\": \"1\",\n  \"name\": \"c\",\n  "
                                                                      "\"type\": \"COMP_NODE\",\n  \"durationMicros\": "
                                                                      "\"3\"\n}");
  const std::string bytes = chakra::serialize_trace(builder.trace());
  EXPECT_EQ(round_trip(bytes, JsonForm::kCompat), bytes);  // the all-default node stays a 0-byte message
  EXPECT_EQ(tools::trace_to_json(chakra::TraceBuilder("v").trace(), JsonForm::kDocument), "{\n  \"metadata\": {\n    "
                                                                                          "\"version\": \"v\"\n  },\n  "
                                                                                          "\"nodes\": []\n}\n");
}

TEST(Jsonizer, UnknownFieldsAndEnumValuesAreKeptAndWrittenBack) {
  // GlobalMetadata{version "0.0.4"; unknown field 3 = "A"}; Node{id 7; type 12 (a newer node
  // type); attr {name "x"; unknown field 40 = 9}; unknown field 99 = 5}
  const std::string bytes("\x0a\x0a\x05"
                          "0.0.4\x1a\x01"
                          "A\x0f\x08\x07\x18\x0c\x52\x06\x0a\x01x\xc0\x02\x09\x98\x06\x05",
                          27);
  const chakra::Trace trace = chakra::parse_trace(bytes, "unknown.et");
  const auto doc = document_of(trace);
  EXPECT_EQ(doc["metadata"]["_unknownFields"], "GgFB");  // base64 of 1a 01 41
  EXPECT_EQ(doc["nodes"][0]["type"], 12);
  EXPECT_EQ(doc["nodes"][0]["attr"][0]["_unknownFields"], "wAIJ");
  EXPECT_EQ(doc["nodes"][0]["_unknownFields"], "mAYF");
  EXPECT_EQ(round_trip(bytes, JsonForm::kDocument), bytes);
  EXPECT_EQ(round_trip(bytes, JsonForm::kCompat), bytes);
}

TEST(Jsonizer, AStringThatIsNotUtf8IsAnErrorNamingTheNodeAndField) {
  // Only a trace built in code can hold one: protobuf rejects it when it reads a file.
  chakra::TraceBuilder builder;
  builder.comp("ok", 1);
  builder.comp("bad \xff", 1);
  EXPECT_THAT(error_of([&] { tools::trace_to_json(builder.trace(), JsonForm::kDocument); }), HasSubstr("node 1: string "
                                                                                                       "field "
                                                                                                       "ChakraProtoMsg."
                                                                                                       "Node.name is "
                                                                                                       "not valid "
                                                                                                       "UTF-8"));
}

TEST(Dejsonizer, AcceptsWhatProtobufsJsonParserAccepts) {
  // proto field names, numbers for 64-bit integers, enum numbers, null, URL-safe unpadded base64,
  // integral floats for integers, numeric strings for floats.
  const chakra::Trace trace = tools::trace_from_json(R"({"metadata": null, "nodes": [
      {"id": 3, "data_deps": ["1", 2], "type": 4, "duration_micros": 2.0, "name": null,
       "attr": [{"name": "y", "bytesVal": "_-8"}, {"name": "f", "float_val": "0.5"}]}]})",
                                                     "lenient.json");
  ASSERT_EQ(trace.nodes.size(), 1u);
  const chakra::Node& node = trace.nodes[0];
  EXPECT_EQ(node.id(), 3u);
  EXPECT_THAT(node.data_deps(), ::testing::ElementsAre(1u, 2u));
  EXPECT_EQ(node.type(), ChakraProtoMsg::COMP_NODE);
  EXPECT_EQ(node.duration_micros(), 2u);
  EXPECT_EQ(node.attr(0).bytes_val(), "\xff\xef");
  EXPECT_EQ(node.attr(1).float_val(), 0.5f);
}

TEST(Dejsonizer, AFloatComesBackAsTheFloatThatWasPrinted) {
  // 0x15ae43fd: its shortest text is 7.038531e-26, but that text read as a double and then
  // rounded to a float gives its neighbour (of all positive floats it is the only one: searched
  // exhaustively). Python's json_format checks candidates through a double, so it prints
  // 7.0385307e-26, and so do we; a float field is read from the number's own text, so either text
  // gives the float back. Plus a sweep of bit patterns across the whole range, subnormals first.
  chakra::TraceBuilder builder;
  chakra::Node& node = builder.comp("f", 1);  // attr 0 is comp()'s is_cpu_op; the floats follow
  std::vector<std::uint32_t> patterns = {0x15ae43fd, 0x95ae43fd};
  for (std::uint32_t bits = 0x00000001; bits < 0x7f800000; bits += 0x000f4243) patterns.push_back(bits);
  for (std::uint32_t bits : patterns) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    node.add_attr()->mutable_float_list()->add_values(f);
  }
  const std::string json = tools::trace_to_json(builder.trace(), JsonForm::kDocument);
  EXPECT_THAT(json, HasSubstr("              7.0385307e-26\n"));
  EXPECT_THAT(json, HasSubstr("              1.4013e-45\n"));  // Python's 6 digits at least, for the smallest subnormal
  EXPECT_NE(static_cast<float>(7.038531e-26), node.attr(1).float_list().values(0)) << "the double route lands on a "
                                                                                      "neighbour";
  const std::string bytes = chakra::serialize_trace(builder.trace());
  EXPECT_EQ(round_trip(bytes, JsonForm::kDocument), bytes);
  const chakra::Trace shortest = tools::trace_from_json(R"({"nodes": [{"attr": [{"floatVal": 7.038531e-26}]}]})", "f."
                                                                                                                  "jso"
                                                                                                                  "n");
  EXPECT_EQ(shortest.nodes[0].attr(0).float_val(), node.attr(1).float_list().values(0));
}

std::string error_in(const std::string& json) {
  return error_of([&] { tools::trace_from_json(json, "bad.json"); });
}

TEST(Dejsonizer, BadJsonNamesTheFileLineAndColumn) {
  EXPECT_THAT(error_in("{\"metadata\": {},\n \"nodes\": [{\"id\": }]}"), HasSubstr("bad.json: line 2, column 19: not "
                                                                                   "valid JSON"));
  EXPECT_THAT(error_in("{}{\n\"id\": \"1\"\n"), HasSubstr("bad.json: line 3"));
  EXPECT_THAT(error_in("  \n"), HasSubstr("bad.json: the file holds no JSON"));
}

TEST(Dejsonizer, BadValuesNameTheNodeTheKeyAndWhatWasExpected) {
  const std::string head = R"({"metadata": {}, "nodes": [{"id": "4"}, {"id": "17", )";
  auto node_error = [&](const std::string& body) { return error_in(head + body + "}]}"); };
  EXPECT_THAT(node_error(R"("attr": [{"name": "a"}, {"int64Val": true}])"), HasSubstr("bad.json: node 1 (id 17): key "
                                                                                      "\"attr[1].int64Val\": expected "
                                                                                      "a signed 64-bit integer"));
  EXPECT_THAT(node_error(R"("dataDeps": ["-1"])"), HasSubstr("key \"dataDeps[0]\": expected an unsigned 64-bit "
                                                             "integer"));
  EXPECT_THAT(node_error(R"("attr": [{"int32Val": 2147483648}])"), HasSubstr("expected a signed 32-bit integer, got "
                                                                             "2147483648"));
  EXPECT_THAT(node_error(R"("type": "COMP")"), HasSubstr("expected a NodeType name (INVALID_NODE, METADATA_NODE"));
  EXPECT_THAT(node_error(R"("dataDep": [])"), HasSubstr("node 1 (id 17): unknown key \"dataDep\" in a Node; expected "
                                                        "one of id, name, type, ctrlDeps, dataDeps"));
  EXPECT_THAT(node_error(R"("attr": [{"int64Val": "1", "boolVal": true}])"), HasSubstr("key \"attr[0].boolVal\": "
                                                                                       "\"int64Val\" is already set, "
                                                                                       "and a AttributeProto holds "
                                                                                       "only one member of `value`"));
  EXPECT_THAT(node_error(R"("dataDeps": [], "data_deps": [])"), HasSubstr("key \"data_deps\": field data_deps is given "
                                                                          "twice"));
  EXPECT_THAT(node_error(R"("name": 5)"), HasSubstr("key \"name\": expected a string, got 5"));
  EXPECT_THAT(node_error(R"("dataDeps": "1")"), HasSubstr("key \"dataDeps\": expected a JSON array"));
  EXPECT_THAT(node_error(R"("dataDeps": ["1", [2]])"), HasSubstr("key \"dataDeps[1]\": expected an unsigned 64-bit "
                                                                 "integer (a string of digits, or a number), got an "
                                                                 "array"));
  EXPECT_THAT(node_error(R"("name": [])"), HasSubstr("key \"name\": expected a string, got an array"));
  EXPECT_THAT(node_error(R"("inputs": [])"), HasSubstr("key \"inputs\": expected a JSON object (a IOInfo)"));
  EXPECT_THAT(node_error(R"("attr": [{"bytesVal": "a*b"}])"), HasSubstr("expected a base64 string"));
  EXPECT_THAT(node_error(R"("attr": [{"floatVal": 1e39}])"), HasSubstr("expected a number in the range of a 32-bit "
                                                                       "float"));
  EXPECT_THAT(node_error(R"("attr": [{"doubleVal": "fast"}])"), HasSubstr("expected a number (or \"NaN\""));
  EXPECT_THAT(node_error(R"("_unknownFields": "/w==")"), HasSubstr("key \"_unknownFields\": expected the base64 of "
                                                                   "protobuf wire bytes"));
}

TEST(Dejsonizer, BadShapesAreNamed) {
  EXPECT_THAT(error_in("[1, 2]"), HasSubstr("bad.json: expected a JSON object (the document {\"metadata\": {...}, "
                                            "\"nodes\": [{...}, ...]} or the GlobalMetadata), got an array"));
  EXPECT_THAT(error_in("{} 5"), HasSubstr("bad.json: node 0: expected a JSON object (a Node), got 5"));
  EXPECT_THAT(error_in(R"({"nodes": {}})"), HasSubstr("key \"nodes\": expected a JSON array of Node objects, got an "
                                                      "object"));
  EXPECT_THAT(error_in(R"({"nodes": [], "extra": 1})"), HasSubstr("unknown top-level key \"extra\"; expected "
                                                                  "\"metadata\" and \"nodes\""));
  EXPECT_THAT(error_in(R"({"nodes": []} {})"), HasSubstr("more JSON after the document's closing brace"));
  EXPECT_THAT(error_in(R"({"version": 1})"), HasSubstr("metadata (the first JSON object): key \"version\": expected a "
                                                       "string"));
}

TEST(JsonizerCli, JsonizeThenDejsonizeGivesTheSameEtAndErrorsExitNonZero) {
  const fs::path dir = temp_dir("jsonizer_cli");
  const std::string bytes = chakra::serialize_trace(every_type_trace());
  write_bytes(dir / "t.et", bytes);
  for (const std::string form : {"", "--compat"}) {
    std::vector<std::string> args = {"chakra", "jsonize", (dir / "t.et").string(), (dir / "t.json").string()};
    if (!form.empty()) args.push_back(form);
    const CommandResult jsonize = run_binary(args);
    ASSERT_EQ(jsonize.exit_code, 0) << jsonize.err;
    const CommandResult back =
        run_binary({"chakra", "dejsonize", (dir / "t.json").string(), (dir / "back.et").string()});
    ASSERT_EQ(back.exit_code, 0) << back.err;
    EXPECT_EQ(file_bytes(dir / "back.et"), bytes) << form;
  }
  write_bytes(dir / "bad.json", R"({"nodes": [{"id": "x"}]})");
  const CommandResult bad = run_binary({"chakra", "dejsonize", (dir / "bad.json").string(), (dir / "o.et").string()});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("bad.json: node 0: key \"id\": expected an unsigned 64-bit integer (a string of "
                                 "digits, or a number), got \"x\""));
  const CommandResult missing =
      run_binary({"chakra", "jsonize", (dir / "none.et").string(), (dir / "o.json").string()});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.err, HasSubstr("none.et"));
}

TEST(JsonizerCli, HelpShowsAnExample) {
  for (const char* tool : {"jsonize", "dejsonize"}) {
    const CommandResult help = run_binary({"chakra", tool, "--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_THAT(help.out, HasSubstr(std::string("Example:\n  chakrasim chakra ") + tool));
  }
}

}  // namespace
}  // namespace chakrasim::test
