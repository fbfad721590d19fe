// The bad-input catalogue, first round (tests/errors/case_files.h says how a case works).
#include <set>

#include "errors/case_files.h"

namespace chakrasim::test::errors {
namespace {

std::vector<Case> catalogue() {
  using NT = chakra::NodeType;
  std::vector<Case> c;

  // ---- .et files: missing, empty, truncated, corrupted, wrong rank count ---------------------
  c.push_back({"EtMissingForRank0",
               [](CaseFiles& s) { fs::remove(s.rank(0)); },
               1,
               {"{rank0}", "rank 0", "does not exist", "expects the prefix of per-rank files"}});
  c.push_back({"EtMissingForMiddleRank",
               [](CaseFiles& s) { fs::remove(s.rank(3)); },
               1,
               {"{rank3}", "rank 3", "8 NPUs", "ranks 0 to 7 need a file each"}});
  c.push_back({"RankCountBelowNetwork",
               [](CaseFiles& s) { s.write_network(network_yaml("Ring", "16", "50.0", "500.0")); },
               1,
               {"{rank8}", "rank 8", "16 NPUs", "ranks 0 to 15 need a file each"}});
  // A 16-rank workload on an 8-NPU network: the files for ranks 8 to 15 would be ignored.
  c.push_back({"RankCountAboveNetwork",
               [](CaseFiles& s) {
                 for (int r = kNpus; r < 2 * kNpus; ++r) chakra::write_trace(s.rank(r), baseline_trace());
               },
               1,
               {"{rank8}", "8 NPUs", "expected"}});
  c.push_back(
      {"EtEmpty", [](CaseFiles& s) { s.write_rank_bytes(0, ""); }, 1, {"{rank0}", "empty", "expected a Chakra trace"}});
  c.push_back({"EtGzipMagic",
               [](CaseFiles& s) { s.write_rank_bytes(2, std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10)); },
               1,
               {"{rank2}", "gzip", "decompress it first"}});
  c.push_back({"EtTruncatedMessage",
               [](CaseFiles& s) {
                 const std::string bytes = chakra::serialize_trace(s.traces[0]);
                 s.write_rank_bytes(0, bytes.substr(0, bytes.size() - 7));
               },
               1,
               {"{rank0}", "byte", "bytes long but only", "truncated"}});
  c.push_back({"EtGarbageBytes",
               [](CaseFiles& s) {
                 // A plausible length prefix, then bytes that are no protobuf message.
                 std::string bytes(1, '\x10');
                 std::uint32_t x = 12345;
                 for (int i = 0; i < 16; ++i) {
                   x = x * 1103515245u + 12345u;
                   bytes.push_back(static_cast<char>(0xf8 | ((x >> 16) & 7)));  // wire types 0-7, bad fields
                 }
                 s.write_rank_bytes(5, bytes);
               },
               1,
               {"{rank5}", "byte 0", "message 0", "not a valid protobuf message", "corrupted"}});
  c.push_back({"EtMalformedLengthPrefix",
               [](CaseFiles& s) { s.write_rank_bytes(0, std::string(12, '\xff')); },
               1,
               {"{rank0}", "byte 0", "length prefix", "expected a varint32"}});
  // One zero-length message: an empty GlobalMetadata and no node at all.
  c.push_back({"EtZeroLengthPrefixed",
               [](CaseFiles& s) { s.write_rank_bytes(0, std::string(1, '\0')); },
               1,
               {"{rank0}", "no node", "expected"}});
  c.push_back({"EtPathIsADirectory",
               [](CaseFiles& s) {
                 fs::remove(s.rank(6));
                 fs::create_directory(s.rank(6));
               },
               1,
               {"{rank6}", "is a directory", "expected the Chakra trace of rank 6"}});
  // (As a non-root user the message says "cannot open ... ranks 0 to 7 need a file each", which
  // points at a missing file, not at the permissions of one that exists.)
  c.push_back({"EtUnreadable",
               [](CaseFiles& s) { s.make_unreadable(s.rank(4)); },
               1,
               {"{rank4}", "rank 4", "cannot open", "readable"},
               /*needs_non_root=*/true});

