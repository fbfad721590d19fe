// The trace linker on the hand-written rank 0 of kineto_samples.h (its worked example is
// there): a PyTorch host execution trace and its Kineto trace. New ids: host order, each host op
// followed by its GPU ops: see kNames.
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_support.h"
#include "tools/link/kineto_samples.h"
#include "tools/link/trace_link.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;
using namespace kineto_samples;  // the sample traces and their builders

const std::vector<std::string> kNames = {"[pytorch|profiler|execution_trace|process]",
                                         "[pytorch|profiler|execution_trace|thread]",
                                         "## process_group:init ##",
                                         "ProfilerStep#0",
                                         "## forward ##",
                                         "aten::mm",
                                         "ampere_sgemm_64x64_nn",
                                         "aten::cat",
                                         "CatArrayBatchedCopy",
                                         "aten::empty",
                                         "aten::copy_",
                                         "Memcpy HtoD (Pageable -> Device)",
                                         "c10d::allreduce_",
                                         "record_param_comms",
                                         "nccl:all_reduce",
                                         kAllReduce,
                                         "nccl:send",
                                         "record_param_comms",
                                         kSendRecv,
                                         "aten::item",
                                         "aten::_local_scalar_dense",
                                         "Memcpy DtoH (Device -> Pageable)",
                                         "aten::add_",
                                         "aten::linear",
                                         "aten::t",
                                         "aten::addmm",
                                         "ampere_sgemm_128x64_tn",
                                         "[pytorch|profiler|execution_trace|thread]",
                                         "vectorized_elementwise_kernel",
                                         "aten::relu",
                                         "aten::sigmoid",
                                         "aten::tanh",
                                         "aten::zeros",
                                         "fill_kernel"};

Json link(const Json& host, const Json& device, tools::LinkReport* report = nullptr, tools::LinkOptions options = {}) {
  return Json::parse(tools::link_traces(host.dump(), "host.json", device.dump(), "kineto.json", options, report));
}
std::string link_error(const Json& host, const Json& device, tools::LinkOptions options = {}) {
  return error_of([&] { tools::link_traces(host.dump(), "host.json", device.dump(), "kineto.json", options); });
}

class TraceLink : public ::testing::Test {
 protected:
  void SetUp() override { out = link(scenario_host(), scenario_device(), &report); }
  const Json& node(std::size_t id) const { return out["nodes"].at(id); }
  Json out;
  tools::LinkReport report;
};

TEST_F(TraceLink, NewIdsInHostOrderEachHostOpFollowedByItsGpuOps) {
  ASSERT_EQ(out["nodes"].size(), kNames.size());
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    EXPECT_EQ(node(i)["id"], i);
    EXPECT_EQ(node(i)["name"], kNames[i]) << "node " << i;
  }
  EXPECT_EQ(out["schema"], "1.1.1-chakra.0.0.4");  // top-level keys kept, in order
  std::vector<std::string> keys;
  for (const auto& item : out.items()) keys.push_back(item.key());
  EXPECT_THAT(keys, ::testing::ElementsAre("schema", "pid", "time", "start_ts", "nodes", "finish_ts"));
}

TEST_F(TraceLink, CtrlDepsAreRemappedToNewIds) {
  // Host parents by new id; GPU ops point at their launcher; 99 is no node's id, so aten::zeros
  // points at a fresh id past every node.
  const std::vector<int> parents = {0,  0,  1, 1,  3,  4, 5, 4,  7,  7,  4, 10, 3,  12, 13, 14, 3,
                                    16, 17, 3, 19, 20, 3, 1, 23, 23, 25, 0, 27, 27, 27, 27, 34, 32};
  ASSERT_EQ(out["nodes"].size(), parents.size());
  for (std::size_t i = 0; i < parents.size(); ++i) EXPECT_EQ(node(i)["ctrl_deps"], parents[i]) << kNames[i];
}

