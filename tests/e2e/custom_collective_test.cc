// Custom collectives (docs/chakra-format.md §7): a per-rank algorithm ET selected by
// `*-implementation-custom` replaces the native algorithm.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "chakra/workload_files.h"
#include "config/system_config.h"
#include "core/error.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;

sim::Inputs custom_inputs(const std::string& backend, std::vector<std::shared_ptr<const chakra::Graph>> algorithm) {
  sim::Inputs in;
  in.backend = backend;
  in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.system.scheduling_policy = system::SchedulingPolicy::kFifo;
  in.system.custom_prefixes[static_cast<std::size_t>(system::CollectiveKind::kAllReduce)] = "custom_allreduce";
  in.custom_algorithms[static_cast<std::size_t>(system::CollectiveKind::kAllReduce)] = std::move(algorithm);
  in.graphs = same_trace(single_collective(chakra::CommType::kAllReduce, kMiB), 8);
  return in;
}

// The reference's example: the MSCCL ring all-reduce converted for 8 ranks. Each rank runs a
// strict chain of 14 sends of 131072 B (floor(500 + 131072/53.687) = 2941 ns each, complete at
// arrival; the matching receive then completes at once) and 7 reductions of 7 us, with no
// endpoint delay: 14 x 2941 + 7 x 7000 = 90174 (the native ring with splits 1 takes 96365).
TEST(CustomCollective, ReferenceMscclRingAllReduce) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const std::string prefix =
      (ref / "traces" / "custom_collectives" / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce").string();
  for (const char* backend : {"congestion-aware", "congestion-unaware"}) {
    const sim::Result r = run(custom_inputs(backend, chakra::load_workload(prefix, 8, "custom algorithm")));
    ASSERT_TRUE(r.all_finished()) << backend;
    for (const auto& n : r.npus) EXPECT_EQ(n.finish_ns, 90174u) << backend;
  }
}

// The reference's own system file (custom_collective.json) with its path pointed at the
// reference traces, through the binary: 90174 on every NPU.
TEST(CustomCollective, ReferenceConfigThroughTheCli) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto dir = temp_dir("custom_cli");
  const auto algo = ref / "traces" / "custom_collectives" / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce";
  std::ifstream in(ref / "configs" / "custom_collective.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string old_path = "examples/system/custom_collectives/custom_ring_allreduce_8npus_1MB/custom_allreduce";
  text.replace(text.find(old_path), old_path.size(), algo.string());
  std::ofstream(dir / "system.json") << text;
  const std::string prefix = (dir / "ar").string();
  for (int r = 0; r < 8; ++r) {
    chakra::write_trace(chakra::rank_path(prefix, r), single_collective(chakra::CommType::kAllReduce, kMiB));
  }
  const CommandResult res =
      run_binary({"run", "--workload", prefix, "--system", (dir / "system.json").string(), "--network",
                  (ref / "configs" / "Ring_8npus.yml").string(), "--backend", "congestion-aware", "-q"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_THAT(res.out, ::testing::HasSubstr("sys[7] finished, 90174 cycles"));
  // The reference's algorithm ETs say they were converted for 1 MiB, the workload's size.
  EXPECT_EQ(res.err.find("converted for"), std::string::npos) << res.err;
}

// A hand-made algorithm for 8 ranks: rank p sends 1000 B to p+1 and receives 1000 B from p-1
// (both free at the start), then reduces for 2 us. Send and receive: floor(500 + 1000/53.687)
// = 518 ns; then 2000 ns: every NPU finishes at 2518.
TEST(CustomCollective, HandMadeAlgorithm) {
  std::vector<std::shared_ptr<const chakra::Graph>> algorithm;
  for (int p = 0; p < 8; ++p) {
    chakra::TraceBuilder b;
    chakra::Node& send = b.add(chakra::NodeType::kCommSend, "send");
    *send.add_attr() = chakra::make_int64("comm_size", 1000);
    *send.add_attr() = chakra::make_int32("comm_dst", (p + 1) % 8);
    *send.add_attr() = chakra::make_int32("comm_tag", 0);
    chakra::Node& recv = b.add(chakra::NodeType::kCommRecv, "recv");
    *recv.add_attr() = chakra::make_int64("comm_size", 1000);
    *recv.add_attr() = chakra::make_int32("comm_src", (p + 7) % 8);
    *recv.add_attr() = chakra::make_int32("comm_tag", 0);
    b.add(chakra::NodeType::kComp, "reduce", {1}).set_duration_micros(2);
    algorithm.push_back(std::make_shared<const chakra::Graph>(chakra::Graph::build(b.trace(), "algo")));
  }
  const sim::Result r = run(custom_inputs("congestion-unaware", algorithm));
  ASSERT_TRUE(r.all_finished());
  for (const auto& n : r.npus) EXPECT_EQ(n.finish_ns, 2518u);
}

TEST(CustomCollective, ConfigKeys) {
  const config::SystemConfig c =
      config::parse_system(R"({"preferred-dataset-splits": 1, "all-gather-implementation-custom": ["algo/ag"]})",
                           "s.json", {});
  EXPECT_EQ(c.system.custom_prefixes[static_cast<std::size_t>(system::CollectiveKind::kAllGather)], "algo/ag");
  EXPECT_THAT(
      [] {
        config::parse_system(R"({"preferred-dataset-splits": 1, "all-reduce-implementation-custom": ["a", "b"]})",
                             "s.json", {});
      },
      ::testing::ThrowsMessage<Error>(::testing::HasSubstr("expected a list of exactly one path prefix")));
}

}  // namespace
}  // namespace chakrasim::test
