// The PyTorch ET / ET+ -> Chakra converter: byte-identical to the reference converter on its two
// goldens (a real host-only trace, a synthetic ET+ with a GEMM kernel, an NCCL all-reduce and a
// SendRecv), the converted real trace simulates, and each rule and error on small traces written
// here.
#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "core/error.h"
#include "support/test_support.h"
#include "tools/pytorch/pytorch_converter.h"
#include "tools/pytorch/pytorch_repr.h"

namespace chakrasim::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

// The golden README's compact dump: "id TYPE name data=[..] ctrl=[..] dur=.. attr:oneof=value".
std::string dump(const chakra::Node& n) {
  auto ids = [](const auto& list) {
    std::string s;
    for (std::uint64_t d : list) s += (s.empty() ? "" : ", ") + std::to_string(d);
    return "[" + s + "]";
  };
  std::string s = fmt::format("{} {} {} data={} ctrl={} dur={}", n.id(), chakra::node_type_name(n.type()), n.name(),
                              ids(n.data_deps()), ids(n.ctrl_deps()), n.duration_micros());
  for (const chakra::Attribute& a : n.attr()) {
    std::string value = a.has_string_val()   ? a.string_val()
                        : a.has_bool_val()   ? (a.bool_val() ? "True" : "False")
                        : a.has_int32_val()  ? std::to_string(a.int32_val())
                        : a.has_uint64_val() ? std::to_string(a.uint64_val())
                                             : std::to_string(a.int64_val());
    s += fmt::format(" {}:{}={}", a.name(), chakra::value_kind(a), value);
  }
  return s + "\n  inputs " + n.inputs().ShortDebugString() + "\n  outputs " + n.outputs().ShortDebugString();
}

// Compares with a golden .et; on a difference, says which node differs first and how.
void expect_same_as_golden(const chakra::Trace& mine, const std::filesystem::path& golden) {
  const std::string bytes = file_bytes(golden);
  if (chakra::serialize_trace(mine) == bytes) return;
  const chakra::Trace want = chakra::parse_trace(bytes, golden.string());
  ASSERT_EQ(mine.metadata.SerializeAsString(), want.metadata.SerializeAsString())
      << "metadata: got " << mine.metadata.ShortDebugString() << "\nwant " << want.metadata.ShortDebugString();
  for (std::size_t i = 0; i < std::min(mine.nodes.size(), want.nodes.size()); ++i) {
    ASSERT_EQ(mine.nodes[i].SerializeAsString(), want.nodes[i].SerializeAsString())
        << "first differing node, #" << i << ":\n got  " << dump(mine.nodes[i]) << "\n want " << dump(want.nodes[i]);
  }
  FAIL() << "node counts differ: got " << mine.nodes.size() << ", want " << want.nodes.size();
}

const chakra::Node& node(const chakra::Trace& t, std::uint64_t id) {
  for (const chakra::Node& n : t.nodes) {
    if (n.id() == id) return n;
  }
  throw std::runtime_error("no node " + std::to_string(id));
}

bool has_node(const chakra::Trace& t, std::uint64_t id) {
  return std::any_of(t.nodes.begin(), t.nodes.end(), [&](const chakra::Node& n) { return n.id() == id; });
}

// The real host-only trace, unpacked from the reference's archive into `dir`.
std::filesystem::path host_trace(const std::filesystem::path& ref, const std::filesystem::path& dir) {
  const auto archive = ref / "chakra-tests" / "1.0.2-chakra.0.0.4.tgz";
  const std::string command = "tar xzf '" + archive.string() + "' -C '" + dir.string() + "' 2>/dev/null";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return dir / "1.0.2-chakra.0.0.4.json";
}

TEST(PytorchConverter, SyntheticEtPlusIsByteIdentical) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto dir = ref / "golden" / "pytorch_converter";
  const chakra::Trace t =
      tools::convert_pytorch(file_bytes(dir / "synthetic_etplus.json"), "synthetic_etplus.json", {});
  expect_same_as_golden(t, dir / "synthetic_etplus.0.et");
}

TEST(PytorchConverter, HostOnlyTraceIsByteIdentical) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto json = host_trace(ref, temp_dir("pytorch_hostonly"));
  const chakra::Trace t = tools::convert_pytorch(file_bytes(json), json.string(), {});
  EXPECT_EQ(t.nodes.size(), 262u);  // 263 ops; the process op (id 1, its own caller) is dangling
  expect_same_as_golden(t, ref / "golden" / "pytorch_converter" / "hostonly_1.0.2.0.et");
}