TEST_F(TraceLink, HostOpsGetTheirKinetoTimes) {
  EXPECT_EQ(node(5)["ts"], 1020);
  EXPECT_EQ(node(5)["inclusive_dur"], 50);
  EXPECT_EQ(node(5)["exclusive_dur"], 50);
  EXPECT_EQ(node(5)["inputs"], io());  // the host fields stay as written
  std::vector<std::string> keys;
  for (const auto& item : node(5).items()) keys.push_back(item.key());
  EXPECT_THAT(keys, ::testing::ElementsAre("id", "name", "ctrl_deps", "inputs", "outputs", "attrs", "inclusive_dur",
                                           "exclusive_dur", "ts", "inter_thread_dep"));
  // ProfilerStep is not a CPU op, and process_group:init has no Kineto op: neither gets times.
  EXPECT_FALSE(node(3).contains("ts"));
  EXPECT_FALSE(node(2).contains("inclusive_dur"));
  EXPECT_THAT(report.warnings, ::testing::Contains(HasSubstr("2 host ops have an rf_id that no CPU op of the device "
                                                             "trace has")));
  EXPECT_EQ(report.host_nodes, 25u);
  EXPECT_EQ(report.linked_ops, 20u);
}

TEST_F(TraceLink, ExclusiveDurationsSubtractTheOpsNestedInside) {
  EXPECT_EQ(node(4)["exclusive_dur"], 200 - 50 - 60 - 40);  // forward: mm, cat (with empty inside), copy_
  EXPECT_EQ(node(7)["exclusive_dur"], 60 - 10);             // cat: empty
  EXPECT_EQ(node(9)["exclusive_dur"], 10);
  EXPECT_EQ(node(12)["exclusive_dur"], 100 - 80);  // allreduce_: record_param_comms
  EXPECT_EQ(node(13)["exclusive_dur"], 80 - 60);
  EXPECT_EQ(node(19)["exclusive_dur"], 400 - 390);  // runtime calls are not CPU ops
  EXPECT_EQ(node(23)["exclusive_dur"], 2000 - 10 - 100);
  EXPECT_EQ(node(23)["inclusive_dur"], 2000);
}

TEST_F(TraceLink, InterThreadDepsPointAtTheLatestOpOfAnotherThreadBeforeTheGroup) {
  for (int id : {4, 5, 7, 9, 10, 12, 14, 16, 19, 22}) EXPECT_TRUE(node(id)["inter_thread_dep"].is_null()) << kNames[id];
  EXPECT_EQ(node(29)["inter_thread_dep"], 22);  // relu, sigmoid: after aten::add_ (1900)
  EXPECT_EQ(node(30)["inter_thread_dep"], 22);
  EXPECT_EQ(node(31)["inter_thread_dep"], 24);  // idle 1460 µs, then tanh, zeros: after aten::t (3010)
  EXPECT_EQ(node(32)["inter_thread_dep"], 24);
  // Thread 100 idles 1080 µs before aten::linear: its group waits for sigmoid (a later host id).
  // addmm starts 1480 µs after aten::t ends but inside linear: same group, not a new one.
  for (int id : {23, 24, 25}) EXPECT_EQ(node(id)["inter_thread_dep"], 30) << kNames[id];
  EXPECT_EQ(report.inter_thread_deps, 7u);
}

