// Covers the remote-memory JSON and communicator-group JSON readers (config/other_configs.h):
// exact values of valid files and every rejected key, value, group id and member.
#include "config/other_configs.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "support/test_support.h"

namespace chakrasim::config {
namespace {

using memory::RemoteMemoryKind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using ::chakrasim::test::error_of;

std::string memory_error(const std::string& text) {
  return error_of([&] { parse_memory(text, "mem.json"); });
}

std::string groups_error(const std::string& text, NpuId npus = 8) {
  return error_of([&] { parse_comm_groups(text, "groups.json", npus); });
}

TEST(MemoryConfig, FullPerNodeFile) {
  const memory::RemoteMemorySpec spec = parse_memory("{\"memory-type\": \"PER_NODE_MEMORY_EXPANSION\", "
                                                     "\"remote-mem-latency\": 100, \"remote-mem-bw\": 50,"
                                                     " \"num-nodes\": 2, \"num-npus-per-node\": 4}",
                                                     "mem.json");
  EXPECT_EQ(spec.kind, RemoteMemoryKind::kPerNode);
  EXPECT_EQ(spec.latency_ns, 100u);
  EXPECT_EQ(spec.bandwidth_gb_per_s, 50u);
  EXPECT_EQ(spec.nodes, 2u);
  EXPECT_EQ(spec.npus_per_node, 4u);
}

TEST(MemoryConfig, EveryMemoryTypeAndDefaults) {
  const std::pair<const char*, RemoteMemoryKind> types[] = {{"NO_MEMORY_EXPANSION", RemoteMemoryKind::kNone},
                                                            {"PER_NPU_MEMORY_EXPANSION", RemoteMemoryKind::kPerNpu},
                                                            {"PER_NODE_MEMORY_EXPANSION", RemoteMemoryKind::kPerNode},
                                                            {"MEMORY_POOL", RemoteMemoryKind::kPool}};
  for (const auto& [name, kind] : types) {
    SCOPED_TRACE(name);
    const memory::RemoteMemorySpec spec = parse_memory("{\"memory-type\": \"" + std::string(name) + "\"}", "mem.json");
    EXPECT_EQ(spec.kind, kind);
    EXPECT_EQ(spec.latency_ns, 0u);
    EXPECT_EQ(spec.bandwidth_gb_per_s, 0u);
    EXPECT_EQ(spec.nodes, 0u);
    EXPECT_EQ(spec.npus_per_node, 0u);
  }
}

TEST(MemoryConfig, LargeValuesAndExtraKeys) {
  const memory::RemoteMemorySpec spec = parse_memory("{\"memory-type\": \"MEMORY_POOL\", \"remote-mem-latency\": "
                                                     "10000000000, \"remote-mem-bw\": 0, \"comment\": \"x\"}",
                                                     "mem.json");
  EXPECT_EQ(spec.kind, RemoteMemoryKind::kPool);
  EXPECT_EQ(spec.latency_ns, 10000000000u);
  EXPECT_EQ(spec.bandwidth_gb_per_s, 0u);
}

TEST(MemoryConfigErrors, MissingMemoryType) {
  const std::string msg = memory_error("{\"remote-mem-latency\": 100}");
  EXPECT_THAT(msg, HasSubstr("mem.json: missing key \"memory-type\""));
  EXPECT_THAT(msg, HasSubstr("expected NO_MEMORY_EXPANSION, PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION or "
                             "MEMORY_POOL"));
}

TEST(MemoryConfigErrors, UnknownMemoryType) {
  std::string msg = memory_error("{\"memory-type\": \"per_npu_memory_expansion\"}");
  EXPECT_THAT(msg, HasSubstr("mem.json: key \"memory-type\": value \"per_npu_memory_expansion\" is invalid"));
  EXPECT_THAT(msg, HasSubstr("expected NO_MEMORY_EXPANSION, PER_NPU_MEMORY_EXPANSION"));
  msg = memory_error("{\"memory-type\": 1}");
  EXPECT_THAT(msg, HasSubstr("key \"memory-type\": value \"1\" is invalid"));
}

TEST(MemoryConfigErrors, NumbersMustBeNonNegativeIntegers) {
  for (const char* key : {"remote-mem-latency", "remote-mem-bw", "num-nodes", "num-npus-per-node"}) {
    for (const char* bad : {"-5", "1.5", "\"50\"", "true"}) {
      SCOPED_TRACE(std::string(key) + " = " + bad);
      const std::string msg =
          memory_error("{\"memory-type\": \"PER_NPU_MEMORY_EXPANSION\", \"" + std::string(key) + "\": " + bad + "}");
      EXPECT_THAT(msg, HasSubstr("mem.json: key \"" + std::string(key) + "\": value " + bad +
                                 " is invalid; expected an integer, 0 or more"));
    }
  }
}

TEST(MemoryConfigErrors, CountsAboveUint32AreRejectedNotWrapped) {
  // num-nodes and num-npus-per-node are 32-bit: 2^32 must be rejected, not stored as 0 (a node
  // of 0 NPUs) nor wrapped to another count.
  for (const char* key : {"num-nodes", "num-npus-per-node"}) {
    SCOPED_TRACE(key);
    const std::string text =
        std::string("{\"memory-type\": \"PER_NODE_MEMORY_EXPANSION\", \"") + key + "\": 4294967297}";
    EXPECT_THAT(memory_error(text), HasSubstr(std::string("mem.json: key \"") + key +
                                              "\": value 4294967297 is invalid; expected an integer, 0 or more (and at "
                                              "most 4294967295)"));
  }
  // 2^32 - 1 itself fits; the 64-bit keys take more.
  const memory::RemoteMemorySpec spec = parse_memory("{\"memory-type\": \"PER_NODE_MEMORY_EXPANSION\", \"num-nodes\": "
                                                     "4294967295, \"remote-mem-bw\": 4294967296}",
                                                     "mem.json");
  EXPECT_EQ(spec.nodes, 4294967295u);
  EXPECT_EQ(spec.bandwidth_gb_per_s, 4294967296u);
}

TEST(MemoryConfigErrors, InvalidJsonAndNonObject) {
  EXPECT_THAT(memory_error("{\"memory-type\": }"), HasSubstr("mem.json: invalid JSON"));
  EXPECT_THAT(memory_error("[\"MEMORY_POOL\"]"), HasSubstr("mem.json: expected a JSON object with a \"memory-type\" "
                                                           "key"));
}

TEST(MemoryConfigFiles, LoadAndUnreadablePath) {
  const auto dir = test::temp_dir("memory_files");
  const std::string path = (dir / "m.json").string();
  std::ofstream(path) << "{\"memory-type\": \"PER_NPU_MEMORY_EXPANSION\", \"remote-mem-latency\": 7}";
  const memory::RemoteMemorySpec spec = load_memory(path);
  EXPECT_EQ(spec.kind, RemoteMemoryKind::kPerNpu);
  EXPECT_EQ(spec.latency_ns, 7u);
  std::ofstream(path) << "{\"memory-type\": \"NOPE\"}";
  EXPECT_THAT(error_of([&] { load_memory(path); }), HasSubstr(path + ": key \"memory-type\": value \"NOPE\""));

  const std::string missing = (dir / "none.json").string();
  const std::string msg = error_of([&] { load_memory(missing); });
  EXPECT_THAT(msg, HasSubstr(missing));
  EXPECT_THAT(msg, HasSubstr("cannot open the remote-memory configuration"));
}

TEST(MemoryConfigFiles, ReferenceNoMemoryExpansion) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const memory::RemoteMemorySpec spec = load_memory((ref / "configs" / "no_memory_expansion.json").string());
  EXPECT_EQ(spec.kind, RemoteMemoryKind::kNone);
  EXPECT_EQ(spec.latency_ns, 0u);
  EXPECT_EQ(spec.bandwidth_gb_per_s, 0u);
}

TEST(CommGroups, DocumentedExampleKeepsFileOrder) {
  const system::CommGroups groups = parse_comm_groups("{ \"1\": [0, 1, 2, 3], \"2\": [7, 5, 6, 4] }", "groups.json", 8);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_THAT(groups.at(1), ElementsAre(0u, 1u, 2u, 3u));
  // Members stay in the order the file lists them.
  EXPECT_THAT(groups.at(2), ElementsAre(7u, 5u, 6u, 4u));
}

TEST(CommGroups, GroupsMayOverlapAndIdsNeedNotBeDense) {
  const system::CommGroups groups =
      parse_comm_groups("{\"10\": [0, 2], \"3\": [2], \"4294967295\": [1, 0]}", "groups.json", 4);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_THAT(groups.at(3), ElementsAre(2u));
  EXPECT_THAT(groups.at(10), ElementsAre(0u, 2u));
  EXPECT_THAT(groups.at(4294967295u), ElementsAre(1u, 0u));
}

TEST(CommGroups, EmptyObjectHasNoGroups) { EXPECT_THAT(parse_comm_groups("{}", "groups.json", 4), IsEmpty()); }

TEST(CommGroupsErrors, GroupIdZeroIsTheWorldGroup) {
  const std::string msg = groups_error("{\"0\": [0, 1]}");
  EXPECT_THAT(msg, HasSubstr("groups.json: group id \"0\" is invalid"));
  EXPECT_THAT(msg, HasSubstr("expected a decimal integer of at least 1 (0 means all NPUs)"));
}

TEST(CommGroupsErrors, NonNumericGroupIds) {
  for (const char* id : {"abc", "", "1a", "-1", "1.5", "4294967296"}) {
    SCOPED_TRACE(id);
    EXPECT_THAT(groups_error("{\"" + std::string(id) + "\": [0]}"),
                HasSubstr("groups.json: group id \"" + std::string(id) + "\" is invalid"));
  }
}

TEST(CommGroupsErrors, ValueMustBeANonEmptyList) {
  EXPECT_THAT(groups_error("{\"1\": 3}"), HasSubstr("groups.json: group \"1\": value 3 is invalid; expected a "
                                                    "non-empty list of NPU ids"));
  EXPECT_THAT(groups_error("{\"1\": {\"a\": 0}}"), HasSubstr("group \"1\": value {\"a\":0} is invalid"));
  EXPECT_THAT(groups_error("{\"2\": []}"), HasSubstr("group \"2\": value [] is invalid"));
}

TEST(CommGroupsErrors, MemberOutOfRangeNamesTheNpuAndTheRange) {
  const std::string msg = groups_error("{\"1\": [0, 8]}", 8);
  EXPECT_THAT(msg, HasSubstr("groups.json: group \"1\": NPU 8 is outside the network"));
  EXPECT_THAT(msg, HasSubstr("expected an NPU id from 0 to 7"));
  EXPECT_THAT(groups_error("{\"1\": [100]}", 4), HasSubstr("NPU 100 is outside the network; expected an NPU id from 0 "
                                                           "to 3"));
}

TEST(CommGroupsErrors, BadMemberValues) {
  for (const char* bad : {"-1", "\"3\"", "1.5", "null"}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(groups_error("{\"1\": [0, " + std::string(bad) + "]}"),
                HasSubstr("groups.json: group \"1\": member " + std::string(bad) +
                          " is invalid; expected an NPU id from 0 to 7"));
  }
}

TEST(CommGroupsErrors, DuplicateMember) {
  EXPECT_THAT(groups_error("{\"1\": [0, 2, 1, 2]}"), HasSubstr("groups.json: group \"1\": NPU 2 is listed twice"));
}

TEST(CommGroupsErrors, TwoKeysForTheSameGroupIdAreRejected) {
  // "01" and "1" are both group 1: one of the two lists must not be dropped silently.
  // JSON object keys come sorted, so "1" is the one that repeats "01".
  const std::string msg = groups_error("{\"1\": [0, 1], \"01\": [2, 3]}");
  EXPECT_THAT(msg, HasSubstr("groups.json: group id 1 is given twice (\"1\" repeats an earlier key)"));
}

TEST(CommGroupsErrors, InvalidJsonAndNonObject) {
  EXPECT_THAT(groups_error("{\"1\": [0, 1]"), HasSubstr("groups.json: invalid JSON"));
  EXPECT_THAT(groups_error("[[0, 1]]"), HasSubstr("groups.json: expected a JSON object mapping group ids to lists of "
                                                  "NPU ids"));
}

TEST(OtherConfigFiles, DirectoryIsAnErrorNamingThePath) {
  // A directory opens as a stream but fails to read (EISDIR): expect chakrasim::Error.
  const std::string path = test::temp_dir("other_configs_dir").string();
  std::string msg = error_of([&] { load_memory(path); });
  EXPECT_THAT(msg, HasSubstr(path + ": is a directory"));
  EXPECT_THAT(msg, HasSubstr("remote-memory configuration"));
  msg = error_of([&] { load_comm_groups(path, 4); });
  EXPECT_THAT(msg, HasSubstr(path + ": is a directory"));
  EXPECT_THAT(msg, HasSubstr("communicator-group configuration"));
}

TEST(CommGroupsFiles, LoadAndUnreadablePath) {
  const auto dir = test::temp_dir("comm_groups_files");
  const std::string path = (dir / "g.json").string();
  std::ofstream(path) << "{\"1\": [1, 0]}";
  const system::CommGroups groups = load_comm_groups(path, 2);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_THAT(groups.at(1), ElementsAre(1u, 0u));
  EXPECT_THAT(error_of([&] { load_comm_groups(path, 1); }), HasSubstr(path + ": group \"1\": NPU 1 is outside the "
                                                                             "network"));

  const std::string missing = (dir / "none.json").string();
  const std::string msg = error_of([&] { load_comm_groups(missing, 2); });
  EXPECT_THAT(msg, HasSubstr(missing));
  EXPECT_THAT(msg, HasSubstr("cannot open the communicator-group configuration"));
}

}  // namespace
}  // namespace chakrasim::config

namespace chakrasim::config {
namespace {

// Found by fuzzing: a number too large for a double is a JSON error, not an abort.
TEST(CommGroupsErrors, NumberOverflowIsAnError) {
  try {
    parse_comm_groups("{\"1\": [0, 1e999999]}", "groups.json", 8);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("groups.json: invalid JSON"));
  }
  try {
    parse_memory("{\"memory-type\": \"MEMORY_POOL\", \"remote-mem-bw\": 1e999999}", "memory.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("memory.json: invalid JSON"));
  }
}

}  // namespace
}  // namespace chakrasim::config