// The host trace is rank 0 of a 2-GPU job; the simulator needs at least 2 NPUs, so both ranks
// run it. 261 CPU ops of duration 0 (1 ns each, as the reference replays 0) and one process-group
// METADATA node (no time) in one chain: 261 ns, with or without --fix-defects.
TEST(PytorchConverter, HostOnlyTraceSimulates) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto dir = temp_dir("pytorch_hostonly_run");
  const auto json = host_trace(ref, dir);
  write_bytes(dir / "system.json", R"({"preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
    "all-to-all-implementation": ["ring"], "local-mem-bw": 50})");
  write_bytes(dir / "network.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  for (const bool fix : {false, true}) {
    const std::string prefix = (dir / (fix ? "fixed" : "compat")).string();
    std::vector<std::string> convert = {"chakra",      "convert", "pytorch",
                                        json.string(), "--out",   chakra::rank_path(prefix, 0)};
    if (fix) convert.push_back("--fix-defects");
    const CommandResult c = run_binary(convert);
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_THAT(c.out, HasSubstr("262 nodes"));
    std::filesystem::copy_file(chakra::rank_path(prefix, 0), chakra::rank_path(prefix, 1));
    const CommandResult r = run_binary({"run", "--workload", prefix, "--system", (dir / "system.json").string(),
                                        "--network", (dir / "network.yml").string(), "-q"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "sys[0] finished, 261 cycles, exposed communication 261 cycles.\n"
                     "sys[1] finished, 261 cycles, exposed communication 261 cycles.\n");
  }
  // The defect the golden keeps: detach_ (id 10) is listed before its caller aten::detach_ (9).
  const chakra::Trace compat = chakra::read_trace(chakra::rank_path((dir / "compat").string(), 0));
  const chakra::Trace fixed = chakra::read_trace(chakra::rank_path((dir / "fixed").string(), 0));
  EXPECT_THAT(node(compat, 10).ctrl_deps(), ElementsAre());
  EXPECT_THAT(node(fixed, 10).ctrl_deps(), ElementsAre(9u));
  // The thread root's caller, the process op, is dropped as dangling, and so is the fixed ctrl dep on it.
  EXPECT_EQ(fixed.nodes[0].id(), 2u);
  EXPECT_THAT(fixed.nodes[0].ctrl_deps(), ElementsAre());
}