TEST_F(TraceLink, GpuOpsCopyTheirLauncherWithKernelFields) {
  const Json& sgemm = node(6);
  EXPECT_EQ(sgemm["cat"], "kernel");
  EXPECT_EQ(sgemm["ph"], "X");
  EXPECT_EQ(sgemm["stream"], 7);
  EXPECT_EQ(sgemm["ts"], 1050);
  EXPECT_EQ(sgemm["inclusive_dur"], 30);
  EXPECT_EQ(sgemm["exclusive_dur"], 30);
  EXPECT_EQ(sgemm["attrs"], node(5)["attrs"]);
  EXPECT_FALSE(sgemm.contains("pg_name"));
  std::vector<std::string> keys;
  for (const auto& item : sgemm.items()) keys.push_back(item.key());
  EXPECT_THAT(keys, ::testing::ElementsAre("id", "name", "ctrl_deps", "inputs", "outputs", "attrs", "inclusive_dur",
                                           "exclusive_dur", "ts", "inter_thread_dep", "cat", "ph", "stream"));
  EXPECT_EQ(node(8)["stream"], 7);  // cuLaunchKernelEx
  EXPECT_EQ(node(11)["cat"], "gpu_memcpy");
  EXPECT_EQ(node(11)["stream"], 8);
  EXPECT_EQ(node(15)["pg_name"], "0");
  EXPECT_EQ(node(15)["stream"], 20);
  EXPECT_EQ(node(18)["pg_name"], "1");
  EXPECT_EQ(node(18)["stream"], 21);
  EXPECT_EQ(report.gpu_ops, 9u);
  EXPECT_THAT(report.warnings, ::testing::Contains(HasSubstr("1 GPU ops have no kernel launch")));
}

TEST_F(TraceLink, StreamSynchronizeMakesTheNextOpWaitForTheStreamsLastGpuOp) {
  // cudaStreamSynchronize names no stream: the thread's previous launch (Memcpy DtoH) was on 7.
  EXPECT_EQ(node(22)["sync_dep"], Json::array({21}));
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (i != 22) {
      EXPECT_FALSE(node(i).contains("sync_dep")) << kNames[i];
    }
  }
  EXPECT_EQ(report.sync_deps, 1u);
}

TEST_F(TraceLink, ProcessAndThreadAnnotationsGetTheirSpans) {
  EXPECT_EQ(node(0)["ts"], 1000);  // every complete event: ProfilerStep starts, sgemm_128 ends at 5090
  EXPECT_EQ(node(0)["inclusive_dur"], 4090);
  EXPECT_EQ(node(0)["exclusive_dur"], 0);
  EXPECT_TRUE(node(0)["inter_thread_dep"].is_null());
  EXPECT_EQ(node(1)["ts"], 1000);  // thread 100's CPU-side events
  EXPECT_EQ(node(1)["inclusive_dur"], 4000);
  EXPECT_EQ(node(1)["exclusive_dur"], 0);
  EXPECT_EQ(node(27)["ts"], 2500);  // thread 200: relu to the last launch's end
  EXPECT_EQ(node(27)["inclusive_dur"], 1704);
  // The launch outside every op hangs under its thread's node.
  EXPECT_EQ(node(28)["ctrl_deps"], 27);
  EXPECT_EQ(node(28)["stream"], 8);
}

TEST_F(TraceLink, OpsUnreachableFromTheRootAreLinkedToo) {
  EXPECT_EQ(node(32)["ts"], 4100);
  EXPECT_EQ(node(32)["exclusive_dur"], 20);
  EXPECT_EQ(node(33)["name"], "fill_kernel");
  EXPECT_EQ(node(33)["ctrl_deps"], 32);
}

