// The Chakra tools end to end, through the chakrasim binary, on both ranks of kineto_samples.h:
// `chakra link` (host ET + Kineto -> ET+) -> `chakra convert pytorch` (ET+ -> .et) -> `run`, and
// `chakra jsonize` -> `dejsonize` -> `inspect` on what the converter wrote.
#include <cmath>
#include <fstream>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chakra/et_file.h"
#include "support/test_support.h"
#include "tools/link/kineto_samples.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

// Links and converts both ranks into `dir`: compat.R.et without options, fixed.R.et with
// --fix-defects. Fails the test on any tool error.
void link_and_convert(const std::filesystem::path& dir) {
  for (int rank : {0, 1}) {
    const std::string r = std::to_string(rank);
    std::ofstream(dir / ("host." + r + ".json")) << kineto_samples::scenario_host(rank).dump();
    std::ofstream(dir / ("kineto." + r + ".json")) << kineto_samples::scenario_device(rank).dump();
    const std::string et_plus = (dir / ("et_plus." + r + ".json")).string();
    CommandResult c = run_binary({"chakra", "link", "--host", (dir / ("host." + r + ".json")).string(), "--device",
                                  (dir / ("kineto." + r + ".json")).string(), "--out", et_plus, "--rank", r});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_THAT(c.out, HasSubstr("25 host nodes (20 linked to the device trace), 9 GPU ops, 7 inter-thread and 1 sync "
                                 "dependencies"));
    for (const char* form : {"compat", "fixed"}) {
      std::vector<std::string> convert = {"chakra", "convert", "pytorch",
                                          et_plus,  "--out",   chakra::rank_path((dir / form).string(), rank)};
      if (std::string(form) == "fixed") convert.push_back("--fix-defects");
      c = run_binary(convert);
      ASSERT_EQ(c.exit_code, 0) << c.err;
      EXPECT_THAT(c.out, HasSubstr(": 33 nodes"));
    }
  }
}

// Both ranks on a 2-NPU ring (50 GB/s = 53.687 B/ns, 500 ns), ring all-reduce, one split,
// endpoint delay 10 ns, local-mem-bw 50. Each converted rank is 33 nodes (the process node 0 is
// dropped as dangling); durations are the linked exclusive µs, 1 ns where 0. One CPU and one GPU
// slot, lowest ready id first. Times in ns:
//   CPU  thread 1, ProfilerStep 3: 1 ns each (2 is METADATA, no time); forward 4, mm 5, cat 7,
//        empty 9, copy_ 10, allreduce_ 12, record_param_comms 13, nccl:all_reduce 14 end at 300002;
//        nccl:send/recv 16, record_param_comms 17, item 19, _local_scalar_dense 20 end at 730002;
//        thread 27 takes the free CPU while add_ 22 waits for Memcpy DtoH 21 (GPU, to 734002);
//        add_ to 754002, relu 29, sigmoid 30 (inter-thread deps on add_), linear 23 (waits for
//        sigmoid) 1890 µs to 2674002, t 24, addmm 25 to 2784002, tanh 31, zeros 32 to 2814002.
//   GPU  sgemm_128 26 runs 2784002..2884002, so fill_kernel 33 (ready at 2814002) runs
//        2884002..2887002: both ranks finish at 2,887,002.
//   comm all-reduce of 1 MiB at 300002: 2 steps of 512 KiB, each 10 + floor(500 + 524288/53.687)
//        = 10 + 10265, one reduction 3 x floor(524288/50) = 31455, and 10: 52,015 ns; then the
//        1 KiB send (the comm slot was busy) at 352017: floor(500 + 1024/53.687) = 519 ns.
//   Exposed communication = finish - GPU compute (30 + 12 + 15 + 4 + 100 + 2 + 3 µs) = 2,721,002.
// Without --fix-defects the converted send has no peer, and the run says so.
TEST(ChakraPipeline, LinkConvertRun) {
  const auto dir = temp_dir("chakra_pipeline_run");
  ASSERT_NO_FATAL_FAILURE(link_and_convert(dir));
  std::ofstream(dir / "system.json") << R"({"preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
    "all-to-all-implementation": ["ring"], "local-mem-bw": 50})";
  std::ofstream(dir / "network.yml") << "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n";
  const std::string timeline = (dir / "timeline.json").string();
  auto run_prefix = [&](const char* form) {
    return run_binary({"run", "--workload", (dir / form).string(), "--system", (dir / "system.json").string(),
                       "--network", (dir / "network.yml").string(), "-q", "--timeline", timeline});
  };
  const CommandResult fixed = run_prefix("fixed");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(fixed.out, "sys[0] finished, 2887002 cycles, exposed communication 2721002 cycles.\n"
                       "sys[1] finished, 2887002 cycles, exposed communication 2721002 cycles.\n");
  // The timeline's events are in µs: find the all-reduce and the point-to-point message.
  std::ifstream timeline_in(timeline);
  const nlohmann::json events = nlohmann::json::parse(timeline_in)["traceEvents"];
  auto span_ns = [&](const std::string& name_start) {
    for (const nlohmann::json& e : events) {
      if (e.value("ph", "") == "X" && e.value("name", "").rfind(name_start, 0) == 0) {
        return std::pair(std::llround(e["ts"].get<double>() * 1000), std::llround(e["dur"].get<double>() * 1000));
      }
    }
    ADD_FAILURE() << "no timeline event named " << name_start << "...";
    return std::pair(0LL, 0LL);
  };
  EXPECT_EQ(span_ns("all-reduce 1.0 MiB"), std::pair(300002LL, 52015LL));
  EXPECT_EQ(span_ns("send 1.0 KiB to NPU 1 · ncclDevKernel_SendRecv"), std::pair(352017LL, 519LL));
  EXPECT_EQ(span_ns("receive 1.0 KiB from NPU 0 · ncclDevKernel_SendRecv"), std::pair(330002LL, 22534LL));
  // A flow arrow from the send (NPU 0, at its start) to the receive (NPU 1, at its end).
  std::vector<std::tuple<std::string, int, long long>> flows;
  for (const nlohmann::json& e : events) {
    if (e.value("cat", "") == "send/recv" && e.value("ph", "") != "X") {
      flows.emplace_back(e["ph"], e["pid"], std::llround(e["ts"].get<double>() * 1000));
    }
  }
  EXPECT_THAT(flows, ::testing::ElementsAre(std::tuple("s", 0, 352017LL), std::tuple("f", 1, 352536LL)));

  const CommandResult compat = run_prefix("compat");
  EXPECT_EQ(compat.exit_code, 1);
  EXPECT_THAT(compat.err, HasSubstr("compat.0.et: node 18 "
                                    "(\"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)\", "
                                    "COMM_SEND_NODE): missing the attribute \"comm_dst\""));
}

