// ASTRA-sim compatibility for point-to-point messages (with and without the rendezvous
// handshake) and communicator groups (docs/astra-sim-model.md §1.5, §6.1, §6.4, §9).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "core/error.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;

chakra::Trace p2p_trace(bool send, std::int64_t peer, std::uint64_t bytes, std::int64_t tag) {
  chakra::TraceBuilder b;
  chakra::Node& n = b.add(send ? chakra::NodeType::kCommSend : chakra::NodeType::kCommRecv, send ? "send" : "recv");
  *n.add_attr() = chakra::make_int32(send ? "comm_dst" : "comm_src", static_cast<std::int32_t>(peer));
  *n.add_attr() = chakra::make_int64("comm_size", static_cast<std::int64_t>(bytes));
  *n.add_attr() = chakra::make_int32("comm_tag", static_cast<std::int32_t>(tag));
  return b.trace();
}

sim::Inputs p2p_inputs(bool rendezvous, const std::string& backend) {
  sim::Inputs in;
  in.backend = backend;
  in.network = network_of({{DimensionKind::kRing, 2, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.system.rendezvous = rendezvous;
  in.graphs.push_back(std::make_shared<const chakra::Graph>(chakra::Graph::build(p2p_trace(true, 1, kMiB, 7), "r0")));
  in.graphs.push_back(std::make_shared<const chakra::Graph>(chakra::Graph::build(p2p_trace(false, 0, kMiB, 7), "r1")));
  return in;
}

// 1 MiB from NPU 0 to NPU 1 on Ring2: floor(500 + 1048576/53.687) = 20031 for both the send
// (it completes when the message arrives) and the receive. Native sends pay no endpoint delay.
TEST(P2p, SendAndReceive) {
  for (const char* backend : {"congestion-unaware", "congestion-aware"}) {
    const sim::Result r = run(p2p_inputs(false, backend));
    ASSERT_TRUE(r.all_finished());
    EXPECT_EQ(r.npus[0].finish_ns, 20031u) << backend;
    EXPECT_EQ(r.npus[1].finish_ns, 20031u) << backend;
  }
}

// Rendezvous: the receiver first sends an 8192-byte go-ahead, floor(500 + 152.6) = 652 ns,
// and only then does the data leave: 652 + 20031 = 20683.
TEST(P2p, Rendezvous) {
  for (const char* backend : {"congestion-unaware", "congestion-aware"}) {
    const sim::Result r = run(p2p_inputs(true, backend));
    ASSERT_TRUE(r.all_finished());
    EXPECT_EQ(r.npus[0].finish_ns, 20683u) << backend;
    EXPECT_EQ(r.npus[1].finish_ns, 20683u) << backend;
  }
}

// A receive whose size differs from the send's never matches (size is part of the key): the
// receiver deadlocks and the run says so.
TEST(P2p, SizeMismatchDeadlocks) {
  sim::Inputs in = p2p_inputs(false, "congestion-unaware");
  in.graphs[1] = std::make_shared<const chakra::Graph>(chakra::Graph::build(p2p_trace(false, 0, kMiB / 2, 7), "r1"));
  const sim::Result r = run(in);
  EXPECT_TRUE(r.npus[0].finished);
  EXPECT_FALSE(r.npus[1].finished);
  ASSERT_EQ(r.stuck.size(), 1u);
  EXPECT_TRUE(r.stuck[0].issued);
}

// Rendezvous also holds every collective step back by one go-ahead: AR8 ring, splits 1, gains
// 14 x 652 ns over 96365.
TEST(P2p, RendezvousCollective) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.system.rendezvous = true;
  in.graphs = same_trace(single_collective(chakra::CommType::kAllReduce, kMiB), 8);
  const sim::Result r = run(in);
  ASSERT_TRUE(r.all_finished());
  for (const auto& n : r.npus) EXPECT_EQ(n.finish_ns, 96365u + 14 * 652);
}

chakra::Trace group_collective(const std::string& pg_name) {
  chakra::TraceBuilder b;
  chakra::Node& n = b.collective("ar", chakra::CommType::kAllReduce, kMiB);
  *n.add_attr() = chakra::make_string("pg_name", pg_name);
  return b.trace();
}

// Groups {1: 0..3, 2: 4..7} on Ring8, all-reduce 1 MiB in each, splits 1. Each group is one
// 4-NPU ring with a fixed 10 ns endpoint delay; the step from NPU 3 back to NPU 0 crosses 3
// hops of the physical ring (T = 6382 instead of 5382 for 256 KiB), which makes NPU 0 finish
// at 81540 in CU (a native 4-NPU ring is 79540) and at 101068 in CA (§9 gives sys[0]).
// In CU the late step reaches NPUs 0 and 1 in the last round and not NPUs 2 and 3: walking
// the 6 steps (P = 15726 after the first 3 receives) gives 81540, 81540, 80540, 80540.
TEST(Groups, TwoHalvesOfRing8) {
  for (auto [backend, expected] : {std::pair{"congestion-unaware", 81540u}, {"congestion-aware", 101068u}}) {
    sim::Inputs in;
    in.backend = backend;
    in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
    in.system = system_of("ring", 1, 1, 1);
    in.groups = {{1, {0, 1, 2, 3}}, {2, {4, 5, 6, 7}}};
    auto g1 = std::make_shared<const chakra::Graph>(chakra::Graph::build(group_collective("1"), "g1"));
    auto g2 = std::make_shared<const chakra::Graph>(chakra::Graph::build(group_collective("2"), "g2"));
    in.graphs = {g1, g1, g1, g1, g2, g2, g2, g2};
    const sim::Result r = run(in);
    ASSERT_TRUE(r.all_finished());
    EXPECT_EQ(r.npus[0].finish_ns, expected) << backend;
    EXPECT_EQ(r.npus[4].finish_ns, expected) << backend;  // the same picture in group 2
    if (std::string(backend) == "congestion-unaware") {
      const Tick cu[] = {81540, 81540, 80540, 80540, 81540, 81540, 80540, 80540};
      for (int i = 0; i < 8; ++i) EXPECT_EQ(r.npus[i].finish_ns, cu[i]) << "NPU " << i;
    }
  }
}

TEST(Groups, NativeFourNpuRing) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 4, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = same_trace(single_collective(chakra::CommType::kAllReduce, kMiB), 4);
  const sim::Result r = run(in);
  for (const auto& n : r.npus) EXPECT_EQ(n.finish_ns, 79540u);
}

// A group of every NPU runs the full plan, exactly as without a group.
TEST(Groups, WholeNetworkGroupIsTheWorld) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.groups = {{5, {0, 1, 2, 3, 4, 5, 6, 7}}};
  in.graphs = same_trace(group_collective("5"), 8);
  const sim::Result r = run(in);
  for (const auto& n : r.npus) EXPECT_EQ(n.finish_ns, 96365u);
}

