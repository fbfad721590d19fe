// Covers the .et codec (chakra/et_file.h): the framing on hand-encoded bytes, exact round trips,
// unknown fields and enum values, zero-length messages, rank_path and every parse/IO error.
#include "chakra/et_file.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "core/error.h"
#include "support/test_support.h"

namespace chakrasim::chakra {
namespace {

using ::testing::HasSubstr;

// "0a 05 ff" -> the three bytes; spaces are ignored.
std::string from_hex(const std::string& hex) {
  std::string out;
  std::string digits;
  for (char c : hex) {
    if (c == ' ' || c == '\n') continue;
    digits.push_back(c);
    if (digits.size() == 2) {
      out.push_back(static_cast<char>(std::stoi(digits, nullptr, 16)));
      digits.clear();
    }
  }
  EXPECT_TRUE(digits.empty()) << "odd number of hex digits in test data";
  return out;
}

// The 81-byte file of docs/chakra-format.md §1.1 (traces/microbenchmarks/all_reduce/4npus_1MB/all_reduce.0.et).
const std::string kWalkThrough =
    from_hex("07 0a 05 302e302e34"                             // GlobalMetadata{version "0.0.4"}
             "48"                                              // Node, 72 bytes
             "12 14 616c6c5f7265647563655f346e7075735f314d42"  // name all_reduce_4npus_1MB
             "18 07"                                           // type COMM_COLL_NODE
             "52 0e 0a 09 69735f6370755f6f70 d8 01 00"         // attr is_cpu_op bool_val false
             "52 0d 0a 09 636f6d6d5f74797065 48 00"            // attr comm_type int64_val 0
             "52 0f 0a 09 636f6d6d5f73697a65 48 80 80 40");    // attr comm_size int64_val 1048576

// Runs `body`, expecting an Error, and returns its message.
using ::chakrasim::test::error_of;

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(EtFileWalkThrough, HandEncodedBytesParseToTheDocumentedNode) {
  ASSERT_EQ(kWalkThrough.size(), 81u);
  const Trace trace = parse_trace(kWalkThrough, "walk.et");
  EXPECT_EQ(trace.metadata.version(), "0.0.4");
  EXPECT_EQ(trace.metadata.attr_size(), 0);
  ASSERT_EQ(trace.nodes.size(), 1u);
  const Node& node = trace.nodes[0];
  EXPECT_EQ(node.id(), 0u);
  EXPECT_EQ(node.name(), "all_reduce_4npus_1MB");
  EXPECT_EQ(node.type(), ChakraProtoMsg::COMM_COLL_NODE);
  EXPECT_EQ(node.data_deps_size(), 0);
  EXPECT_EQ(node.ctrl_deps_size(), 0);
  EXPECT_EQ(node.duration_micros(), 0u);
  ASSERT_EQ(node.attr_size(), 3);
  EXPECT_EQ(node.attr(0).name(), "is_cpu_op");
  EXPECT_EQ(node.attr(0).value_case(), Attribute::kBoolVal);
  EXPECT_FALSE(node.attr(0).bool_val());
  EXPECT_EQ(node.attr(1).name(), "comm_type");
  EXPECT_EQ(node.attr(1).value_case(), Attribute::kInt64Val);
  EXPECT_EQ(node.attr(1).int64_val(), 0);
  EXPECT_EQ(node.attr(2).name(), "comm_size");
  EXPECT_EQ(node.attr(2).value_case(), Attribute::kInt64Val);
  EXPECT_EQ(node.attr(2).int64_val(), 1048576);
  // The typed accessors agree with the raw fields.
  EXPECT_EQ(attr_bool(node, "is_cpu_op"), false);
  EXPECT_EQ(attr_int(node, "comm_type"), 0);
  EXPECT_EQ(attr_uint(node, "comm_size"), 1048576u);
}

TEST(EtFileWalkThrough, SerializeGivesBackTheIdenticalBytes) {
  EXPECT_EQ(serialize_trace(parse_trace(kWalkThrough, "walk.et")), kWalkThrough);
}

TEST(EtFileWalkThrough, BuiltFromScratchSerializesToTheSameBytes) {
  // Oneof members are written even when zero/false; proto3 defaults (id 0) are omitted.
  Trace trace;
  trace.metadata.set_version("0.0.4");
  Node& node = trace.nodes.emplace_back();
  node.set_name("all_reduce_4npus_1MB");
  node.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  *node.add_attr() = make_bool("is_cpu_op", false);
  *node.add_attr() = make_int64("comm_type", 0);
  *node.add_attr() = make_int64("comm_size", 1048576);
  EXPECT_EQ(serialize_trace(trace), kWalkThrough);
}

TEST(EtFileFraming, MetadataOnlyFileHasNoNodes) {
  const Trace trace = parse_trace(from_hex("07 0a 05 312e302e30"), "m.et");
  EXPECT_EQ(trace.metadata.version(), "1.0.0");
  EXPECT_TRUE(trace.nodes.empty());
}

TEST(EtFileFraming, ZeroLengthMessagesParseAsEmptyMessages) {
  // An all-default Node serialises to 0 bytes; it is an empty Node (id 0), not the end of the stream.
  const std::string bytes = from_hex("07 0a 05 302e302e34  00  04 08 05 18 04  00");
  const Trace trace = parse_trace(bytes, "z.et");
  ASSERT_EQ(trace.nodes.size(), 3u);
  EXPECT_EQ(trace.nodes[0].id(), 0u);
  EXPECT_EQ(trace.nodes[0].name(), "");
  EXPECT_EQ(trace.nodes[0].type(), ChakraProtoMsg::INVALID_NODE);
  EXPECT_EQ(trace.nodes[1].id(), 5u);
  EXPECT_EQ(trace.nodes[1].type(), ChakraProtoMsg::COMP_NODE);
  EXPECT_EQ(trace.nodes[2].id(), 0u);
  EXPECT_EQ(serialize_trace(trace), bytes);
}

TEST(EtFileFraming, ZeroLengthMetadataIsAnEmptyGlobalMetadata) {
  const Trace trace = parse_trace(from_hex("00 02 08 03"), "z.et");
  EXPECT_EQ(trace.metadata.version(), "");
  ASSERT_EQ(trace.nodes.size(), 1u);
  EXPECT_EQ(trace.nodes[0].id(), 3u);
}

TEST(EtFileFraming, MultiByteLengthPrefixIsDecoded) {
  // A 200-byte name makes a Node longer than 127 bytes: a two-byte varint length prefix.
  Trace trace;
  trace.metadata.set_version("0.0.4");
  trace.nodes.emplace_back().set_name(std::string(200, 'x'));
  const std::string bytes = serialize_trace(trace);
  // 8 metadata bytes, then varint(203) = cb 01, then the name's tag 12 and varint(200) = c8 01.
  ASSERT_EQ(bytes.size(), 8u + 2u + 203u);
  EXPECT_EQ(bytes.substr(8, 4), from_hex("cb 01 12 c8"));
  const Trace back = parse_trace(bytes, "long.et");
  ASSERT_EQ(back.nodes.size(), 1u);
  EXPECT_EQ(back.nodes[0].name(), std::string(200, 'x'));
}

TEST(EtFileFraming, UnpackedRepeatedDepsAreAcceptedAndWrittenPacked) {
  // data_deps (field 5) written unpacked: 28 01 28 02; the writer packs them: 2a 02 01 02.
  const Trace trace = parse_trace(from_hex("00 06 08 03 28 01 28 02"), "u.et");
  ASSERT_EQ(trace.nodes.size(), 1u);
  ASSERT_EQ(trace.nodes[0].data_deps_size(), 2);
  EXPECT_EQ(trace.nodes[0].data_deps(0), 1u);
  EXPECT_EQ(trace.nodes[0].data_deps(1), 2u);
  EXPECT_EQ(serialize_trace(trace), from_hex("00 06 08 03 2a 02 01 02"));
}

TEST(EtFileUnknown, UnknownFieldsAndEnumValuesSurviveTheRoundTrip) {
  const std::string framed =
      from_hex("0a 0a 05 302e302e34 1a 01 41"  // GlobalMetadata{version "0.0.4"; unknown field 3 = "A"}
               "0f"                            // Node, 15 bytes:
               "08 07"                         //   id 7
               "18 0c"                         //   type 12 (not in the enum: a newer tool's node type)
               "52 06 0a 01 78 c0 02 09"       //   attr {name "x"; unknown field 40 = 9}
               "98 06 05");                    //   unknown field 99 = 5
  const Trace trace = parse_trace(framed, "unknown.et");
  EXPECT_EQ(trace.metadata.version(), "0.0.4");
  ASSERT_EQ(trace.nodes.size(), 1u);
  const Node& node = trace.nodes[0];
  EXPECT_EQ(node.id(), 7u);
  EXPECT_EQ(static_cast<int>(node.type()), 12);
  ASSERT_EQ(node.attr_size(), 1);
  EXPECT_EQ(node.attr(0).name(), "x");
  EXPECT_EQ(node.attr(0).value_case(), Attribute::VALUE_NOT_SET);
  EXPECT_EQ(serialize_trace(trace), framed);
}

TEST(EtFileUnknown, UnknownFieldIsWrittenAfterTheKnownOnes) {
  // Known fields come out in field-number order, unknown ones after them: reordering on input
  // is normalised on output (and the normalised form is then stable).
  const std::string input = from_hex("00 07 98 06 05 08 07 18 0c");
  const std::string normal = from_hex("00 07 08 07 18 0c 98 06 05");
  EXPECT_EQ(serialize_trace(parse_trace(input, "u.et")), normal);
  EXPECT_EQ(serialize_trace(parse_trace(normal, "u.et")), normal);
}

TEST(EtFileErrors, EmptyFile) {
  const std::string msg = error_of([] { parse_trace("", "empty.et"); });
  EXPECT_THAT(msg, HasSubstr("empty.et"));
  EXPECT_THAT(msg, HasSubstr("empty"));
  EXPECT_THAT(msg, HasSubstr("expected a Chakra trace"));
}

TEST(EtFileErrors, GzipMagicIsRejectedWithAHint) {
  const std::string msg = error_of([] { parse_trace(from_hex("1f 8b 08 00 00 00"), "trace.0.et.gz"); });
  EXPECT_THAT(msg, HasSubstr("trace.0.et.gz"));
  EXPECT_THAT(msg, HasSubstr("gzip"));
  EXPECT_THAT(msg, HasSubstr("gunzip"));
}

TEST(EtFileErrors, TruncatedMessageNamesOffsetIndexAndSizes) {
  // The Node says 72 bytes but only 10 follow.
  const std::string bytes = kWalkThrough.substr(0, 8 + 1 + 10);
  const std::string msg = error_of([&] { parse_trace(bytes, "cut.et"); });
  EXPECT_THAT(msg, HasSubstr("cut.et"));
  EXPECT_THAT(msg, HasSubstr("byte 8"));
  EXPECT_THAT(msg, HasSubstr("message 1"));
  EXPECT_THAT(msg, HasSubstr("72 bytes long but only 10 remain"));
  EXPECT_THAT(msg, HasSubstr("truncated"));
}

TEST(EtFileErrors, TruncatedMetadata) {
  const std::string msg = error_of([] { parse_trace(from_hex("07 0a 05 30"), "cut.et"); });
  EXPECT_THAT(msg, HasSubstr("cut.et: byte 0: message 0 says it is 7 bytes long but only 3 remain"));
}

TEST(EtFileErrors, OverlongVarintIsMalformed) {
  const std::string msg = error_of([] { parse_trace(std::string(6, '\xff'), "varint.et"); });
  EXPECT_THAT(msg, HasSubstr("varint.et"));
  EXPECT_THAT(msg, HasSubstr("byte 0"));
  EXPECT_THAT(msg, HasSubstr("message 0"));
  EXPECT_THAT(msg, HasSubstr("length prefix"));
  EXPECT_THAT(msg, HasSubstr("varint32"));
}

TEST(EtFileErrors, VarintAbove32BitsIsMalformed) {
  // Five bytes, but the value (2^35 - 1) does not fit in 32 bits.
  const std::string bytes = kWalkThrough.substr(0, 8) + from_hex("ff ff ff ff 7f");
  const std::string msg = error_of([&] { parse_trace(bytes, "big.et"); });
  EXPECT_THAT(msg, HasSubstr("big.et: byte 8: message 1 has a malformed or cut-off length prefix"));
}

TEST(EtFileErrors, VarintCutOffAtEndOfFile) {
  const std::string bytes = kWalkThrough + from_hex("80");
  const std::string msg = error_of([&] { parse_trace(bytes, "tail.et"); });
  EXPECT_THAT(msg, HasSubstr("tail.et: byte 81: message 2"));
  EXPECT_THAT(msg, HasSubstr("length prefix"));
}

TEST(EtFileErrors, CorruptedNodePayload) {
  // A Node whose name (field 2) claims 5 bytes but the message holds none.
  const std::string bytes = kWalkThrough.substr(0, 8) + from_hex("02 12 05");
  const std::string msg = error_of([&] { parse_trace(bytes, "bad.et"); });
  EXPECT_THAT(msg, HasSubstr("bad.et"));
  EXPECT_THAT(msg, HasSubstr("byte 8"));
  EXPECT_THAT(msg, HasSubstr("message 1 (Node)"));
  EXPECT_THAT(msg, HasSubstr("not a valid protobuf message"));
}

TEST(EtFileErrors, CorruptedMetadataPayload) {
  // Wire type 7 does not exist.
  const std::string msg = error_of([] { parse_trace(from_hex("02 0f 00"), "bad.et"); });
  EXPECT_THAT(msg, HasSubstr("bad.et: byte 0: message 0 (GlobalMetadata)"));
  EXPECT_THAT(msg, HasSubstr("not a valid protobuf message"));
}

TEST(EtFileErrors, CorruptedSecondNodeNamesItsIndex) {
  const std::string bytes = kWalkThrough + from_hex("02 08 03") + from_hex("01 0f");
  const std::string msg = error_of([&] { parse_trace(bytes, "bad.et"); });
  EXPECT_THAT(msg, HasSubstr("byte 84: message 3 (Node)"));
}

TEST(EtFileIo, ReadOfMissingFileNamesThePath) {
  const auto dir = test::temp_dir("et_file_missing");
  const std::string path = (dir / "nope.0.et").string();
  const std::string msg = error_of([&] { read_trace(path); });
  EXPECT_THAT(msg, HasSubstr(path));
  EXPECT_THAT(msg, HasSubstr("cannot open the trace file"));
}

TEST(EtFileIo, ReadOfADirectoryIsAnErrorNamingThePath) {
  // Opening a directory succeeds on Linux; the read then fails (EISDIR). That must surface as a
  // chakrasim::Error naming the path, not as a std::ios_base::failure from the stream.
  const auto dir = test::temp_dir("et_file_dir");
  const std::string path = (dir / "trace.0.et").string();
  std::filesystem::create_directories(path);
  const std::string msg = error_of([&] { read_trace(path); });
  EXPECT_THAT(msg, HasSubstr(path + ": is a directory; expected a Chakra trace file"));
}

TEST(EtFileIo, WriteIntoMissingDirectoryNamesThePath) {
  const auto dir = test::temp_dir("et_file_nodir");
  const std::string path = (dir / "no_such_dir" / "t.0.et").string();
  const std::string msg = error_of([&] { write_trace(path, parse_trace(kWalkThrough, "w")); });
  EXPECT_THAT(msg, HasSubstr(path));
  EXPECT_THAT(msg, HasSubstr("cannot create the trace file"));
}

TEST(EtFileIo, WriteThenReadRoundTrips) {
  const auto dir = test::temp_dir("et_file_roundtrip");
  const std::string path = (dir / "t.0.et").string();
  Trace trace = parse_trace(kWalkThrough, "w");
  Node& second = trace.nodes.emplace_back();
  second.set_id(9);
  second.set_type(ChakraProtoMsg::COMP_NODE);
  second.set_duration_micros(123);
  second.add_data_deps(0);
  second.add_ctrl_deps(0);
  write_trace(path, trace);
  const std::string on_disk = read_bytes(path);
  EXPECT_EQ(on_disk, serialize_trace(trace));
  EXPECT_EQ(on_disk.substr(0, kWalkThrough.size()), kWalkThrough);

  const Trace back = read_trace(path);
  EXPECT_EQ(back.metadata.version(), "0.0.4");
  ASSERT_EQ(back.nodes.size(), 2u);
  EXPECT_EQ(back.nodes[1].id(), 9u);
  EXPECT_EQ(back.nodes[1].duration_micros(), 123u);
  EXPECT_EQ(back.nodes[1].data_deps_size(), 1);
  EXPECT_EQ(back.nodes[1].ctrl_deps_size(), 1);
  EXPECT_EQ(serialize_trace(back), on_disk);
}

TEST(EtFileIo, WriteTruncatesAnExistingFile) {
  const auto dir = test::temp_dir("et_file_truncate");
  const std::string path = (dir / "t.0.et").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string(500, 'z');
  }
  write_trace(path, parse_trace(kWalkThrough, "w"));
  EXPECT_EQ(read_bytes(path), kWalkThrough);
}

TEST(EtFileIo, ReadOfAnEmptyFileFailsNamingThePath) {
  const auto dir = test::temp_dir("et_file_emptyfile");
  const std::string path = (dir / "e.0.et").string();
  std::ofstream(path, std::ios::binary).close();
  const std::string msg = error_of([&] { read_trace(path); });
  EXPECT_THAT(msg, HasSubstr(path + ": the file is empty"));
}

TEST(EtFileRankPath, IsPrefixDotRankDotEt) {
  EXPECT_EQ(rank_path("traces/allreduce", 0), "traces/allreduce.0.et");
  EXPECT_EQ(rank_path("traces/allreduce", 15), "traces/allreduce.15.et");
  EXPECT_EQ(rank_path("/a/b.c", 1024), "/a/b.c.1024.et");
}

}  // namespace
}  // namespace chakrasim::chakra