  // ---- node and collective types ----------------------------------------------------------
  c.push_back({"NodeType8",
               [](CaseFiles& s) {
                 s.rewrite(0,
                           [](chakra::Trace& t) { node(t, kArId).set_type(static_cast<ChakraProtoMsg::NodeType>(8)); });
               },
               1,
               {"{rank0}", "node 101", "node type 8", "expected 0 to 7"}});
  c.push_back(
      {"NodeType99",
       [](CaseFiles& s) {
         s.rewrite(3, [](chakra::Trace& t) { node(t, kCompId).set_type(static_cast<ChakraProtoMsg::NodeType>(99)); });
       },
       1,
       {"{rank3}", "node 100", "node type 99", "expected 0 to 7"}});
  c.push_back({"CommTypeNegative",
               [](CaseFiles& s) {
                 s.rewrite(0, [](chakra::Trace& t) { set_attr(node(t, kArId), chakra::make_int64("comm_type", -1)); });
               },
               1,
               {"{rank0}", "node 101", "comm_type -1", "expected 0 to 9 (ALL_REDUCE, REDUCE"}});
  c.push_back({"CommType10",
               [](CaseFiles& s) {
                 s.rewrite(0, [](chakra::Trace& t) { set_attr(node(t, kArId), chakra::make_int64("comm_type", 10)); });
               },
               1,
               {"{rank0}", "node 101", "comm_type 10", "BARRIER)"}});
  c.push_back({"CommType42",
               [](CaseFiles& s) {
                 s.rewrite(7, [](chakra::Trace& t) { set_attr(node(t, kArId), chakra::make_int64("comm_type", 42)); });
               },
               1,
               {"{rank7}", "node 101", "comm_type 42", "expected 0 to 9"}});

  // ---- attributes: missing or mistyped -----------------------------------------------------
  c.push_back({"CommSizeMissing",
               [](CaseFiles& s) { s.rewrite(0, [](chakra::Trace& t) { drop_attr(node(t, kArId), "comm_size"); }); },
               1,
               {"{rank0}", "node 101", "\"comm_size\"", "missing"}});
  c.push_back({"CommTypeMissing",
               [](CaseFiles& s) { s.rewrite(1, [](chakra::Trace& t) { drop_attr(node(t, kArId), "comm_type"); }); },
               1,
               {"{rank1}", "node 101", "\"comm_type\"", "missing"}});
  c.push_back({"CommSizeAsDouble",
               [](CaseFiles& s) {
                 s.rewrite(0, [](chakra::Trace& t) { set_attr(node(t, kArId), double_attr("comm_size", 1048576.5)); });
               },
               1,
               {"{rank0}", "node 101", "\"comm_size\"", "double_val", "1048576.5", "expected a non-negative integer"}});
  c.push_back({"CommSizeNegative",
               [](CaseFiles& s) {
                 s.rewrite(0,
                           [](chakra::Trace& t) { set_attr(node(t, kArId), chakra::make_int64("comm_size", -4096)); });
               },
               1,
               {"{rank0}", "node 101", "\"comm_size\"", "-4096", "expected a non-negative integer"}});
  c.push_back({"CommTypeAsString",
               [](CaseFiles& s) {
                 s.rewrite(0, [](chakra::Trace& t) {
                   set_attr(node(t, kArId), chakra::make_string("comm_type", "ALL_REDUCE"));
                 });
               },
               1,
               {"{rank0}", "node 101", "\"comm_type\"", "string_val", "\"ALL_REDUCE\"", "expected an integer"}});
  c.push_back({"IsCpuOpOnCollective",
               [](CaseFiles& s) {
                 s.rewrite(0, [](chakra::Trace& t) { set_attr(node(t, kArId), chakra::make_bool("is_cpu_op", true)); });
               },
               1,
               {"{rank0}", "node 101", "is_cpu_op", "true", "cannot be a CPU op"}});
  c.push_back({"RooflineWithoutNumOps",
               [](CaseFiles& s) {
                 s.edit_system([](Json& j) {
                   j["roofline-enabled"] = 1;
                   j["peak-perf"] = 100;
                 });
               },
               1,
               {"{rank0}", "node 100", "roofline-enabled", "\"num_ops\"", "\"tensor_size\""}});