TEST(TraceLinkLayout, WritesWhatPythonJsonDumpIndent4Writes) {
  const Json host = host_trace(Json::array({host_node(1, "aten::relu", 0, 7)}));
  const Json device = kineto(Json::array(
      {cpu("aten::relu", 10, 5, 7, 1), launch("cudaLaunchKernel", 11, 1, 1, 5), gpu("relu_kernel", 20, 2, 5, 1, 7)}));
  Json h = host;
  h["nodes"][0]["attrs"] = Json::array({attr("rf_id", "uint64", 7)});
  h["nodes"][0]["outputs"] = Json{{"values", Json::array()}};
  const std::string text = tools::link_traces(h.dump(), "h", device.dump(), "d", {});
  const auto fields = [](const char* name, int parent) {
    return fmt::format("            \"name\": \"{}\",\n            \"ctrl_deps\": {},\n"
                       "            \"inputs\": {{\n                \"values\": [],\n                \"shapes\": [],\n "
                       "               \"types\": []\n            }},\n"
                       "            \"outputs\": {{\n                \"values\": []\n            }},\n"
                       "            \"attrs\": [\n                {{\n                    \"name\": \"rf_id\",\n"
                       "                    \"type\": \"uint64\",\n                    \"value\": 7\n                "
                       "}}\n            ],\n",
                       name, parent);
  };
  const std::string expected =
      "{\n    \"schema\": \"1.1.1-chakra.0.0.4\",\n    \"pid\": 4242,\n    \"time\": \"2025-01-01 00:00:00\",\n"
      "    \"start_ts\": 1,\n    \"nodes\": [\n        {\n            \"id\": 0,\n" +
      fields("aten::relu", 2) +
      "            \"inclusive_dur\": 5,\n            \"exclusive_dur\": 5,\n            \"ts\": 10,\n"
      "            \"inter_thread_dep\": null\n        },\n        {\n            \"id\": 1,\n" +
      fields("relu_kernel", 0) +
      "            \"inclusive_dur\": 2,\n            \"exclusive_dur\": 2,\n            \"ts\": 20,\n"
      "            \"inter_thread_dep\": null,\n            \"cat\": \"kernel\",\n            \"ph\": \"X\",\n"
      "            \"stream\": 7\n        }\n    ],\n    \"finish_ts\": 9\n}";
  EXPECT_EQ(text, expected);  // parent 0 is no node's: fresh id 2
}

// One thread: c10d::allreduce_coalesced [0, 100) > nccl:coalesced [10, 90), inside which the NCCL
// kernel and a copy kernel are launched with the coalesced op's External id.
TEST(TraceLinkParents, NcclKernelsSkipNcclCoalesced) {
  const Json host =
      host_trace(Json::array({host_node(1, "c10d::allreduce_coalesced", 0, 1), host_node(2, "nccl:coalesced", 1, 2)}));
  const Json device =
      kineto(Json::array({cpu("c10d::allreduce_coalesced", 0, 100, 1, 1), cpu("nccl:coalesced", 10, 80, 2, 2),
                          launch("cudaLaunchKernel", 20, 5, 2, 7), gpu(kAllReduce, 30, 50, 7, 2, 20),
                          launch("cudaLaunchKernel", 40, 5, 2, 8), gpu("copy_kernel", 50, 5, 8, 2, 7)}));
  Json written_oddly = device;  // Kineto has written ids as strings, and a group name as a number
  written_oddly["traceEvents"][2]["args"]["External id"] = "2";
  written_oddly["traceEvents"][3]["args"]["Process Group Name"] = 5;
  const Json out = link(host, written_oddly);
  ASSERT_EQ(out["nodes"].size(), 4u);
  EXPECT_EQ(out["nodes"][1]["name"], kAllReduce);  // under allreduce_coalesced (new id 0)
  EXPECT_EQ(out["nodes"][1]["ctrl_deps"], 0);
  EXPECT_EQ(out["nodes"][1]["pg_name"], "5");
  EXPECT_EQ(out["nodes"][3]["name"], "copy_kernel");  // under nccl:coalesced (new id 2)
  EXPECT_EQ(out["nodes"][3]["ctrl_deps"], 2);
}