// jsonize -> dejsonize gives back each rank's .et byte for byte, and inspect counts it: per rank
// 33 nodes, compute 2810 µs of CPU ops + 166 µs of kernels, the 1 MiB all-reduce, rank 0's 1 KiB
// send; the longest dependency chain is the CPU chain of LinkConvertRun through sgemm_128 (26):
// 1, 2, 3, 4, 5, 7, 9, 10, 12, 13, 14, 16, 17, 19, 20, 21, 22, 29, 30, 23, 24, 25, 26 = 2884 µs.
TEST(ChakraPipeline, JsonizeDejsonizeInspect) {
  const auto dir = temp_dir("chakra_pipeline_json");
  ASSERT_NO_FATAL_FAILURE(link_and_convert(dir));
  for (int rank : {0, 1}) {
    const std::string et = chakra::rank_path((dir / "fixed").string(), rank);
    const std::string json = (dir / ("fixed." + std::to_string(rank) + ".json")).string();
    const std::string back = chakra::rank_path((dir / "back").string(), rank);
    CommandResult c = run_binary({"chakra", "jsonize", et, json});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    c = run_binary({"chakra", "dejsonize", json, back});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_EQ(file_bytes(back), file_bytes(et)) << "rank " << rank;
  }
  const std::string prefix = (dir / "back").string();
  const CommandResult c = run_binary({"chakra", "inspect", prefix});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, prefix + ": 2 ranks (.0.et to .1.et)\n"
                            "  ranks        nodes     compute  collectives        sent  critical path  problems\n"
                            "  0                33    2.976 ms      1.0 MiB     1.0 KiB       2.884 ms         0\n"
                            "  1                33    2.976 ms      1.0 MiB     0 bytes       2.884 ms         0\n"
                            "all ranks: 66 nodes\n"
                            "  nodes           COMM_COLL_NODE 2, COMM_RECV_NODE 1, COMM_SEND_NODE 1, COMP_NODE 60, "
                            "METADATA_NODE 2\n"
                            "  time by type    COMM_COLL_NODE 600.000 µs, COMM_RECV_NODE 40.000 µs, COMM_SEND_NODE "
                            "40.000 µs, COMP_NODE 5.952 ms, METADATA_NODE 0 ns\n"
                            "  compute         5.952 ms (GPU 332.000 µs, CPU 5.620 ms)\n"
                            "  collectives     ALL_REDUCE 2 (2.0 MiB)\n"
                            "  by group        all NPUs 2 (2.0 MiB)\n"
                            "  point-to-point  sends 1 (1.0 KiB), receives 1 (1.0 KiB)\n"
                            "  longest critical path  2.884 ms over 23 nodes\n"
                            "no problems\n");
}

// `chakrasim --help` gives the chakra group one line; it names every tool of `chakra --help`.
TEST(ChakraPipeline, TheGroupsLineNamesEveryTool) {
  const CommandResult top = run_binary({"--help"});
  const std::size_t at = top.out.find("\n  chakra ");
  ASSERT_NE(at, std::string::npos) << top.out;
  const std::string line = top.out.substr(at + 1, top.out.find('\n', at + 1) - at - 1);
  EXPECT_THAT(line, HasSubstr("The Chakra tool chain: "));
  const CommandResult group = run_binary({"chakra", "--help"});
  std::size_t tools = 0;
  for (const char* tool : {"convert", "generate", "link", "jsonize", "dejsonize", "visualize", "inspect", "msccl",
                           "obfuscate", "rescale", "synthesize"}) {
    EXPECT_THAT(group.out, HasSubstr(std::string("\n  ") + tool + " ")) << tool;
    EXPECT_THAT(line, HasSubstr(tool)) << tool;
    ++tools;
  }
  // No tool beyond those: one "\n  name" line each under "Subcommands:".
  const std::string subcommands = group.out.substr(group.out.find("Subcommands:"));
  std::size_t listed = 0;
  for (std::size_t p = subcommands.find("\n  "); p != std::string::npos; p = subcommands.find("\n  ", p + 1)) ++listed;
  EXPECT_EQ(listed, tools) << subcommands;
}

}  // namespace
}  // namespace chakrasim::test
