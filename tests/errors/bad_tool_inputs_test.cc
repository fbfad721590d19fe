// The bad-input catalogue, second round, for the tools (chakra convert, link, msccl, inspect and
// generate): each case breaks one thing of a valid input (tests/errors/tool_inputs.h) and checks
// the exit code and the message. The valid inputs run cleanly (ToolBaselines).
#include <cstdint>

#include "errors/tool_inputs.h"

namespace chakrasim::test::errors {
namespace {

using Dir = tool_fs::path;
using Args = std::vector<std::string>;

// MSCCL: the valid XML with `from` replaced by `to` (once).
std::function<Args(const Dir&)> msccl_with(const std::string& from, const std::string& to) {
  return [from, to](const Dir& dir) {
    std::string xml = kMscclXml;
    const std::size_t at = xml.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) xml.replace(at, from.size(), to);
    write_file(dir / "algo.xml", xml);
    return Args{"chakra", "msccl", (dir / "algo.xml").string(), "--coll-size", "1MiB", "--out", (dir / "out").string()};
  };
}

// convert pytorch on the host trace after `edit`.
std::function<Args(const Dir&)> pytorch_with(const std::function<void(OrderedJson&)>& edit) {
  return [edit](const Dir& dir) {
    OrderedJson host = host_trace();
    edit(host);
    write_file(dir / "host.json", host.dump());
    return Args{"chakra", "convert", "pytorch", (dir / "host.json").string(), "--out", (dir / "out.et").string()};
  };
}

// link on the two traces after `edit` of the device trace.
std::function<Args(const Dir&)> link_with(const std::function<void(OrderedJson&)>& edit) {
  return [edit](const Dir& dir) {
    OrderedJson device = device_trace();
    edit(device);
    write_file(dir / "host.json", host_trace().dump());
    write_file(dir / "device.json", device.dump());
    return Args{"chakra",   "link",
                "--host",   (dir / "host.json").string(),
                "--device", (dir / "device.json").string(),
                "--out",    (dir / "linked.json").string()};
  };
}

Args convert_text(const Dir& dir, std::vector<std::string> flags) {
  write_file(dir / "w.txt", kTextWorkload);
  Args a{"chakra", "convert", "text", (dir / "w.txt").string()};
  a.insert(a.end(), flags.begin(), flags.end());
  return a;
}

// The kernel event (traceEvents[3]) with a "dur" given as raw JSON text.
std::function<Args(const Dir&)> kernel_dur(const std::string& raw) {
  return link_with([raw](OrderedJson& d) { d["traceEvents"][3]["dur"] = OrderedJson::parse(raw); });
}

std::vector<ToolCase> catalogue() {
  std::vector<ToolCase> c;
  // ---- chakra msccl: invalid traces written with exit 0 ------------------------------------
  c.push_back({"MscclGpuIdNegative",
               msccl_with("gpu id=\"1\"", "gpu id=\"-5\""),
               1,
               {"algo.xml: <gpu id=\"-5\">: expected an id from 0 to 1 (ngpus=\"2\")"}});
  c.push_back({"MscclGpuIdBeyondNgpus",
               msccl_with("ngpus=\"2\"", "ngpus=\"1\""),
               1,
               {"algo.xml: gpu 0 tb 0: send=\"1\"; expected -1 or another GPU's id, 0 to 0 (ngpus=\"1\")"}});
  c.push_back({"MscclGpuIdEqualToNgpus",
               msccl_with("gpu id=\"1\"", "gpu id=\"2\""),
               1,
               {"algo.xml: <gpu id=\"2\">: expected an id from 0 to 1 (ngpus=\"2\")"}});
  c.push_back({"MscclGpuTwice",
               [](const Dir& dir) {
                 std::string xml = kMscclXml;
                 const std::size_t first = xml.find("<gpu id=\"0\"");
                 const std::size_t end = xml.find("</gpu>", first) + 6;
                 xml.insert(end, "\n" + xml.substr(first, end - first));
                 write_file(dir / "algo.xml", xml);
                 return Args{"chakra", "msccl", (dir / "algo.xml").string(), "--coll-size",
                             "1MiB",   "--out", (dir / "out").string()};
               },
               1,
               {"algo.xml: <gpu id=\"0\"> appears twice; expected each GPU once"}});
  c.push_back({"MscclCountNegative",
               msccl_with("cnt=\"1\"", "cnt=\"-1\""),
               1,
               {"algo.xml: gpu 0 tb 0 step 0: cnt \"-1\"; expected a chunk count of 0 or more"}});
  c.push_back({"MscclStepDependsOnItself",
               msccl_with("depid=\"0\" deps=\"1\"", "depid=\"1\" deps=\"0\""),
               1,
               {"algo.xml: gpu 1 tb 1 step 0: depends on itself"}});
  c.push_back({"MscclDependencyCycle",
               [](const Dir& dir) {
                 // GPU 1: tb 0 step 0 waits on tb 1 step 0, which waits on tb 0 step 1, after step 0.
                 std::string xml = kMscclXml;
                 const std::size_t gpu1 = xml.find("<gpu id=\"1\"");
                 const std::string none = "depid=\"-1\" deps=\"-1\"";
                 xml.replace(xml.find(none, gpu1), none.size(), "depid=\"1\" deps=\"0\"");
                 write_file(dir / "algo.xml", xml);
                 return Args{"chakra", "msccl", (dir / "algo.xml").string(), "--coll-size",
                             "1MiB",   "--out", (dir / "out").string()};
               },
               1,
               {"algo.xml: gpu 1: dependency cycle of 4 nodes", "COMM_SEND_NODE_tb1_step0", "a trace must be a DAG"}});
  c.push_back({"MscclSendPeerBeyondNgpus",
               msccl_with("send=\"1\"", "send=\"99\""),
               1,
               {"algo.xml: gpu 0 tb 0: send=\"99\"; expected -1 or another GPU's id, 0 to 1"}});
  c.push_back({"MscclSendInABlockWithoutPeer",
               msccl_with("send=\"0\" recv=\"-1\"", "send=\"-1\" recv=\"-1\""),
               1,
               {"algo.xml: gpu 1 tb 1 step 0: a send in a thread block with send=\"-1\""}});
  c.push_back({"MscclCollSizeNegative",
               [](const Dir& dir) {
                 write_file(dir / "algo.xml", kMscclXml);
                 return Args{"chakra", "msccl", (dir / "algo.xml").string(), "--coll-size",
                             "-5",     "--out", (dir / "out").string()};
               },
               1,
               {"--coll-size: \"-5\" is not a size"}});

  // ---- chakra convert pytorch: callers that never lead to a root ---------------------------
  c.push_back({"PytorchCallerCycle",
               pytorch_with([](OrderedJson& h) {
                 h["nodes"][3]["ctrl_deps"] = 5;  // relu called by add,
                 h["nodes"][4]["ctrl_deps"] = 4;  // add by relu
               }),
               1,
               {"host.json", "its callers (ctrl_deps) loop, a call cycle of 2 nodes", "aten::relu", "aten::add"}});
  c.push_back({"PytorchSelfCaller",
               pytorch_with([](OrderedJson& h) { h["nodes"][2]["ctrl_deps"] = 3; }),
               1,
               {"host.json", "node 3 (\"aten::mm\")", "ctrl_deps names the node itself"}});

  // ---- chakra link: times beyond 2^53 µs -----------------------------------------------------
  c.push_back({"LinkKernelDurationMaxUint64",
               kernel_dur("18446744073709551615"),
               1,
               {"device.json", "\"dur\" is 18446744073709551615; expected a duration in µs, at most 2^53"}});
  c.push_back(
      {"LinkKernelDuration1e300", kernel_dur("1e300"), 1, {"device.json", "\"dur\" is 1e+300", "at most 2^53"}});
  c.push_back(
      {"LinkKernelDurationNegative", kernel_dur("-4"), 1, {"device.json", "expected a duration of 0 µs or more"}});
  c.push_back({"LinkCpuOpStart1e300",
               link_with([](OrderedJson& d) { d["traceEvents"][1]["ts"] = 1e300; }),
               1,
               {"device.json", "\"ts\" is 1e+300; expected a time in µs, at most 2^53 in magnitude"}});

  // ---- deeply nested JSON in the tools' inputs ----------------------------------------------
  c.push_back(
      {"PytorchDeepJson",
       [](const Dir& dir) {
         write_file(dir / "host.json", "{\"nodes\": " + nested_json(100000) + "}");
         return Args{"chakra", "convert", "pytorch", (dir / "host.json").string(), "--out", (dir / "out.et").string()};
       },
       1,
       {"{dir}/host.json", "nest more than 256 levels deep"}});
  c.push_back({"KinetoDeepJson",
               [](const Dir& dir) {
                 write_file(dir / "host.json", host_trace().dump());
                 write_file(dir / "device.json", "{\"traceEvents\": " + nested_json(100000) + "}");
                 return Args{"chakra",   "link",
                             "--host",   (dir / "host.json").string(),
                             "--device", (dir / "device.json").string(),
                             "--out",    (dir / "linked.json").string()};
               },
               1,
               {"{dir}/device.json", "nest more than 256 levels deep"}});

  // ---- early size checks ------------------------------------------------------------------
  c.push_back(
      {"ConvertTextBillionNpus",
       [](const Dir& dir) {
         return convert_text(dir, {"--npus", "1000000000", "--passes", "1", "--out", (dir / "out" / "w").string()});
       },
       1,
       {"--npus 1000000000: one trace file per NPU would write", "; expected"}});
  c.push_back({"ConvertTextModelParallelGroupZero",
               [](const Dir& dir) {
                 return convert_text(dir, {"--npus", "8", "--passes", "1", "--out", (dir / "w").string(),
                                           "--model-parallel-group", "0"});
               },
               1,
               {"--model-parallel-group is 0; expected at least 1 NPU (leave the flag out for the default)"}});
  c.push_back({"ConvertTextEmptyOut",
               [](const Dir& dir) {
                 return convert_text(dir, {"--npus", "8", "--passes", "1", "--out", ""});
               },
               1,
               // Every option refuses an empty value before the command runs (cli/app.cc).
               {"--out: the value is empty; expected one"}});
  c.push_back(
      {"GenerateMicroNpusBeyondMemory",
       [](const Dir& dir) { return Args{"generate", "micro", "--npus", "2147483647", "--out", (dir / "m").string()}; },
       1,
       {"--npus 2147483647: 15 families of 2147483647 traces would need about", "of memory"}});
  c.push_back({"GenerateMicroNpusNegative",
               [](const Dir& dir) { return Args{"generate", "micro", "--npus", "-1", "--out", (dir / "m").string()}; },
               1,
               {"--npus is -1; expected at least 1 NPU"}});
  // Every unsigned flag: "-1" is refused as -1, not read as 2^64-1.
  c.push_back({"GenerateLlmDpNegative",
               [](const Dir& dir) {
                 return Args{"generate", "llm", "--model", "gpt3-175b", "--dp", "-1", "--out", (dir / "g").string()};
               },
               1,
               {"--dp: value -1 is invalid; expected 0 or more"}});
  c.push_back({"MicroRuntimeNegative",
               [](const Dir& dir) {
                 return Args{"generate", "micro", "--npus", "2", "--runtime", "-3", "--out", (dir / "m").string()};
               },
               1,
               {"--runtime: value -3 is invalid; expected 0 or more"}});
  // Usage errors exit 1 with "error:", as every other error (CLI11's own codes were 104 to 109).
  c.push_back({"UnknownFlagExitsOne",
               [](const Dir& dir) {
                 return Args{"chakra", "inspect", (dir / "t").string(), "--colour"};
               },
               1,
               {"--colour"}});
  c.push_back({"MissingRequiredFlagExitsOne",
               [](const Dir&) {
                 return Args{"chakra", "msccl", "algo.xml"};
               },
               1,
               {"--out is required"}});
  return c;
}

class BadToolInput : public ::testing::TestWithParam<ToolCase> {};

TEST_P(BadToolInput, ExitsNonZeroAndSaysWhy) { check_tool_case(GetParam(), "tool_errors"); }

INSTANTIATE_TEST_SUITE_P(Catalogue, BadToolInput, ::testing::ValuesIn(catalogue()),
                         [](const ::testing::TestParamInfo<ToolCase>& param_info) { return param_info.param.name; });

// ---- the valid inputs work, so each case above fails for what it breaks ------------------------

TEST(ToolBaselines, EveryValidInputConverts) {
  const Dir dir = temp_dir("tool_baselines");
  write_file(dir / "algo.xml", kMscclXml);
  EXPECT_EQ(run_binary({"chakra", "msccl", (dir / "algo.xml").string(), "--coll-size", "1MiB", "--out",
                        (dir / "algo").string()})
                .exit_code,
            0);
  write_file(dir / "host.json", host_trace().dump());
  write_file(dir / "device.json", device_trace().dump());
  const CommandResult link = run_binary({"chakra", "link", "--host", (dir / "host.json").string(), "--device",
                                         (dir / "device.json").string(), "--out", (dir / "linked.json").string()});
  EXPECT_EQ(link.exit_code, 0) << link.err;
  const CommandResult convert = run_binary(
      {"chakra", "convert", "pytorch", (dir / "linked.json").string(), "--out", (dir / "linked.et").string()});
  EXPECT_EQ(convert.exit_code, 0) << convert.err;
  const CommandResult host =
      run_binary({"chakra", "convert", "pytorch", (dir / "host.json").string(), "--out", (dir / "host.et").string()});
  EXPECT_EQ(host.exit_code, 0) << host.err;
  EXPECT_THAT(host.out, ::testing::HasSubstr("4 nodes"));  // the thread root and its three ops
  write_file(dir / "w.txt", kTextWorkload);
  EXPECT_EQ(run_binary({"chakra", "convert", "text", (dir / "w.txt").string(), "--npus", "4", "--passes", "1", "--out",
                        (dir / "w").string()})
                .exit_code,
            0);
}

// One node with 100,000 parents: inspect finds repeats with a hash set, not a scan per parent
// (1e6 parents took 55 s; bench/ measures it). The repeat is still reported.
TEST(ToolBaselines, InspectTakesANodeWithManyParents) {
  const Dir dir = temp_dir("tool_many_parents");
  chakra::TraceBuilder b;
  std::vector<std::uint64_t> parents;
  for (int i = 0; i < 100000; ++i) parents.push_back(b.comp("p", 1).id());
  chakra::Trace t = b.trace();
  chakra::Node& sink = t.nodes.emplace_back();
  sink.set_id(100000);
  sink.set_name("sink");
  sink.set_type(ChakraProtoMsg::COMP_NODE);
  for (std::uint64_t p : parents) sink.add_data_deps(p);
  sink.add_data_deps(parents[7]);
  chakra::write_trace((dir / "t.0.et").string(), t);
  const CommandResult r = run_binary({"chakra", "inspect", (dir / "t.0.et").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("lists data dependency 7 twice"));
}

}  // namespace
}  // namespace chakrasim::test::errors