// aten::outer [0, 100) holds aten::early [10, 20) and aten::inner [50, 80). A launch without
// External id at 60 goes to the innermost op around it (inner), not to the latest op that started
// (early); one at 30 with early's External id goes to early (clocks can put a launch just past
// its op's end); one inside aten::not_in_host to its nearest enclosing op in the host trace
// (outer); one without External id at 200, the very µs aten::same starts, to aten::same. A
// launch on a thread with no host thread node and outside every op is dropped. Parent 0 is no
// node: both roots point at the one fresh id 8.
TEST(TraceLinkParents, ExternalIdFirstThenTheInnermostEnclosingHostOp) {
  const Json host = host_trace(Json::array({host_node(1, "aten::outer", 0, 1), host_node(2, "aten::early", 1, 2),
                                            host_node(3, "aten::inner", 1, 3), host_node(4, "aten::same", 0, 4)}));
  const auto no_external_id = [](Json e) {
    e["args"].erase("External id");
    return e;
  };
  const Json device = kineto(Json::array(
      {cpu("aten::outer", 0, 100, 1, 1), cpu("aten::early", 10, 10, 2, 2), cpu("aten::inner", 50, 30, 3, 3),
       launch("cudaLaunchKernel", 30, 1, 2, 12), gpu("k_early", 32, 1, 12, 2, 7),
       no_external_id(launch("cudaLaunchKernel", 60, 2, 0, 9)), no_external_id(gpu("k_inner", 65, 1, 9, 0, 7)),
       cpu("aten::not_in_host", 85, 10, 77, 4), launch("cudaLaunchKernel", 86, 2, 4, 10),
       gpu("k_outer", 90, 1, 10, 4, 7), cpu("aten::same", 200, 10, 4, 5),
       no_external_id(launch("cudaLaunchKernel", 200, 2, 0, 11)), no_external_id(gpu("k_same", 205, 1, 11, 0, 7)),
       launch("cudaLaunchKernel", 300, 2, 6, 13, 555), gpu("k_lost", 305, 1, 13, 6, 7)}));
  tools::LinkReport report;
  const Json out = link(host, device, &report);
  std::vector<std::pair<std::string, int>> name_parent;
  for (const Json& n : out["nodes"]) name_parent.emplace_back(n["name"], n["ctrl_deps"]);
  EXPECT_THAT(name_parent, ::testing::ElementsAre(::testing::Pair("aten::outer", 8), ::testing::Pair("k_outer", 0),
                                                  ::testing::Pair("aten::early", 0), ::testing::Pair("k_early", 2),
                                                  ::testing::Pair("aten::inner", 0), ::testing::Pair("k_inner", 4),
                                                  ::testing::Pair("aten::same", 8), ::testing::Pair("k_same", 6)));
  EXPECT_THAT(report.warnings, ::testing::ElementsAre(HasSubstr("1 GPU ops were launched outside every op of the host "
                                                                "trace; dropped")));
}

// cudaDeviceSynchronize waits for every stream; cudaStreamSynchronize with args.stream for that
// stream alone; a "cuda_sync" record names the stream of a call that does not.
TEST(TraceLinkSync, DeviceAndStreamSynchronize) {
  const Json host = host_trace(Json::array({host_node(1, "aten::a", 0, 1), host_node(2, "aten::b", 0, 2),
                                            host_node(3, "aten::c", 0, 3), host_node(4, "aten::d", 0, 4)}));
  Json stream_sync =
      event("cuda_runtime", "cudaStreamSynchronize", 50, 10, 4242, 100, {{"correlation", 20}, {"stream", 8}});
  Json event_sync = event("cuda_runtime", "cudaEventSynchronize", 80, 5, 4242, 100, {{"correlation", 21}});
  Json record = Json{{"ph", "X"},
                     {"cat", "cuda_sync"},
                     {"name", "Event Sync"},
                     {"pid", 0},
                     {"tid", 7},
                     {"ts", 81},
                     {"dur", 1},
                     {"args", {{"correlation", 21}, {"stream", 7}, {"cuda_sync_kind", "Event Sync"}}}};
  const Json device = kineto(
      Json::array({cpu("aten::a", 0, 20, 1, 1), launch("cudaLaunchKernel", 2, 1, 1, 10), gpu("ka7", 5, 100, 10, 1, 7),
                   launch("cudaLaunchKernel", 4, 1, 1, 11), gpu("ka8", 6, 100, 11, 1, 8),
                   event("cuda_runtime", "cudaDeviceSynchronize", 30, 10, 4242, 100, {{"correlation", 12}}),
                   cpu("aten::b", 45, 2, 2, 2), stream_sync, cpu("aten::c", 70, 2, 3, 3), event_sync, record,
                   cpu("aten::d", 90, 2, 4, 4)}));
  tools::LinkReport report;
  const Json out = link(host, device, &report);
  ASSERT_EQ(out["nodes"].size(), 6u);  // a(0) ka7(1) ka8(2) b(3) c(4) d(5)
  EXPECT_EQ(out["nodes"][3]["sync_dep"], Json::array({1, 2}));
  EXPECT_EQ(out["nodes"][4]["sync_dep"], Json::array({2}));
  EXPECT_EQ(out["nodes"][5]["sync_dep"], Json::array({1}));
  EXPECT_EQ(report.sync_deps, 4u);
}

