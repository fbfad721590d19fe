// The bad-input catalogue, second round: the classes of failure a second pass over `run` found
// (tests/errors/case_files.h says how a case works). Each case names the class it covers.
#include <sys/stat.h>

#include <cstdint>
#include <limits>

#include "errors/case_files.h"

namespace chakrasim::test::errors {
namespace {

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

// `depth` nested arrays around 1: far beyond what any input needs.
std::string deep_json(std::size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

chakra::Attribute uint64_attr(const std::string& name, std::uint64_t v) {
  chakra::Attribute a;
  a.set_name(name);
  a.set_uint64_val(v);
  return a;
}

void make_fifo(const std::string& path) {
  fs::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
}

std::vector<Case> catalogue() {
  using NT = chakra::NodeType;
  std::vector<Case> c;

  // ---- crashes: deeply nested JSON is refused at parse time, before anything dumps it -----
  c.push_back({"DeepJsonSystem",
               [](CaseFiles& s) { s.write_system_text("{\"preferred-dataset-splits\": " + deep_json(100000) + "}"); },
               1,
               {"{system}", "nest more than 256 levels deep"}});
  c.push_back({"DeepJsonMemory",
               [](CaseFiles& s) { s.write_memory("{\"memory-type\": " + deep_json(100000) + "}"); },
               1,
               {"{memory}", "nest more than 256 levels deep"}});
  c.push_back({"DeepJsonGroups",
               [](CaseFiles& s) { s.write_groups("{\"1\": " + deep_json(100000) + "}"); },
               1,
               {"{groups}", "nest more than 256 levels deep"}});

  // ---- hangs and blow-ups: one reading path, regular files only ----------------------------
  c.push_back({"FifoAsTrace", [](CaseFiles& s) { make_fifo(s.rank(0)); }, 1, {"{rank0}", "is a FIFO (named pipe)"}});
  c.push_back({"FifoAsNetwork", [](CaseFiles& s) { make_fifo(s.network); }, 1, {"{network}", "is a FIFO"}});
  c.push_back({"FifoAsSystem", [](CaseFiles& s) { make_fifo(s.system); }, 1, {"{system}", "is a FIFO"}});
  c.push_back({"FifoAsMemory",
               [](CaseFiles& s) {
                 s.write_memory("{}");
                 make_fifo(s.memory);
               },
               1,
               {"{memory}", "is a FIFO"}});
  c.push_back({"FifoAsGroups",
               [](CaseFiles& s) {
                 s.write_groups("{}");
                 make_fifo(s.groups);
               },
               1,
               {"{groups}", "is a FIFO"}});
  c.push_back({"DevZeroAsTrace",
               [](CaseFiles& s) {
                 fs::remove(s.rank(0));
                 fs::create_symlink("/dev/zero", s.rank(0));
               },
               1,
               {"{rank0}", "is a character device"}});
  c.push_back({"DevZeroAsSystem", [](CaseFiles& s) { s.system = "/dev/zero"; }, 1, {"/dev/zero", "character device"}});
  c.push_back({"DevUrandomAsNetwork",
               [](CaseFiles& s) { s.network = "/dev/urandom"; },
               1,
               {"/dev/urandom", "character device"}});
  c.push_back({"DirectoryAsTrace",
               [](CaseFiles& s) {
                 fs::remove(s.rank(0));
                 fs::create_directory(s.rank(0));
               },
               1,
               {"{rank0}", "is a directory"}});
  c.push_back({"DirectoryAsNetwork",
               [](CaseFiles& s) {
                 fs::remove(s.network);
                 fs::create_directory(s.network);
               },
               1,
               {"{network}", "is a directory"}});
  // Too many queues used to end in "out of memory" without naming the flag.
  c.push_back({"NumQueuesPerDimHuge",
               [](CaseFiles& s) {
                 s.extra_args = {"--num-queues-per-dim", "4294967295"};
               },
               1,
               {"--num-queues-per-dim", "4294967295", "expected an integer from 1 to 65536"}});

  // Found by the third pass: 4e9 splits of a 1 MiB all-reduce ran for hours instead of failing.
  c.push_back(
      {"SplitsBeyondMemory",
       [](CaseFiles& s) { s.edit_system([](Json& j) { j["preferred-dataset-splits"] = 4294967295u; }); },
       1,
       {"{system}: \"preferred-dataset-splits\" 4294967295: the largest collective in 4294967296 chunks", "of "
                                                                                                          "memory"}});

  // ---- silent wrong figures: simulated time is exact or refused ----------------------------
  // comm_size 2^64-1 ran in 0 ns.
  c.push_back({"CommSizeBeyond2To53",
               [](CaseFiles& s) {
                 s.rewrite(0, [](chakra::Trace& t) { set_attr(node(t, kArId), uint64_attr("comm_size", kU64Max)); });
               },
               1,
               {"{rank0}", "node 101", "comm_size 18446744073709551615", "expected at most 9007199254740992 bytes"}});
  // duration 2^64-1 µs finished before its own exposed communication.
  c.push_back(
      {"DurationBeyondTheTimeLimit",
       [](CaseFiles& s) { s.rewrite(0, [](chakra::Trace& t) { node(t, kCompId).set_duration_micros(kU64Max); }); },
       1,
       {"{rank0}", "node 100", "duration_micros 18446744073709551615", "beyond the simulated time"}});
  // 20 nodes of 1e15 µs each: each fits, their sum (2e19 ns) wrapped.
  c.push_back({"ChainOfLongNodesWraps",
               [](CaseFiles& s) {
                 s.rewrite_all([](chakra::Trace& t) {
                   std::uint64_t parent = kArId;
                   for (std::uint64_t k = 0; k < 20; ++k) {
                     chakra::Node& n = add_node(t, 300 + k, NT::kComp, "long");
                     n.set_duration_micros(1000000000000000ull);
                     n.add_data_deps(parent);
                     parent = 300 + k;
                   }
                 });
               },
               1,
               {"node 30", "beyond the simulated time a run can reach", "4611686018427387904 ns"}});
  c.push_back({"BandwidthTiny",
               [](CaseFiles& s) { s.write_network(network_yaml("Ring", "8", "1e-300", "500.0")); },
               1,
               {"would take", "expected a time from 0 to 4611686018427387904 ns"}});
  c.push_back({"LatencyBeyondTheTimeLimit",
               [](CaseFiles& s) { s.write_network(network_yaml("Ring", "8", "50.0", "1e19")); },
               1,
               {"{network}", "latency[0]: value 1e+19 ns is beyond the simulated time limit"}});
  c.push_back({"InjectionScaleInfinite",
               [](CaseFiles& s) {
                 s.extra_args = {"--injection-scale", "inf"};
               },
               1,
               {"--injection-scale: value inf is invalid", "finite"}});
  c.push_back({"RemoteMemLatencyBeyondTheLimit",
               [](CaseFiles& s) {
                 s.write_memory(R"({"memory-type": "NO_MEMORY_EXPANSION", "remote-mem-latency": 18446744073709551615,
                                  "remote-mem-bw": 10})");
               },
               1,
               {"{memory}", "remote-mem-latency", "18446744073709551615"}});
  c.push_back({"RooflineWithoutPeakPerf",
               [](CaseFiles& s) { s.edit_system([](Json& j) { j["roofline-enabled"] = 1; }); },
               1,
               {"{system}", "roofline-enabled is 1, but \"peak-perf\" is missing; expected a positive number"}});
  c.push_back({"RooflineWithZeroPeakPerf",
               [](CaseFiles& s) {
                 s.edit_system([](Json& j) {
                   j["roofline-enabled"] = 1;
                   j["peak-perf"] = 0;
                 });
               },
               1,
               {"{system}", "\"peak-perf\" is 0; expected a positive number"}});
  c.push_back({"RooflineWithZeroLocalMemBw",
               [](CaseFiles& s) {
                 s.edit_system([](Json& j) {
                   j["roofline-enabled"] = 1;
                   j["peak-perf"] = 100;
                   j["local-mem-bw"] = 0;
                 });
               },
               1,
               {"{system}", "\"local-mem-bw\" is 0; expected a positive number"}});

  // ---- the custom algorithm: a send without its peer names the file and node ---------------
  c.push_back({"CustomSendWithoutCommDst",
               [](CaseFiles& s) { custom_algorithm(s, [](chakra::Trace& t) { drop_attr(t.nodes[0], "comm_dst"); }); },
               1,
               {"custom.0.et: node", "(\"to_next\"), a send of the custom all-reduce for position 0, has no comm_dst",
                "expected the peer's position, 0 to 7"}});
  c.push_back({"CustomReceiveFromItself",
               [](CaseFiles& s) {
                 custom_algorithm(s, [](chakra::Trace& t) { set_attr(t.nodes[1], chakra::make_int32("comm_src", 0)); });
               },
               1,
               {"custom.0.et: node", "(\"from_prev\"), a receive", "has comm_src 0; expected another position"}});

  // ---- weak messages --------------------------------------------------------------------------
  // A 1000-node cycle: its length and six members, not a line listing every node.
  c.push_back({"LongCycleIsSummarised",
               [](CaseFiles& s) {
                 s.rewrite(0, [](chakra::Trace& t) {
                   for (std::uint64_t k = 0; k < 1000; ++k) {
                     chakra::Node& n = add_node(t, 1000 + k, NT::kComp, "c");
                     n.add_data_deps(1000 + (k + 999) % 1000);
                   }
                 });
               },
               1,
               {"{rank0}", "dependency cycle of 1000 nodes", "... (994 more) ->", "1000 nodes cannot run"}});
  c.push_back({"GroupWithoutAGroupFile",
               [](CaseFiles& s) {
                 s.rewrite_all([](chakra::Trace& t) { set_attr(node(t, kArId), chakra::make_string("pg_name", "3")); });
               },
               1,
               {"pg_name \"3\" names communicator group 3, which is not defined: the run has no --comm-groups file"}});
  // A path containing "empty" used to mean "no groups", even when the file did not exist.
  c.push_back({"GroupFileNamedEmptyIsRead",
               [](CaseFiles& s) { s.groups = (s.dir / "not_empty_groups.json").string(); },
               1,
               {"not_empty_groups.json", "does not exist"}});
  c.push_back({"NetworkKeyTwice",
               [](CaseFiles& s) { s.write_network(network_yaml("Ring", "8", "50.0", "500.0") + "latency: [ 5.0 ]\n"); },
               1,
               {"{network}", "line 5: key \"latency\" appears again (first on line 4); expected each key once"}});
  c.push_back({"NetworkSecondDocument",
               [](CaseFiles& s) {
                 s.write_network(network_yaml("Ring", "8", "50.0", "500.0") + "---\n" +
                                 network_yaml("Ring", "8", "5.0", "5.0"));
               },
               1,
               {"{network}", "a second YAML document"}});
  // Found by fuzzing: an alias inside its own anchor is a cycle in yaml-cpp's tree, which leaked
  // until the fuzzer ran out of memory.
  c.push_back({"NetworkSelfReferentialAlias",
               [](CaseFiles& s) { s.write_network("topology: &t [ Ring, *t ]\nnpus_count: [ 8 ]\n"); },
               1,
               {"{network}", "line 1: a YAML alias (*name); expected plain values"}});
  // Found by fuzzing: yaml-cpp's multi-document reader never ends on this malformed text.
  c.push_back({"NetworkTextThatNeverEndsAsDocuments",
               [](CaseFiles& s) { s.write_network(", FRing, FullyConconch ]\nntopoltoponogy:Bo 1"); },
               1,
               {"{network}", "expected a YAML mapping with keys topology"}});
  c.push_back({"RunNpusNegative", [](CaseFiles& s) { s.extra_args = {"--npus", "-1"}; }, 1, {"--npus", "-1"}});
  return c;
}

class BadInputRoundTwo : public ::testing::TestWithParam<Case> {};

TEST_P(BadInputRoundTwo, ExitsNonZeroAndSaysWhy) { check_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInputRoundTwo, ::testing::ValuesIn(catalogue()),
                         [](const ::testing::TestParamInfo<Case>& param_info) { return param_info.param.name; });

// The exact word "empty" still means no groups, as in the reference.
TEST(BadInputRoundTwoBaseline, CommGroupsEmptyMeansNone) {
  CaseFiles s("errors_round_two_empty_groups");
  s.groups = "empty";
  const CommandResult r = run_binary(s.args());
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// An unknown network key is not an error, but it is said.
TEST(BadInputRoundTwoBaseline, UnknownNetworkKeyIsWarned) {
  CaseFiles s("errors_round_two_unknown_key");
  s.write_network(network_yaml("Ring", "8", "50.0", "500.0") + "topologgy: [ Ring ]\n");
  const CommandResult r = run_binary(s.args());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("unknown key \"topologgy\" ignored; did you mean \"topology\"?"));
}

}  // namespace
}  // namespace chakrasim::test::errors
