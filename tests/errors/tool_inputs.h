// Valid inputs for the tools (text workload, PyTorch host trace, Kineto device trace, MSCCL-IR
// XML, a Chakra ET and its JSON), which the tool catalogues break one thing at a time, and the
// check that runs one tool case: exit code, "error: " and every needle on stderr.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chakra/et_file.h"
#include "chakra/trace_builder.h"
#include "support/test_support.h"

namespace chakrasim::test::errors {

namespace tool_fs = std::filesystem;
using OrderedJson = nlohmann::ordered_json;

inline const char* const kTextWorkload = "DATA\n2\nL0 -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 8 1\n"
                                         "L1 -1 20 NONE 0 21 NONE 0 22 ALLGATHER 300 1\n";

// Two GPUs exchanging a chunk each way; GPU 1's second block sends after its first block's rrc.
inline const char* const kMscclXml =
    R"(<algo name="t" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="0" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="0" deps="1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";

inline OrderedJson host_op(std::int64_t id, const std::string& name, std::int64_t caller, std::int64_t rf_id,
                           std::int64_t tid = 1) {
  auto attr = [](const char* n, const char* type, OrderedJson v) {
    return OrderedJson{{"name", n}, {"type", type}, {"value", std::move(v)}};
  };
  const OrderedJson io{{"values", OrderedJson::array()},
                       {"shapes", OrderedJson::array()},
                       {"types", OrderedJson::array()}};
  return OrderedJson{{"id", id},
                     {"name", name},
                     {"ctrl_deps", caller},
                     {"inputs", io},
                     {"outputs", io},
                     {"attrs", OrderedJson::array({attr("rf_id", "uint64", rf_id), attr("fw_parent", "uint64", 0),
                                                   attr("seq_id", "int64", -1), attr("scope", "uint64", 0),
                                                   attr("tid", "uint64", tid), attr("fw_tid", "uint64", 0),
                                                   attr("op_schema", "string", "")})}};
}

// A PyTorch host execution trace: the process and thread roots and three ops on the thread.
inline OrderedJson host_trace() {
  return OrderedJson{{"schema", "1.1.1-chakra.0.0.4"},
                     {"pid", 4242},
                     {"time", "t"},
                     {"start_ts", 0},
                     {"finish_ts", 0},
                     {"nodes", OrderedJson::array({host_op(1, "[pytorch|profiler|execution_trace|process]", 1, 0, 0),
                                                   host_op(2, "[pytorch|profiler|execution_trace|thread]", 1, 0),
                                                   host_op(3, "aten::mm", 2, 5), host_op(4, "aten::relu", 2, 6),
                                                   host_op(5, "aten::add", 2, 7)})}};
}

inline OrderedJson device_event(const char* cat, const std::string& name, double ts, double dur, std::int64_t pid,
                                std::int64_t tid, OrderedJson args) {
  return OrderedJson{{"ph", "X"},  {"cat", cat}, {"name", name}, {"pid", pid},
                     {"tid", tid}, {"ts", ts},   {"dur", dur},   {"args", std::move(args)}};
}

// The Kineto device trace of host_trace(): aten::mm launches a kernel.
inline OrderedJson device_trace() {
  return OrderedJson{{"schemaVersion", 1},
                     {"traceEvents",
                      OrderedJson::array(
                          {device_event("user_annotation", "ProfilerStep#0", 1000, 1000, 4242, 100,
                                        {{"External id", 1}, {"Record function id", 1}}),
                           device_event("cpu_op", "aten::mm", 1020, 50, 4242, 100,
                                        {{"External id", 2}, {"Record function id", 5}}),
                           device_event("cuda_runtime", "cudaLaunchKernel", 1030, 5, 4242, 100,
                                        {{"External id", 2}, {"correlation", 10}}),
                           device_event("kernel", "sgemm_64", 1100, 40, 0, 7,
                                        {{"External id", 2}, {"device", 0}, {"stream", 7}, {"correlation", 10}}),
                           device_event("cpu_op", "aten::relu", 1200, 10, 4242, 100,
                                        {{"External id", 3}, {"Record function id", 6}}),
                           device_event("cpu_op", "aten::add", 1300, 10, 4242, 100,
                                        {{"External id", 4}, {"Record function id", 7}})})}};
}

inline chakra::Trace small_trace() {
  chakra::TraceBuilder b;
  b.comp("fwd", 10);
  b.collective("grad_sync", chakra::CommType::kAllReduce, 1 << 20, {0});
  return b.trace();
}

inline void write_file(const tool_fs::path& path, const std::string& text) { write_bytes(path, text); }

inline void fifo_at(const tool_fs::path& path) {
  tool_fs::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
}

// `depth` nested arrays around 1.
inline std::string nested_json(std::size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

struct ToolCase {
  std::string name;
  // Writes the case's inputs into `dir` and returns the command line.
  std::function<std::vector<std::string>(const tool_fs::path& dir)> setup;
  int exit_code;
  std::vector<std::string> needles;  // "{dir}" becomes the case's folder
};

inline std::ostream& operator<<(std::ostream& os, const ToolCase& c) { return os << c.name; }

inline void check_tool_case(const ToolCase& c, const std::string& suite) {
  const tool_fs::path dir = temp_dir(suite + "_" + c.name);
  const std::vector<std::string> args = c.setup(dir);
  const CommandResult r = run_binary(args);
  EXPECT_EQ(r.exit_code, c.exit_code) << "stderr:\n" << r.err << "stdout:\n" << r.out;
  EXPECT_THAT(r.err, ::testing::HasSubstr("error: ")) << "stdout:\n" << r.out;
  for (std::string needle : c.needles) {
    for (std::size_t at = needle.find("{dir}"); at != std::string::npos; at = needle.find("{dir}"))
      needle.replace(at, 5, dir.string());
    EXPECT_THAT(r.err, ::testing::HasSubstr(needle));
  }
}

}  // namespace chakrasim::test::errors
