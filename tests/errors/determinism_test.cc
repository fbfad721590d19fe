// The same run twice gives byte-identical output: a small 8-NPU workload with compute,
// collectives of four kinds and point-to-point messages, on both network backends, printed to
// stdout and written with --json.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kNpus = 8;

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Rank r: compute, then all-reduce, all-gather, reduce-scatter and all-to-all in a chain, a
// receive from the previous rank posted at the start, a send to the next rank after the
// all-gather, and a last compute node after everything. Every rank's trace differs (the peers).
chakra::Trace rank_trace(int r) {
  using chakra::CommType;
  chakra::TraceBuilder b;
  b.comp("fwd", 5 + static_cast<std::uint64_t>(r));                     // 0
  b.collective("ar", CommType::kAllReduce, 1 << 20, {0});               // 1
  b.collective("ag", CommType::kAllGather, 256 << 10, {1});             // 2
  b.collective("rs", CommType::kReduceScatter, 512 << 10, {2});         // 3
  b.collective("a2a", CommType::kAllToAll, 128 << 10, {3});             // 4
  chakra::Node& recv = b.add(chakra::NodeType::kCommRecv, "recv_act");  // 5
  *recv.add_attr() = chakra::make_int32("comm_src", (r + kNpus - 1) % kNpus);
  *recv.add_attr() = chakra::make_int64("comm_size", 64 << 10);
  *recv.add_attr() = chakra::make_int32("comm_tag", 3);
  chakra::Node& send = b.add(chakra::NodeType::kCommSend, "send_act", {2});  // 6
  *send.add_attr() = chakra::make_int32("comm_dst", (r + 1) % kNpus);
  *send.add_attr() = chakra::make_int64("comm_size", 64 << 10);
  *send.add_attr() = chakra::make_int32("comm_tag", 3);
  b.comp("bwd", 7, {4, 5, 6});  // 7
  return b.trace();
}

struct Files {
  fs::path dir;
  std::string prefix, system, network;
  explicit Files(const std::string& name) : dir(temp_dir(name)) {
    prefix = (dir / "mix").string();
    for (int r = 0; r < kNpus; ++r)
      chakra::write_trace(chakra::rank_path(prefix, static_cast<std::size_t>(r)), rank_trace(r));
    system = (dir / "system.json").string();
    write_text(system, R"({"scheduling-policy": "LIFO", "collective-optimization": "localBWAware",
      "endpoint-delay": 10, "active-chunks-per-dimension": 2, "preferred-dataset-splits": 4,
      "all-reduce-implementation": ["ring", "ring"], "all-gather-implementation": ["ring", "ring"],
      "reduce-scatter-implementation": ["ring", "ring"], "all-to-all-implementation": ["ring", "ring"],
      "local-mem-bw": 50})");
    network = (dir / "network.yml").string();
    write_text(network, "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50.0, 25.0 ]\nlatency: [ "
                        "500.0, 700.0 ]\n");
  }
};

class Determinism : public ::testing::TestWithParam<const char*> {};

TEST_P(Determinism, SameRunTwiceIsByteIdentical) {
  const std::string backend = GetParam();
  Files f(backend == "congestion-aware" ? "errors_determinism_ca" : "errors_determinism_cu");
  std::vector<std::string> out, json;
  for (int i = 0; i < 2; ++i) {
    const std::string json_path = (f.dir / ("run" + std::to_string(i) + ".json")).string();
    const CommandResult r = run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network,
                                        "--backend", backend, "--json", json_path});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_THAT(r.out, HasSubstr("8 of 8 NPUs finished"));
    out.push_back(r.out);
    json.push_back(slurp(json_path));
    ASSERT_FALSE(json.back().empty());
  }
  EXPECT_EQ(out[0], out[1]);
  EXPECT_EQ(json[0], json[1]);
}

// The statistics blocks too (they walk per-node logs).
TEST_P(Determinism, AstraSimStatsTwiceIsByteIdentical) {
  const std::string backend = GetParam();
  Files f(backend == "congestion-aware" ? "errors_determinism_stats_ca" : "errors_determinism_stats_cu");
  std::vector<std::string> out;
  for (int i = 0; i < 2; ++i) {
    const CommandResult r = run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network,
                                        "--backend", backend, "--astra-sim-stats"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    out.push_back(r.out);
  }
  EXPECT_EQ(out[0], out[1]);
}

INSTANTIATE_TEST_SUITE_P(Backends, Determinism, ::testing::Values("congestion-unaware", "congestion-aware"),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           return std::string(param_info.param) == "congestion-aware" ? "CongestionAware"
                                                                                      : "CongestionUnaware";
                         });

}  // namespace
}  // namespace chakrasim::test