// Fractional µs stay fractional; an op and an identical op nested in it give 0.1 + 0.2 - 0.1 >
// 0.2 in doubles: the exclusive duration reads 0, not a negative number (the reference fails).
TEST(TraceLinkTimes, FractionalTimesAndRounding) {
  const Json host = host_trace(Json::array({host_node(1, "aten::outer", 0, 1), host_node(2, "aten::inner", 1, 2)}));
  Json outer = cpu("aten::outer", 0, 0, 1, 1), inner = cpu("aten::inner", 0, 0, 2, 2);
  outer["ts"] = inner["ts"] = 0.1;
  outer["dur"] = inner["dur"] = 0.2;
  const Json out = link(host, kineto(Json::array({outer, inner})));
  EXPECT_EQ(out["nodes"][0]["ts"], 0.1);
  EXPECT_TRUE(out["nodes"][0]["inclusive_dur"].is_number_float());
  EXPECT_EQ(out["nodes"][0]["exclusive_dur"], 0.0);
  EXPECT_EQ(out["nodes"][1]["exclusive_dur"], 0.2);
}

TEST(TraceLinkErrors, BadInputNamesTheFileAndWhatWasExpected) {
  const Json host = scenario_host(), device = scenario_device();
  EXPECT_THAT(error_of([&] { tools::link_traces("{nodes", "host.json", device.dump(), "kineto.json", {}); }),
              HasSubstr("host.json: invalid JSON"));
  EXPECT_THAT(error_of([&] { tools::link_traces(host.dump(), "host.json", "[1, 2]", "kineto.json", {}); }),
              HasSubstr("kineto.json: the top level is array; expected a JSON object"));
  EXPECT_THAT(link_error(host, Json{{"events", Json::array()}}), HasSubstr("kineto.json: no \"traceEvents\""));
  EXPECT_THAT(link_error(host, Json{{"traceEvents", 3}}), HasSubstr("\"traceEvents\" is number; expected a list"));
  EXPECT_THAT(link_error(Json{{"pid", 4242}}, device), HasSubstr("host.json: no \"nodes\""));
  EXPECT_THAT(link_error(host, kineto(Json::array(
                                   {launch("cudaLaunchKernel", 1, 1, 1, 5), launch("cudaLaunchKernel", 3, 1, 1, 5)}))),
              HasSubstr("kineto.json: traceEvents[1] (\"cudaLaunchKernel\"): correlation 5 is also on traceEvents[0]"));
  Json uncorrelated = launch("cudaLaunchKernel", 1, 1, 1, 5);
  uncorrelated["args"].erase("correlation");
  EXPECT_THAT(link_error(host, kineto(Json::array({uncorrelated}))), HasSubstr("traceEvents[0] (\"cudaLaunchKernel\"): "
                                                                               "a kernel launch without "
                                                                               "args.correlation"));
  EXPECT_THAT(link_error(host, kineto(Json::array({cpu("aten::mm", 1, -5, 2, 3)}))), HasSubstr("traceEvents[0] "
                                                                                               "(\"aten::mm\"): "
                                                                                               "\"dur\" is -5; "
                                                                                               "expected a duration of "
                                                                                               "0 µs or more"));
  EXPECT_THAT(link_error(host, kineto(Json::array({cpu("aten::mm", 1, 5, 2, 3), cpu("aten::mm", 9, 5, 2, 4)}))),
              HasSubstr("Record function id 2 is also on traceEvents[0]"));
  Json no_ts = cpu("aten::mm", 1, 5, 2, 3);
  no_ts["ts"] = "soon";
  EXPECT_THAT(link_error(host, kineto(Json::array({no_ts}))), HasSubstr("\"ts\" is \"soon\"; expected a time in µs"));
  Json no_id = flow("s", 1, 1, 4242, 100);
  no_id.erase("id");
  EXPECT_THAT(link_error(host, kineto(Json::array({no_id}))), HasSubstr("traceEvents[0]: ac2g flow event without "
                                                                        "\"id\""));
  EXPECT_THAT(link_error(host, kineto(Json::array({flow("i", 1, 1, 4242, 100)}))), HasSubstr("traceEvents[0]: ac2g "
                                                                                             "flow event with ph "
                                                                                             "\"i\"; expected \"s\" or "
                                                                                             "\"f\""));
  Json no_dur = cpu("aten::mm", 1, 5, 2, 3);
  no_dur.erase("dur");
  EXPECT_THAT(link_error(host, kineto(Json::array({no_dur}))), HasSubstr("\"dur\" is missing; expected a duration in "
                                                                         "µs"));
  EXPECT_THAT(link_error(host, kineto(Json::array({7}))), HasSubstr("traceEvents[0] is number; expected an event "
                                                                    "object"));
  Json bad_args = cpu("aten::mm", 1, 5, 2, 3);
  bad_args["args"]["correlation"] = Json::array({1});
  EXPECT_THAT(link_error(host, kineto(Json::array({bad_args}))), HasSubstr("args: \"correlation\" is [1]; expected an "
                                                                           "integer"));
  Json dup = scenario_host();
  dup["nodes"].push_back(host_node(7, "aten::again", 2, 99));
  EXPECT_THAT(link_error(dup, device), HasSubstr("host.json: nodes[5] and nodes[25] both have id 7"));
  Json same_rf = scenario_host();
  same_rf["nodes"].push_back(host_node(41, "aten::again", 2, 2));
  EXPECT_THAT(link_error(same_rf, device), HasSubstr("nodes[3] (id 6) and nodes[25] (id 41) have the same rf_id 2"));
  Json bad_parent = scenario_host();
  bad_parent["nodes"][0]["ctrl_deps"] = Json::array({1});
  EXPECT_THAT(link_error(bad_parent, device), HasSubstr("nodes[0] (id 2): \"ctrl_deps\" is [1]; expected an integer"));
}