  // ---- dependencies ------------------------------------------------------------------------
  c.push_back({"DataDepOnMissingNode",
               [](CaseFiles& s) { s.rewrite(0, [](chakra::Trace& t) { node(t, kArId).add_data_deps(555); }); },
               1,
               {"{rank0}", "node 101", "data dependency on node 555", "not in the file"}});
  c.push_back({"CtrlDepOnMissingNode",
               [](CaseFiles& s) { s.rewrite(4, [](chakra::Trace& t) { node(t, kCompId).add_ctrl_deps(777); }); },
               1,
               {"{rank4}", "node 100", "control dependency on node 777", "not in the file"}});
  // The message states the fact; it must also say what a trace must be (expected).
  c.push_back({"SelfDependency",
               [](CaseFiles& s) { s.rewrite(0, [](chakra::Trace& t) { node(t, kArId).add_data_deps(kArId); }); },
               1,
               {"{rank0}", "node 101", "itself", "expected"}});
  c.push_back({"DependencyCycleOfThree",
               [](CaseFiles& s) {
                 s.rewrite(0, [](chakra::Trace& t) {
                   add_node(t, 200, NT::kComp, "a").add_data_deps(202);
                   add_node(t, 201, NT::kComp, "b").add_data_deps(200);
                   add_node(t, 202, NT::kComp, "c").add_data_deps(201);
                   for (std::uint64_t id : {200, 201, 202}) node(t, id).set_duration_micros(1);
                 });
               },
               1,
               {"{rank0}", "cycle of 3 nodes", "200 \"a\" -> ", "201 \"b\" -> ", "202 \"c\"", "DAG"}});
  c.push_back({"DuplicateNodeIds",
               [](CaseFiles& s) {
                 s.rewrite(2, [](chakra::Trace& t) { add_node(t, kArId, NT::kComp, "dup").set_duration_micros(1); });
               },
               1,
               {"{rank2}", "node id 101", "appears twice", "unique"}});

  // ---- point to point -----------------------------------------------------------------------
  c.push_back({"SendWithoutCommDst",
               [](CaseFiles& s) { s.rewrite(0, [](chakra::Trace& t) { add_p2p(t, true, -1, 4096, 5); }); },
               1,
               {"{rank0}", "node 102", "\"comm_dst\"", "missing"}});
  c.push_back({"RecvWithoutCommSrc",
               [](CaseFiles& s) { s.rewrite(1, [](chakra::Trace& t) { add_p2p(t, false, -1, 4096, 5); }); },
               1,
               {"{rank1}", "node 102", "\"comm_src\"", "missing"}});
  c.push_back({"SendWithoutCommTag",
               [](CaseFiles& s) { s.rewrite(0, [](chakra::Trace& t) { add_p2p(t, true, 1, 4096, -1); }); },
               1,
               {"{rank0}", "node 102", "\"comm_tag\"", "missing"}});
  c.push_back({"SendToItself",
               [](CaseFiles& s) { s.rewrite(0, [](chakra::Trace& t) { add_p2p(t, true, 0, 4096, 5); }); },
               1,
               {"{rank0}", "node 102", "NPU 0", "send 0 -> 0", "expected", "another NPU from 0 to 7"}});
  c.push_back({"SendOutsideTheNetwork",
               [](CaseFiles& s) { s.rewrite(3, [](chakra::Trace& t) { add_p2p(t, true, 8, 4096, 5); }); },
               1,
               {"{rank3}", "node 102", "NPU 3", "send 3 -> 8", "expected", "from 0 to 7"}});

  // ---- communicator groups in the trace ------------------------------------------------------
  c.push_back({"PgNameNotANumber",
               [](CaseFiles& s) {
                 s.rewrite(0,
                           [](chakra::Trace& t) { set_attr(node(t, kArId), chakra::make_string("pg_name", "abc")); });
               },
               1,
               {"{rank0}", "node 101", "pg_name \"abc\"", "expected a decimal integer"}});
  c.push_back({"PgNameWithoutGroupFile",
               [](CaseFiles& s) {
                 s.rewrite(0, [](chakra::Trace& t) { set_attr(node(t, kArId), chakra::make_string("pg_name", "7")); });
               },
               1,
               {"{rank0}", "node 101", "pg_name", "group 7", "expected"}});
  c.push_back({"PgNameGroupWithoutThisNpu",
               [](CaseFiles& s) {
                 s.write_groups(R"({"1": [0, 1, 2, 3]})");
                 s.rewrite(5, [](chakra::Trace& t) { set_attr(node(t, kArId), chakra::make_string("pg_name", "1")); });
               },
               1,
               {"{rank5}", "node 101", "NPU 5", "group 1", "expected"}});

