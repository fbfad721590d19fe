// Deadlock diagnosis: when no event is left but nodes remain, the report says per stuck NPU what
// each node waits for. One test per kind of wait.
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "report/summary.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;
using ::testing::HasSubstr;

std::shared_ptr<const chakra::Graph> graph_of(const chakra::TraceBuilder& b) {
  return std::make_shared<const chakra::Graph>(chakra::Graph::build(b.trace(), "t.et"));
}

chakra::Node& p2p(chakra::TraceBuilder& b, bool send, int peer, std::int64_t bytes, int tag,
                  std::initializer_list<std::uint64_t> deps = {}) {
  chakra::Node& n =
      b.add(send ? chakra::NodeType::kCommSend : chakra::NodeType::kCommRecv, send ? "send" : "recv", deps);
  *n.add_attr() = chakra::make_int32(send ? "comm_dst" : "comm_src", peer);
  *n.add_attr() = chakra::make_int64("comm_size", bytes);
  *n.add_attr() = chakra::make_int32("comm_tag", tag);
  return n;
}

std::string report_of(const sim::Inputs& in) {
  const sim::Result r = run(in);
  EXPECT_FALSE(r.all_finished());
  std::ostringstream out;
  report::print_deadlock(out, r);
  return out.str();
}

sim::Inputs two_npus(std::shared_ptr<const chakra::Graph> g0, std::shared_ptr<const chakra::Graph> g1) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 2, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = {std::move(g0), std::move(g1)};
  return in;
}

chakra::TraceBuilder idle() {
  chakra::TraceBuilder b;
  b.comp("idle", 1);
  return b;
}

// NPU 1 waits for a message with tag 7; NPU 0 sends tag 8 (which completes: a send ends when
// its message arrives). The receive is reported with its peer, tag and size; the compute node
// after it waits for it.
TEST(Deadlock, UnmatchedReceiveAndTheNodeBehindIt) {
  chakra::TraceBuilder sender;
  p2p(sender, true, 1, 4096, 8);
  chakra::TraceBuilder receiver;
  p2p(receiver, false, 0, 4096, 7);  // id 0
  receiver.comp("after", 1, {0});    // id 1
  const std::string text = report_of(two_npus(graph_of(sender), graph_of(receiver)));
  EXPECT_THAT(text, HasSubstr("deadlock: no event is left but 1 NPU(s) have unfinished nodes"));
  EXPECT_THAT(text, HasSubstr("NPU 1: 0 of 2 nodes finished"));
  EXPECT_THAT(text, HasSubstr("node 0 (\"recv\", COMM_RECV_NODE): receive of 4096 bytes from NPU 0 with tag 7: "
                              "NPU 0 never sent a message to NPU 1 with that tag and size"));
  EXPECT_THAT(text, HasSubstr("node 1 (\"after\", COMP_NODE): waits for node(s) 0"));
}

// With the rendezvous protocol a send waits for its receiver's go-ahead, so a send nobody
// receives hangs the sender.
TEST(Deadlock, UnmatchedSendUnderRendezvous) {
  chakra::TraceBuilder sender;
  p2p(sender, true, 1, 4096, 3);
  sim::Inputs in = two_npus(graph_of(sender), graph_of(idle()));
  in.system.rendezvous = true;
  const std::string text = report_of(in);
  EXPECT_THAT(text, HasSubstr("NPU 0: 0 of 1 nodes finished"));
  EXPECT_THAT(text, HasSubstr("send of 4096 bytes to NPU 1 with tag 3: NPU 1 never posted a receive from NPU 0"));
}

// A collective that the other ranks never issue.
TEST(Deadlock, CollectiveOthersNeverIssued) {
  chakra::TraceBuilder ar;
  ar.collective("grad_sync", chakra::CommType::kAllReduce, 1 << 20);
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 4, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  auto other = graph_of(idle());
  in.graphs = {graph_of(ar), other, other, other};
  const std::string text = report_of(in);
  EXPECT_THAT(text, HasSubstr("node 0 (\"grad_sync\", COMM_COLL_NODE): all-reduce of 1048576 bytes: NPU(s) 1, 2, 3 "
                              "never issued their matching collective"));
}

// Every rank issues it, but with different sizes: their messages never pair.
TEST(Deadlock, CollectiveWithMismatchedSizes) {
  chakra::TraceBuilder small, large;
  small.collective("ar", chakra::CommType::kAllReduce, 1 << 20);
  large.collective("ar", chakra::CommType::kAllReduce, 2 << 20);
  const std::string text = report_of(two_npus(graph_of(small), graph_of(large)));
  EXPECT_THAT(text, HasSubstr("every peer issued it, but their messages never matched"));
  EXPECT_THAT(text, HasSubstr("NPU 0:"));
  EXPECT_THAT(text, HasSubstr("NPU 1:"));
}

// Through the binary: the report goes to stderr and the exit code is 2.
TEST(Deadlock, ExitCodeTwo) {
  const auto dir = temp_dir("deadlock_cli");
  const std::string prefix = (dir / "t").string();
  chakra::TraceBuilder receiver;
  p2p(receiver, false, 1, 64, 1);
  chakra::write_trace(chakra::rank_path(prefix, 0), receiver.trace());
  chakra::write_trace(chakra::rank_path(prefix, 1), idle().trace());
  std::ofstream(dir / "s.json") << R"({"preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"]})";
  std::ofstream(dir / "n.yml") << "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n";
  const CommandResult r = run_binary({"run", "--workload", prefix, "--system", (dir / "s.json").string(), "--network",
                                      (dir / "n.yml").string(), "-q"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("receive of 64 bytes from NPU 1 with tag 1"));
}

}  // namespace
}  // namespace chakrasim::test