TEST(TraceLinkErrors, TracesOfAnotherRankOrProcess) {
  tools::LinkOptions rank1;
  rank1.rank = 1;
  EXPECT_THAT(link_error(scenario_host(), scenario_device(), rank1), HasSubstr("kineto.json: distributedInfo.rank is 0 "
                                                                               "but --rank is 1; expected the device "
                                                                               "trace of rank 1"));
  tools::LinkOptions rank0;
  rank0.rank = 0;
  EXPECT_NO_THROW(link(scenario_host(), scenario_device(), nullptr, rank0));
  Json other = scenario_host();
  other["pid"] = 5353;
  EXPECT_THAT(link_error(other, scenario_device()), HasSubstr("kineto.json: CPU ops ran in process 4242 "
                                                              "(traceEvents[1]) but the host trace host.json is of "
                                                              "process 5353"));
}

TEST(TraceLinkCli, LinksFilesAndFailsWell) {
  const auto dir = temp_dir("trace_link_cli");
  std::ofstream(dir / "host.json") << scenario_host().dump();
  std::ofstream(dir / "kineto.json") << scenario_device().dump();
  const std::string out = (dir / "et_plus.json").string();
  CommandResult r = run_binary({"chakra", "link", "--host", (dir / "host.json").string(), "--device",
                                (dir / "kineto.json").string(), "--out", out, "--rank", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("25 host nodes (20 linked to the device trace), 9 GPU ops, 7 inter-thread and 1 sync "
                               "dependencies"));
  EXPECT_THAT(r.err, HasSubstr("warning: 1 GPU ops have no kernel launch"));
  std::ifstream written(out);
  EXPECT_EQ(Json::parse(written)["nodes"].size(), kNames.size());

  r = run_binary({"chakra", "link", "--host", (dir / "missing.json").string(), "--device",
                  (dir / "kineto.json").string(), "--out", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("missing.json: cannot open the host execution trace"));
  r = run_binary({"chakra", "link", "--host", (dir / "kineto.json").string(), "--device", (dir / "host.json").string(),
                  "--out", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("no \"traceEvents\""));
  r = run_binary({"chakra", "link", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("Example:\n  chakrasim chakra link --host host_et.0.json --device kineto.0.json --out "
                               "et_plus.0.json"));
}

// The real host trace (263 nodes, listed children before parents, annotations with rf_id 0)
// with a hand-written Kineto trace for its first all-gather: record_param_comms (rf_id 19) >
// nccl:all_gather (rf_id 20) launching the NCCL kernel.
TEST(TraceLinkReference, RealHostTraceKeepsEveryNodeInIdOrder) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto dir = temp_dir("trace_link_reference");
  ASSERT_EQ(std::system(("tar xzf '" + (ref / "chakra-tests" / "1.0.2-chakra.0.0.4.tgz").string() + "' -C '" +
                         dir.string() + "' 1.0.2-chakra.0.0.4.json 2>/dev/null")
                            .c_str()),
            0);
  std::ifstream in(dir / "1.0.2-chakra.0.0.4.json");
  const Json host = Json::parse(in);
  Json device = kineto(Json::array(
      {cpu("record_param_comms", 100, 50, 19, 1), cpu("nccl:all_gather", 110, 30, 20, 2),
       launch("cudaLaunchKernel", 120, 5, 2, 3),
       gpu("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 130, 40, 3, 2, 20, "kernel", "0")}));
  for (Json& e : device["traceEvents"]) e["pid"] = e["pid"] == 0 ? 0 : 788625;
  const Json out = link(host, device);
  const Json& nodes = out["nodes"];
  ASSERT_EQ(nodes.size(), 264u);
  std::vector<std::int64_t> old_ids;
  for (const Json& n : host["nodes"]) old_ids.push_back(n["id"]);
  std::sort(old_ids.begin(), old_ids.end());
  EXPECT_EQ(nodes[0]["name"], "[pytorch|profiler|execution_trace|process]");
  EXPECT_EQ(nodes[0]["ctrl_deps"], 0);  // its own parent, as written
  const auto at = [&](std::int64_t old_id) {
    return std::lower_bound(old_ids.begin(), old_ids.end(), old_id) - old_ids.begin();
  };
  const auto record = at(30), all_gather = at(31);  // old ids of record_param_comms and nccl:all_gather
  EXPECT_EQ(nodes[static_cast<std::size_t>(record)]["exclusive_dur"], 20);
  EXPECT_EQ(nodes[static_cast<std::size_t>(all_gather)]["ctrl_deps"], record);
  const Json& kernel = nodes[static_cast<std::size_t>(all_gather + 1)];
  EXPECT_EQ(kernel["ctrl_deps"], all_gather);
  EXPECT_EQ(kernel["pg_name"], "0");
  EXPECT_EQ(nodes[static_cast<std::size_t>(all_gather + 2)]["id"], all_gather + 2);
}

}  // namespace
}  // namespace chakrasim::test