  // ---- the network YAML -------------------------------------------------------------------
  c.push_back({"YamlTabIndentation",
               [](CaseFiles& s) {
                 s.write_network("topology: [ Ring ]\nnpus_count:\n\t- 8\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n");
               },
               1,
               {"{network}", "line 3", "invalid YAML"}});
  c.push_back({"YamlBadIndentation",
               [](CaseFiles& s) {
                 s.write_network("topology: [ Ring ]\n  npus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n");
               },
               1,
               {"{network}", "line 2", "invalid YAML"}});
  c.push_back({"YamlUnclosedBracket",
               [](CaseFiles& s) {
                 s.write_network("topology: [ Ring\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n");
               },
               1,
               {"{network}", "line ", "invalid YAML"}});
  c.push_back({"YamlListLengthsDisagree",
               [](CaseFiles& s) { s.write_network(network_yaml("Ring", "8", "50.0, 50.0", "500.0")); },
               1,
               {"{network}", "\"bandwidth\"", "2 entries", "\"topology\" has 1", "expected one entry per dimension"}});
  c.push_back({"YamlMissingLatency",
               [](CaseFiles& s) { s.write_network("topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\n"); },
               1,
               {"{network}", "missing key \"latency\"", "expected a list"}});
  c.push_back({"TopologyTorus",
               [](CaseFiles& s) { s.write_network(network_yaml("Torus", "8", "50.0", "500.0")); },
               1,
               {"{network}", "topology[0]", "\"Torus\"", "expected Ring, FullyConnected or Switch"}});
  c.push_back({"TopologyLowercaseRing",
               [](CaseFiles& s) { s.write_network(network_yaml("ring", "8", "50.0", "500.0")); },
               1,
               {"{network}", "topology[0]", "\"ring\"", "expected Ring, FullyConnected or Switch", "case-sensitive"}});
  c.push_back({"NpusCountZero",
               [](CaseFiles& s) { s.write_network(network_yaml("Ring", "0", "50.0", "500.0")); },
               1,
               {"{network}", "npus_count[0]", "value 0 ", "expected an integer of at least 1"}});
  c.push_back({"NpusCountFraction",
               [](CaseFiles& s) { s.write_network(network_yaml("Ring", "2.5", "50.0", "500.0")); },
               1,
               {"{network}", "npus_count[0]", "2.5", "expected an integer of at least 1"}});
  c.push_back({"BandwidthZero",
               [](CaseFiles& s) { s.write_network(network_yaml("Ring", "8", "0", "500.0")); },
               1,
               {"{network}", "bandwidth[0]", "value 0 ", "expected a positive number"}});
  c.push_back({"BandwidthNegative",
               [](CaseFiles& s) { s.write_network(network_yaml("Ring", "8", "-1", "500.0")); },
               1,
               {"{network}", "bandwidth[0]", "-1", "expected a positive number"}});
  c.push_back({"BandwidthNotANumber",
               [](CaseFiles& s) { s.write_network(network_yaml("Ring", "8", "fast", "500.0")); },
               1,
               {"{network}", "bandwidth[0]", "\"fast\"", "number"}});
  c.push_back({"LatencyNegative",
               [](CaseFiles& s) { s.write_network(network_yaml("Ring", "8", "50.0", "-5")); },
               1,
               {"{network}", "latency[0]", "-5", "expected a number of ns, 0 or more"}});