TEST(Groups, UnknownGroupAndNonMemberAreErrors) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = same_trace(group_collective("3"), 8);
  EXPECT_THAT([&] { sim::simulate(in); }, ::testing::ThrowsMessage<Error>(::testing::HasSubstr("communicator group "
                                                                                               "3")));
  in.groups = {{3, {0, 1}}};
  EXPECT_THAT([&] { sim::simulate(in); }, ::testing::ThrowsMessage<Error>(::testing::HasSubstr("names communicator "
                                                                                               "group 3 of the "
                                                                                               "communicator-group "
                                                                                               "file, which does not "
                                                                                               "include NPU 2")));
}

// A PyTorch process-group METADATA node defines group 1 = {0, 1} at run time; the collective
// on pg_name "1" then runs on it: a 2-NPU ring of 1 MiB inside Ring4 at E = 10.
TEST(Groups, ProcessGroupMetadataNode) {
  chakra::TraceBuilder b;
  chakra::Node& meta = b.add(chakra::NodeType::kMetadata, "[pytorch|profiler|execution_trace|process_group:init]");
  meta.mutable_inputs()->set_values(
      R"(['[{"pg_name": "1", "pg_desc": "tp", "backend_config": "cuda:nccl", "ranks": [0, 1]}]'])");
  chakra::Node& ar = b.collective("ar", chakra::CommType::kAllReduce, kMiB, {0});
  *ar.add_attr() = chakra::make_string("pg_name", "1");
  chakra::TraceBuilder idle;
  idle.comp("idle", 1);
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 4, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  auto with_group = std::make_shared<const chakra::Graph>(chakra::Graph::build(b.trace(), "pg"));
  auto others = std::make_shared<const chakra::Graph>(chakra::Graph::build(idle.trace(), "idle"));
  in.graphs = {with_group, with_group, others, others};
  const sim::Result r = run(in);
  ASSERT_TRUE(r.all_finished());
  // n = 2, step 524288 B: T = floor(500 + 9765.6) = 10265, P = 3 floor(524288/50) = 31455:
  // 2(10 + 10265) + 31455 + 10 = 52015.
  EXPECT_EQ(r.npus[0].finish_ns, 52015u);
  EXPECT_EQ(r.npus[1].finish_ns, 52015u);
}

}  // namespace
}  // namespace chakrasim::test