TEST(PytorchConverter, CommandLine) {
  const CommandResult help = run_binary({"chakra", "convert", "pytorch", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("Example:\n  chakrasim chakra convert pytorch"));
  EXPECT_THAT(help.out, HasSubstr("--fix-defects"));
  const auto dir = temp_dir("pytorch_cli");
  write_bytes(dir / "bad.json",
              R"({"schema": "1.0.1", "pid": 1, "time": "", "start_ts": 0, "finish_ts": 0, "nodes": []})");
  const CommandResult bad =
      run_binary({"chakra", "convert", "pytorch", (dir / "bad.json").string(), "--out", (dir / "x.et").string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr((dir / "bad.json").string() + ": key \"schema\" is \"1.0.1\""));
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto golden = ref / "golden" / "pytorch_converter";
  const CommandResult r = run_binary({"chakra", "convert", "pytorch", (golden / "synthetic_etplus.json").string(),
                                      "--out", (dir / "synthetic.0.et").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(file_bytes(dir / "synthetic.0.et"), file_bytes(golden / "synthetic_etplus.0.et"));
}

// Inputs and outputs are stored as Python's str() of the JSON lists (expected strings: Python 3.11).
TEST(PytorchConverter, PythonStr) {
  auto python_str = [](const std::string& json) {
    return tools::pyrepr::python_str(nlohmann::ordered_json::parse(json));
  };
  EXPECT_EQ(python_str(R"([[10, 11, 0, 256, 4, "cuda:0"], "<None>", true, false, null, -3])"), "[[10, 11, 0, 256, 4, "
                                                                                               "'cuda:0'], '<None>', "
                                                                                               "True, False, None, "
                                                                                               "-3]");
  EXPECT_EQ(python_str(R"(["[{\"pg_name\": \"0\"}]"])"), R"(['[{"pg_name": "0"}]'])");
  EXPECT_EQ(python_str(R"(["it's", "both ' and \"", "back\\slash", "tab\tnl\ncr\r", "\u0001\u007f"])"),
            R"(["it's", 'both \' and "', 'back\\slash', 'tab\tnl\ncr\r', '\x01\x7f'])");
  EXPECT_EQ(python_str(R"(["é中😀", "\u00a0\u00ad\u200b\u2028\ue000\ufeff"])"), "['é中😀', "
                                                                               "'\\xa0\\xad\\u200b\\u2028\\ue000\\ufeff"
                                                                               "']");
  EXPECT_EQ(python_str("[0.0, -0.0, 1.0, 2.5, 0.1, 1e-05, 0.0001, 1e16, 1e15, 1.5e-07, 1e100, 123456789.125, 1E5]"),
            "[0.0, -0.0, 1.0, 2.5, 0.1, 1e-05, 0.0001, 1e+16, 1000000000000000.0, 1.5e-07, 1e+100, 123456789.125, "
            "100000.0]");
  EXPECT_EQ(python_str("[18446744073709551615, -9223372036854775808, 5e-324, 1.7976931348623157e308]"),
            "[18446744073709551615, -9223372036854775808, 5e-324, 1.7976931348623157e+308]");
  EXPECT_EQ(python_str(R"({"b": [[]], "a": {}, "c'": null})"), R"({'b': [[]], 'a': {}, "c'": None})");
  EXPECT_EQ(python_str(R"("a top-level string is itself")"), "a top-level string is itself");
}

// ---- small traces written here ----------------------------------------------------------------

// One op as trace_link writes it, with the seven attributes every op carries; `extra` adds or
// replaces keys ("cat" makes it a GPU kernel).
Json op(std::uint64_t id, const std::string& name, std::int64_t caller, Json extra = Json::object()) {
  const Json io = {{"values", Json::array()}, {"shapes", Json::array()}, {"types", Json::array()}};
  Json attrs = Json::array();
  for (const char* key : {"rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid"}) {
    attrs.push_back({{"name", key}, {"type", "uint64"}, {"value", std::string(key) == "rf_id" ? id : 0}});
  }
  attrs.push_back({{"name", "op_schema"}, {"type", "string"}, {"value", ""}});
  Json n = {{"id", id}, {"name", name}, {"ctrl_deps", caller}, {"inputs", io}, {"outputs", io}, {"attrs", attrs}};
  n.update(extra);
  return n;
}

Json kernel(std::uint64_t id, const std::string& name, std::int64_t caller, Json extra = Json::object()) {
  extra["cat"] = "kernel";
  return op(id, name, caller, extra);
}

std::string trace_of(const std::vector<Json>& nodes, const std::string& schema = "1.1.1-chakra.0.0.4") {
  return Json{{"schema", schema}, {"pid", 7}, {"time", "t"}, {"start_ts", 1}, {"finish_ts", 2}, {"nodes", nodes}}
      .dump();
}

const Json kThread = op(1, "[pytorch|profiler|execution_trace|thread]", 0);
const Json kTensorInput = {{"values", {{1, 2, 0, 256, 4, "cuda:0"}}},
                           {"shapes", {{256}}},
                           {"types", {"Tensor(float)"}}};

// Call tree: thread 1 -> A 2 (kernels 5, 6), B 3 -> C 4. CPU ops chain in call order (2, 3, 4);
// each kernel depends on its launcher; a kernel launched by a kernel (8) is dropped, and so is an
// op whose caller is not in the trace (7), which ends up with no dependency at all.
TEST(PytorchConverter, DependenciesFollowTheCallTree) {
  const std::string text =
      trace_of({kThread, op(2, "A", 1, {{"exclusive_dur", 12.7}}),
                op(3, "Optimizer.step#SGD.step", 1, {{"exclusive_dur", 30}}), op(4, "C", 3, {{"inter_thread_dep", 2}}),
                kernel(5, "gemm", 2, {{"stream", 7}, {"exclusive_dur", 40}}), kernel(6, "relu", 2), op(7, "orphan", 99),
                kernel(8, "nested", 5), op(9, "no stream", 1, {{"stream", nullptr}})});
  const chakra::Trace t = tools::convert_pytorch(text, "t.json", {});
  ASSERT_EQ(t.nodes.size(), 7u);
  EXPECT_FALSE(has_node(t, 7));
  EXPECT_FALSE(has_node(t, 8));
  EXPECT_THAT(node(t, 1).data_deps(), ElementsAre());
  EXPECT_THAT(node(t, 2).data_deps(), ElementsAre(1u));
  EXPECT_THAT(node(t, 5).data_deps(), ElementsAre(2u));
  EXPECT_THAT(node(t, 6).data_deps(), ElementsAre(2u));  // not on its sibling kernel 5
  EXPECT_THAT(node(t, 3).data_deps(), ElementsAre(2u));
  EXPECT_THAT(node(t, 4).data_deps(), ElementsAre(2u, 3u));  // inter-thread dependency first
  EXPECT_THAT(node(t, 9).data_deps(), ElementsAre(4u));
  EXPECT_THAT(node(t, 4).ctrl_deps(), ElementsAre(3u));
  EXPECT_EQ(node(t, 2).duration_micros(), 12u);  // int() of 12.7
  EXPECT_EQ(node(t, 3).duration_micros(), 0u);   // an optimizer step spans the others: 0
  EXPECT_EQ(node(t, 5).duration_micros(), 40u);
  EXPECT_EQ(node(t, 5).type(), ChakraProtoMsg::COMP_NODE);
  EXPECT_EQ(chakra::attr_bool(node(t, 5), "is_cpu_op"), false);
  EXPECT_EQ(chakra::attr_bool(node(t, 2), "is_cpu_op"), true);
  EXPECT_EQ(chakra::attr_int(node(t, 5), "stream"), 7);
  EXPECT_EQ(chakra::attr_int(node(t, 2), "stream"), 0);
  EXPECT_EQ(chakra::find_attribute(node(t, 9), "stream"), nullptr);
  EXPECT_EQ(chakra::attr_int(node(t, 2), "rf_id"), 2);
  EXPECT_NO_THROW(chakra::Graph::build(t, "t"));
}

// Every schema the reference accepts converts, and so does the older root name
// ("execution_graph"); a kernel dropped with its caller needs no attributes.
TEST(PytorchConverter, SchemasAndRoots) {
  Json bare = kernel(4, "dropped", 3);
  bare.erase("attrs");
  for (const char* schema :
       {"1.0.2-chakra.0.0.4", "1.0.3-chakra.0.0.4", "1.1.0-chakra.0.0.4", "1.1.1-chakra.0.0.4", "1.1.1-chakra.1.0.0"}) {
    const chakra::Trace t = tools::convert_pytorch(trace_of({op(1, "[pytorch|profiler|execution_graph|thread]", 0),
                                                             op(2, "A", 1), kernel(3, "k", 2), bare},
                                                            schema),
                                                   "t.json", {});
    EXPECT_EQ(t.metadata.attr(0).string_val(), schema);
    ASSERT_EQ(t.nodes.size(), 3u) << schema;
    EXPECT_THAT(node(t, 3).data_deps(), ElementsAre(2u));
  }
}

// What `chakra link` writes: the process node 0 is its own caller and every thread node's. It
// has no dependency and none on it, so it is dropped; the reference still writes the thread's
// ctrl dep on it, a file no simulator loads: here that dependency goes too. An op whose caller is
// no node (7, under 99; trace_link keeps such ops) roots a walk of its own: kernel 8 and callee 9
// depend on it, and it on its inter-thread dependency; alone (10, under 98) it is dropped.
TEST(PytorchConverter, TraceLinkOutputConverts) {
  const std::string text = trace_of({op(0, "[pytorch|profiler|execution_trace|process]", 0), op(1, kThread["name"], 0),
                                     op(2, "A", 1), op(7, "orphan", 99, {{"inter_thread_dep", 2}}), kernel(8, "k", 7),
                                     op(9, "callee", 7), op(10, "alone", 98)});
  for (const bool fix : {false, true}) {
    SCOPED_TRACE(fix ? "fixed" : "compat");
    const chakra::Trace t = tools::convert_pytorch(text, "et_plus.json", {fix});
    std::vector<std::uint64_t> ids;
    for (const chakra::Node& n : t.nodes) ids.push_back(n.id());
    EXPECT_THAT(ids, ElementsAre(1u, 2u, 7u, 8u, 9u));
    EXPECT_THAT(node(t, 1).ctrl_deps(), ElementsAre());
    EXPECT_THAT(node(t, 2).ctrl_deps(), ElementsAre(1u));
    EXPECT_THAT(node(t, 7).data_deps(), ElementsAre(2u));
    EXPECT_THAT(node(t, 7).ctrl_deps(), ElementsAre());
    EXPECT_THAT(node(t, 8).data_deps(), ElementsAre(7u));
    EXPECT_THAT(node(t, 9).data_deps(), ElementsAre(7u));
    EXPECT_THAT(node(t, 9).ctrl_deps(), ElementsAre(7u));
  }
}

// C (2) is listed before its caller B (3). The reference keeps a ctrl dep only on a caller it
// converted earlier; --fix-defects keeps it wherever the caller is.
TEST(PytorchConverter, ChildListedBeforeItsCaller) {
  const std::string text = trace_of({kThread, op(2, "C", 3), op(3, "B", 1)});
  const chakra::Trace compat = tools::convert_pytorch(text, "t.json", {});
  EXPECT_THAT(node(compat, 2).ctrl_deps(), ElementsAre());
  EXPECT_THAT(node(compat, 3).ctrl_deps(), ElementsAre(1u));
  EXPECT_THAT(node(compat, 2).data_deps(), ElementsAre(3u));  // the walk goes by the call tree
  const chakra::Trace fixed = tools::convert_pytorch(text, "t.json", {true});
  EXPECT_THAT(node(fixed, 2).ctrl_deps(), ElementsAre(3u));
}

// Sync deps (trace_link's GPU synchronisation edges) become data deps when the earlier node
// started first; the reference never adds them.
TEST(PytorchConverter, SyncDepsOnEarlierNodes) {
  const std::string text =
      trace_of({kThread, op(2, "A", 1, {{"ts", 10}}), op(3, "B", 1, {{"ts", 20}}),
                op(4, "C", 1, {{"ts", 30}, {"sync_dep", {2}}}), op(5, "D", 1, {{"ts", 5}, {"sync_dep", {3, 77}}})});
  const chakra::Trace t = tools::convert_pytorch(text, "t.json", {});
  EXPECT_THAT(node(t, 4).data_deps(), ElementsAre(3u, 2u));
  EXPECT_THAT(node(t, 5).data_deps(), ElementsAre(4u));  // 3 started later; 77 is not a node
}

// NCCL kernels: the collective from the kernel name, its size from the tensor inputs (a
// GenericList[Tensor] sums its tensors), pg_name when set; SendRecv kernels are sends or receives
// after the nccl: op that called record_param_comms, whose pg_name they take.
TEST(PytorchConverter, NcclKernels) {
  const Json list_input = {{"values", {{{1, 2, 0, 256, 4, "cuda:0"}, {3, 4, 0, 64, 2, "cuda:0"}}, "<Object>"}},
                           {"shapes", {{{256}, {64}}, Json::array()}},
                           {"types", {"GenericList[Tensor(float),Tensor(c10::Half)]", "Object"}}};
  const Json pg1 = {{"name", "pg_name"}, {"type", "string"}, {"value", "1"}};
  Json send_rpc = op(20, "record_param_comms", 10);
  send_rpc["attrs"].push_back(pg1);
  const std::string text = trace_of(
      {kThread, op(2, "c10d::allreduce_", 1), op(3, "record_param_comms", 2),
       kernel(4, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 3, {{"inputs", list_input}, {"pg_name", "0"}}),
       op(5, "nccl:all_gather", 1), kernel(6, "ncclKernel_AllGather_RING_LL_Sum_int8_t", 5, {{"inputs", kTensorInput}}),
       op(7, "x", 1), kernel(8, "ncclDevKernel_Reduce-Scatter", 7), kernel(9, "ncclDevKernel_Broadcast_RING", 7),
       op(10, "nccl:send", 1), send_rpc, kernel(21, "ncclDevKernel_SendRecv", 20, {{"inputs", kTensorInput}}),
       op(30, "nccl:recv", 1), kernel(31, "ncclDevKernel_SendRecv", 30), op(40, "nccl:all_to_all", 1),
       kernel(41, "ncclDevKernel_SendRecv", 40)});
  const chakra::Trace t = tools::convert_pytorch(text, "t.json", {});
  auto expect_coll = [&](std::uint64_t id, chakra::CommType type, std::int64_t bytes) {
    SCOPED_TRACE(id);
    EXPECT_EQ(node(t, id).type(), ChakraProtoMsg::COMM_COLL_NODE);
    EXPECT_EQ(chakra::attr_int(node(t, id), "comm_type"), static_cast<std::int64_t>(type));
    EXPECT_EQ(chakra::attr_int(node(t, id), "comm_size"), bytes);
  };
  expect_coll(4, chakra::CommType::kAllReduce, 256 * 4 + 64 * 2);
  EXPECT_EQ(chakra::attr_string(node(t, 4), "pg_name"), "0");
  expect_coll(6, chakra::CommType::kAllGather, 1024);
  EXPECT_EQ(chakra::find_attribute(node(t, 6), "pg_name"), nullptr);
  expect_coll(8, chakra::CommType::kReduceScatter, 0);
  expect_coll(9, chakra::CommType::kBroadcast, 0);
  expect_coll(41, chakra::CommType::kAllToAll, 0);
  EXPECT_EQ(node(t, 21).type(), ChakraProtoMsg::COMM_SEND_NODE);
  EXPECT_EQ(chakra::attr_int(node(t, 21), "comm_size"), 1024);
  EXPECT_EQ(chakra::attr_string(node(t, 21), "pg_name"), "1");
  EXPECT_EQ(chakra::find_attribute(node(t, 21), "comm_dst"), nullptr);  // the reference's defect
  EXPECT_EQ(node(t, 31).type(), ChakraProtoMsg::COMM_RECV_NODE);
  EXPECT_EQ(node(t, 31).attr_size(), 10);  // the 9 common attributes + comm_size
}

// Rank r of a two-rank job in process group "5" = global ranks [1, 0]: rank 0 sends to group
// rank 0 (global 1), which receives from group rank 1 (global 0). PyTorch records the peer as the
// Int before "send" / "recv" in record_param_comms' inputs.
std::string p2p_rank(bool send) {
  const Json groups = {{{"pg_name", "5"}, {"ranks", {1, 0}}}};
  const Json init = {{"values", {groups.dump()}}, {"shapes", {Json::array()}}, {"types", {"String"}}};
  const Json rpc_inputs = {{"values", {{{1, 2, 0, 256, 4, "cuda:0"}}, 3, send ? 0 : 1, send ? "send" : "recv", 2}},
                           {"shapes", Json::array()},
                           {"types", {"GenericList[Tensor(float)]", "Int", "Int", "String", "Int"}}};
  return trace_of({kThread, op(2, "## process_group:init ##", 1, {{"inputs", init}}),
                   op(3, send ? "nccl:send" : "nccl:recv", 1),
                   op(4, "record_param_comms", 3, {{"inputs", rpc_inputs}, {"pg_name", "5"}}),
                   kernel(5, "ncclDevKernel_SendRecv", 4, {{"inputs", rpc_inputs}, {"exclusive_dur", 9}})});
}

TEST(PytorchConverter, FixedSendRecvRunsOnTwoNpus) {
  const chakra::Trace sender = tools::convert_pytorch(p2p_rank(true), "rank0.json", {true});
  const chakra::Trace receiver = tools::convert_pytorch(p2p_rank(false), "rank1.json", {true});
  EXPECT_EQ(node(sender, 2).type(), ChakraProtoMsg::METADATA_NODE);
  EXPECT_EQ(node(sender, 5).type(), ChakraProtoMsg::COMM_SEND_NODE);
  EXPECT_EQ(chakra::attr_int(node(sender, 5), "comm_dst"), 1);
  EXPECT_EQ(chakra::attr_int(node(sender, 5), "comm_tag"), 0);
  EXPECT_EQ(chakra::attr_int(node(sender, 5), "comm_size"), 1024);
  EXPECT_EQ(node(receiver, 5).type(), ChakraProtoMsg::COMM_RECV_NODE);
  EXPECT_EQ(chakra::attr_int(node(receiver, 5), "comm_src"), 0);
  EXPECT_EQ(chakra::find_attribute(node(receiver, 5), "comm_dst"), nullptr);  // the receiving NPU itself

  sim::Inputs in;
  in.network = network_of({{network::DimensionKind::kRing, 2, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = {std::make_shared<const chakra::Graph>(chakra::Graph::build(sender, "rank0")),
               std::make_shared<const chakra::Graph>(chakra::Graph::build(receiver, "rank1"))};
  const sim::Result r = run(in);
  EXPECT_TRUE(r.all_finished());
  EXPECT_EQ(r.messages, 1u);

  // Without the fix the nodes lack their peers, and the simulator says so.
  in.graphs[0] = std::make_shared<const chakra::Graph>(
      chakra::Graph::build(tools::convert_pytorch(p2p_rank(true), "rank0.json", {}), "rank0"));
  EXPECT_THAT(error_of([&] { sim::simulate(in); }), HasSubstr("missing the attribute \"comm_dst\""));
}

// A chain of 1,500 CPU ops: the reference's recursive cycle check fails near 1,000.
TEST(PytorchConverter, LongChainNeedsNoRecursion) {
  std::vector<Json> nodes = {kThread};
  for (std::uint64_t id = 2; id <= 1500; ++id) nodes.push_back(op(id, "aten::add", 1));
  const chakra::Trace t = tools::convert_pytorch(trace_of(nodes), "long.json", {});
  ASSERT_EQ(t.nodes.size(), 1500u);
  EXPECT_THAT(t.nodes.back().data_deps(), ElementsAre(1499u));
}

TEST(PytorchConverter, Errors) {
  auto error = [](const std::string& text, tools::PytorchOptions o = {}) {
    return error_of([&] { tools::convert_pytorch(text, "bad.json", o); });
  };
  EXPECT_THAT(error("{\"schema\": "), HasSubstr("bad.json: invalid JSON"));
  EXPECT_THAT(error(trace_of({kThread}, "1.0.1-chakra.0.0.4")), HasSubstr("bad.json: key \"schema\" is "
                                                                          "\"1.0.1-chakra.0.0.4\"; expected a "
                                                                          "supported PyTorch ET schema"));
  Json no_pid = Json::parse(trace_of({kThread}));
  no_pid.erase("pid");
  EXPECT_THAT(error(no_pid.dump()), HasSubstr("bad.json: no key \"pid\""));
  Json no_caller = op(2, "A", 1);
  no_caller.erase("ctrl_deps");
  EXPECT_THAT(error(trace_of({kThread, no_caller})), HasSubstr("bad.json: node 2 (\"A\"): no key \"ctrl_deps\""));
  Json no_rf_id = op(2, "A", 1);
  no_rf_id["attrs"].erase(0);
  EXPECT_THAT(error(trace_of({kThread, no_rf_id})), HasSubstr("node 2 (\"A\"): attrs has no \"rf_id\""));
  EXPECT_THAT(error(trace_of({kThread, op(2, "A", 1, {{"exclusive_dur", "5"}})})), HasSubstr("node 2 (\"A\"): key "
                                                                                             "\"exclusive_dur\" is "
                                                                                             "\"5\"; expected a "
                                                                                             "duration"));
  EXPECT_THAT(error(trace_of({kThread, op(2, "A", 1), op(2, "B", 1)})), HasSubstr("node 2 (\"B\"): duplicate id: "
                                                                                  "nodes[1] has it too"));
  EXPECT_THAT(error(trace_of({kThread, op(2, "A", 1, {{"inter_thread_dep", 3}}), op(3, "B", 1)})), HasSubstr("bad.json:"
                                                                                                             " dependen"
                                                                                                             "cy cycle "
                                                                                                             "of 2 "
                                                                                                             "nodes"));
  EXPECT_THAT(error(trace_of({kThread, op(2, "A", 1, {{"inter_thread_dep", 42}})})), HasSubstr("node 2 (\"A\"): it "
                                                                                               "depends on node 42 "
                                                                                               "(its "
                                                                                               "inter_thread_dep), "
                                                                                               "which is not in the "
                                                                                               "output"));
  EXPECT_THAT(error(trace_of({kThread, op(2, "A", 1), kernel(3, "ncclDevKernel_Magic", 2)})), HasSubstr("node 3 "
                                                                                                        "(\"ncclDevKern"
                                                                                                        "el_Magic\"): "
                                                                                                        "unknown NCCL "
                                                                                                        "kernel"));
  EXPECT_THAT(error(trace_of(
                  {kThread, op(2, "A", 1),
                   kernel(3, "ncclKernel_AllReduce", 2,
                          {{"inputs", {{"values", {{1, 2}}}, {"shapes", {{1}}}, {"types", {"Tensor(float)"}}}}})})),
              HasSubstr("node 3 (\"ncclKernel_AllReduce\"): inputs.values[0] holds [1,2]; expected a tensor"));
  EXPECT_THAT(error(trace_of({kThread, op(2, "nccl:send", 1), kernel(3, "ncclDevKernel_SendRecv", 2)}), {true}),
              HasSubstr("node 3 (\"ncclDevKernel_SendRecv\"): cannot find the send's peer"));
  std::string outside = p2p_rank(false);
  outside.replace(outside.find("[1,0]"), 5, "[1]");
  EXPECT_THAT(error(outside, {true}), HasSubstr("node 5 (\"ncclDevKernel_SendRecv\"): peer rank 1 is outside process "
                                                "group \"5\" of 1 ranks"));
  EXPECT_THAT(error_of([] { tools::convert_pytorch_file("/nonexistent/et.json", "x.et", {}); }), HasSubstr("/nonexisten"
                                                                                                           "t/"
                                                                                                           "et.json"));
}

// --op-shapes: the first kernel of each matrix product or convolution gets the op's shape from
// its recorded inputs; linear's kernel (launched by the addmm it calls) takes addmm's; ops
// whose inputs do not give every dimension (grouped convolution) give none; nothing changes
// without the option.
TEST(PytorchConverter, OpShapesFromRecordedInputs) {
  auto inputs = [](Json shapes, Json values) {
    return Json{{"inputs", {{"values", values}, {"shapes", shapes}, {"types", Json::array()}}}};
  };
  const Json t = {1, 2, 0, 1, 2, "cuda:0"};  // a tensor input's value
  const std::string text = trace_of({
      kThread,
      op(2, "aten::mm", 1, inputs({{128, 64}, {64, 32}}, {t, t})),
      kernel(3, "sm90_gemm", 2),
      kernel(4, "splitk_reduce", 2),  // the product's second kernel: no shape of its own
      op(5, "aten::linear", 1, inputs({{4, 16, 64}, {96, 64}, {96}}, {t, t, t})),
      op(6, "aten::addmm", 5, inputs({{96}, {64, 64}, {64, 96}}, {t, t, t})),
      kernel(7, "sm90_gemm", 6),
      op(8, "aten::bmm", 1, inputs({{12, 128, 64}, {12, 64, 128}}, {t, t})),
      kernel(9, "sm90_gemm", 8),
      op(10, "aten::convolution", 1,
         inputs({{8, 3, 224, 224}, {64, 3, 7, 7}, {}, {}, {}, {}, {}, {}, {}},
                {t, t, nullptr, {2, 2}, {3, 3}, {1, 1}, false, {0, 0}, 1})),
      kernel(11, "implicit_gemm_conv", 10),
      op(12, "aten::convolution", 1,
         inputs({{8, 64, 56, 56}, {64, 1, 3, 3}, {}, {}, {}, {}, {}, {}, {}},
                {t, t, nullptr, {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 64})),
      kernel(13, "depthwise_conv", 12),
  });
  tools::PytorchOptions o;
  o.op_shapes = true;
  const chakra::Trace trace = tools::convert_pytorch(text, "s.json", o);
  const chakra::Graph g = chakra::Graph::build(trace, "s.et");
  auto shape_of = [&](std::uint64_t id) -> const chakra::OpShape* {
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      if (g.id(i) == id) return g.op_shape(i);
    }
    return nullptr;
  };
  auto expect_gemm = [&](std::uint64_t id, std::uint64_t m, std::uint64_t n, std::uint64_t k, std::uint64_t count) {
    const chakra::OpShape* s = shape_of(id);
    ASSERT_NE(s, nullptr) << id;
    const chakra::OpShape::Gemm gm = s->gemm();
    EXPECT_EQ(std::tuple(gm.m, gm.n, gm.k, gm.count), std::tuple(m, n, k, count)) << id;
  };
  expect_gemm(3, 128, 32, 64, 1);
  EXPECT_EQ(shape_of(4), nullptr);
  expect_gemm(7, 64, 96, 64, 1);  // addmm's own inputs (linear's 4 x 16 rows became 64)
  expect_gemm(9, 128, 128, 64, 12);
  // 224 + 2 x 3 padding, 7 x 7 filters at stride 2: (230 - 7) / 2 + 1 = 112 pixels a side, 8 images.
  const chakra::OpShape* conv = shape_of(11);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->dims, (std::array<std::uint64_t, 9>{230, 230, 7, 7, 3, 64, 2, 2, 8}));
  expect_gemm(11, 112u * 112 * 8, 64, 7u * 7 * 3, 1);
  EXPECT_EQ(shape_of(13), nullptr);  // 64 groups
  // Without the option, the same trace carries no shape.
  const chakra::Graph plain = chakra::Graph::build(tools::convert_pytorch(text, "s.json", {}), "p.et");
  for (std::uint32_t i = 0; i < plain.size(); ++i) EXPECT_EQ(plain.op_shape(i), nullptr);
}

}  // namespace
}  // namespace chakrasim::test