  // ---- the system JSON ----------------------------------------------------------------------
  c.push_back({"SystemJsonTrailingComma",
               [](CaseFiles& s) { s.write_system_text(R"({"preferred-dataset-splits": 4, "local-mem-bw": 50,})"); },
               1,
               {"{system}", "invalid JSON", "line 1", "expected"}});
  c.push_back({"SystemJsonNotAnObject",
               [](CaseFiles& s) { s.write_system_text(R"(["ring", 4])"); },
               1,
               {"{system}", "expected a JSON object"}});
  c.push_back({"SplitsZero",
               [](CaseFiles& s) { s.edit_system([](Json& j) { j["preferred-dataset-splits"] = 0; }); },
               1,
               {"{system}", "\"preferred-dataset-splits\"", "value 0 ", "expected an integer of at least 1"}});
  c.push_back({"SplitsMissing",
               [](CaseFiles& s) { s.edit_system([](Json& j) { j.erase("preferred-dataset-splits"); }); },
               1,
               {"{system}", "missing key \"preferred-dataset-splits\"", "expected"}});
  c.push_back({"SplitsAsString",
               [](CaseFiles& s) { s.edit_system([](Json& j) { j["preferred-dataset-splits"] = "four"; }); },
               1,
               {"{system}", "\"preferred-dataset-splits\"", "\"four\"", "expected an integer of at least 1"}});
  c.push_back({"ActiveChunksZero",
               [](CaseFiles& s) { s.edit_system([](Json& j) { j["active-chunks-per-dimension"] = 0; }); },
               1,
               {"{system}", "\"active-chunks-per-dimension\"", "value 0 ", "expected an integer of at least 1"}});
  c.push_back({"UnknownSchedulingPolicy",
               [](CaseFiles& s) { s.edit_system([](Json& j) { j["scheduling-policy"] = "RANDOM"; }); },
               1,
               {"{system}", "\"scheduling-policy\"", "\"RANDOM\"", "expected \"LIFO\", \"FIFO\" or \"EXPLICIT\""}});
  c.push_back({"UnknownCollectiveOptimization",
               [](CaseFiles& s) { s.edit_system([](Json& j) { j["collective-optimization"] = "themis"; }); },
               1,
               {"{system}", "\"collective-optimization\"", "\"themis\"", "expected \"baseline\" or \"localBWAware\""}});
  c.push_back({"UnknownAlgorithm",
               [](CaseFiles& s) { s.edit_system([](Json& j) { j["all-gather-implementation"] = {"foo"}; }); },
               1,
               {"{system}", "\"all-gather-implementation\"[0]", "\"foo\"", "unknown", "expected ring"}});
  c.push_back({"ImplementationNotAList",
               [](CaseFiles& s) { s.edit_system([](Json& j) { j["all-reduce-implementation"] = "ring"; }); },
               1,
               {"{system}", "\"all-reduce-implementation\"", "\"ring\"", "expected a non-empty list"}});
  c.push_back({"ImplementationLongerThanNetwork",
               [](CaseFiles& s) { s.edit_system([](Json& j) {
                                    j["all-reduce-implementation"] = {"ring", "ring"};
                                  }); },
               1,
               {"{system}", "all-reduce-implementation", "2 algorithms", "1 dimensions",
                "expected at most one per dimension"}});
  // The trace runs an all-gather on every rank; the system JSON has no algorithm for it.
  c.push_back({"NoImplementationForTheTracesCollective",
               [](CaseFiles& s) {
                 s.edit_system([](Json& j) { j.erase("all-gather-implementation"); });
                 s.rewrite_all([](chakra::Trace& t) {
                   chakra::Node& n = add_node(t, kExtraId, NT::kCommColl, "gather_params");
                   *n.add_attr() = chakra::make_int64("comm_type", 2);
                   *n.add_attr() = chakra::make_int64("comm_size", 1 << 16);
                   n.add_data_deps(kArId);
                 });
               },
               1,
               {"{system}", "all-gather-implementation", "node 102", "expected"}});
  c.push_back({"EndpointDelayNegative",
               [](CaseFiles& s) { s.edit_system([](Json& j) { j["endpoint-delay"] = -1; }); },
               1,
               {"{system}", "\"endpoint-delay\"", "value -1 ", "expected an integer, 0 or more"}});
  c.push_back({"LocalMemBwNegative",
               [](CaseFiles& s) { s.edit_system([](Json& j) { j["local-mem-bw"] = -3; }); },
               1,
               {"{system}", "\"local-mem-bw\"", "value -3 ", "expected a number, 0 or more"}});

  // ---- the remote-memory JSON ---------------------------------------------------------------
  c.push_back({"MemoryTypeMissing",
               [](CaseFiles& s) { s.write_memory(R"({"remote-mem-latency": 100})"); },
               1,
               {"{memory}", "missing key \"memory-type\"", "expected NO_MEMORY_EXPANSION"}});
  c.push_back({"MemoryTypeUnknown",
               [](CaseFiles& s) { s.write_memory(R"({"memory-type": "HBM_EXPANSION"})"); },
               1,
               {"{memory}", "\"memory-type\"", "\"HBM_EXPANSION\"", "expected NO_MEMORY_EXPANSION"}});
  c.push_back({"MemLoadWithNoMemoryExpansion",
               [](CaseFiles& s) {
                 s.write_memory(R"({"memory-type": "NO_MEMORY_EXPANSION"})");
                 s.rewrite(0, [](chakra::Trace& t) {
                   *add_node(t, kExtraId, NT::kMemLoad, "load_kv").add_attr() =
                       chakra::make_uint64("tensor_size", 4096);
                 });
               },
               1,
               {"{rank0}", "node 102", "NO_MEMORY_EXPANSION", "expected --memory with PER_NPU_MEMORY_EXPANSION"}});

  // ---- the communicator-group JSON (a message must also say what is expected, not only the fact)
  // ----------------------------------------------------------
  c.push_back({"GroupIdZero",
               [](CaseFiles& s) { s.write_groups(R"({"0": [0, 1, 2, 3]})"); },
               1,
               {"{groups}", "group id \"0\"", "expected a decimal integer of at least 1"}});
  c.push_back({"GroupMemberOutsideNetwork",
               [](CaseFiles& s) { s.write_groups(R"({"1": [0, 1, 99]})"); },
               1,
               {"{groups}", "group \"1\"", "NPU 99", "expected an NPU id from 0 to 7"}});
  c.push_back({"GroupMemberTwice",
               [](CaseFiles& s) { s.write_groups(R"({"1": [0, 1, 1, 2]})"); },
               1,
               {"{groups}", "group \"1\"", "NPU 1", "twice", "expected"}});
  c.push_back({"GroupNotAList",
               [](CaseFiles& s) { s.write_groups(R"({"1": 5})"); },
               1,
               {"{groups}", "group \"1\"", "value 5 ", "expected a non-empty list of NPU ids"}});

  // ---- flags and paths ----------------------------------------------------------------------
  c.push_back({"NumQueuesPerDimZero",
               [](CaseFiles& s) { s.extra_args = {"--num-queues-per-dim=0"}; },
               1,
               {"--num-queues-per-dim", "value 0 ", "expected an integer of at least 1"}});
  c.push_back({"UnknownBackend",
               [](CaseFiles& s) {
                 s.extra_args = {"--backend", "htsim"};
               },
               1,
               {"backend", "\"htsim\"", "congestion-unaware", "congestion-aware"}});
  c.push_back({"SystemPathIsADirectory",
               [](CaseFiles& s) {
                 s.system = (s.dir / "system.d").string();
                 fs::create_directory(s.system);
               },
               1,
               {"{system}", "is a directory", "expected the system configuration file"}});
  c.push_back({"NetworkPathIsADirectory",
               [](CaseFiles& s) {
                 s.network = (s.dir / "network.d").string();
                 fs::create_directory(s.network);
               },
               1,
               {"{network}", "is a directory", "expected the network configuration file"}});
  c.push_back({"NetworkFileMissing",
               [](CaseFiles& s) { s.network = (s.dir / "no_such_network.yml").string(); },
               1,
               {"{network}", "cannot open the network configuration", "exist"}});
  c.push_back({"SystemUnreadable",
               [](CaseFiles& s) { s.make_unreadable(s.system); },
               1,
               {"{system}", "cannot open the system configuration", "readable"},
               /*needs_non_root=*/true});

  // ---- a deadlock: rank 0 runs an all-reduce nobody else joins -----------------------------
  c.push_back({"DeadlockCollectiveOnlyOnRank0",
               [](CaseFiles& s) {
                 s.rewrite(0, [](chakra::Trace& t) {
                   chakra::TraceBuilder b;
                   b.set_next_id(kExtraId);
                   b.collective("lonely_sync", chakra::CommType::kAllReduce, 1 << 20, {kArId});
                   t.nodes.push_back(b.trace().nodes.front());
                 });
               },
               2,
               {"deadlock", "NPU 0", "node 102 (\"lonely_sync\""}});
  return c;
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, ExitsNonZeroAndSaysWhy) { check_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInput, ::testing::ValuesIn(catalogue()),
                         [](const ::testing::TestParamInfo<Case>& param_info) { return param_info.param.name; });

// The catalogue is only as good as its baseline: unbroken, it runs cleanly.
TEST(BadInputBaseline, RunsCleanly) {
  CaseFiles s("errors_baseline");
  const CommandResult r = run_binary(s.args());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("sys[7] finished"));
  EXPECT_EQ(r.err, "");
}

TEST(BadInputBaseline, CatalogueIsLargeAndNamesAreUnique) {
  const std::vector<Case> cases = catalogue();
  EXPECT_GE(cases.size(), 40u);
  std::set<std::string> names;
  for (const Case& c : cases) EXPECT_TRUE(names.insert(c.name).second) << c.name;
}

}  // namespace
}  // namespace chakrasim::test::errors
