// The reference's statistics lines, the roofline compute model, remote memory and replay mode
// (docs/astra-sim-model.md §1.4, §7, §8, §9).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "core/error.h"
#include "report/astra_statistics.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;
using ::testing::HasSubstr;

struct Logged {
  sim::Result result;
  std::unique_ptr<report::NodeLog> log;
};

Logged run_logged(const sim::Inputs& in) {
  Logged r;
  r.log = std::make_unique<report::NodeLog>(static_cast<NpuId>(in.graphs.size()));
  r.result = sim::simulate(in, r.log.get());
  return r;
}

// The regression reference's block: 117780 of pure communication.
TEST(Statistics, TutorialBlock) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 4, 1);
  in.graphs = same_trace(single_collective(chakra::CommType::kAllReduce, kMiB), 8);
  const Logged r = run_logged(in);
  EXPECT_EQ(report::statistics_lines(in, *r.log, 0), "sys[0]. Post statistics processing start.\n"
                                                     "sys[0]. Post statistics processing end.\n"
                                                     "sys[0], Wall time: 117780\n"
                                                     "sys[0], Comm time: 117780\n");
}

// The DAG anchor: GPU time is the union 0-5000, 5000-25000, 101365-108365 = 32000; Comm
// 5000-101365 = 96365; overlap 32000 + 96365 - 108365 = 20000.
TEST(Statistics, DagAnchor) {
  chakra::TraceBuilder b;
  b.comp("c1", 5);
  b.collective("ar", chakra::CommType::kAllReduce, kMiB, {0});
  b.comp("c3", 20, {0});
  b.comp("c4", 7, {1, 2});
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = same_trace(b.trace(), 8);
  const Logged r = run_logged(in);
  const report::NpuStatistics st = report::npu_statistics(in, *r.log, 3);
  EXPECT_EQ(st.wall, 108365u);
  EXPECT_EQ(st.gpu, 32000u);
  EXPECT_EQ(st.comm, 96365u);
  EXPECT_EQ(st.overlap, 20000u);
  EXPECT_THAT(report::statistics_lines(in, *r.log, 3), HasSubstr("sys[3], Total compute-communication overlap: "
                                                                 "20000\n"));
}

chakra::Trace roofline_trace() {
  chakra::TraceBuilder b;
  chakra::Node& n1 = b.comp("gemm", 0);
  *n1.add_attr() = chakra::make_uint64("num_ops", 1000000000);
  *n1.add_attr() = chakra::make_uint64("tensor_size", 1000000);
  chakra::Node& n2 = b.comp("copy", 0, {0});
  *n2.add_attr() = chakra::make_uint64("num_ops", 1000000);
  *n2.add_attr() = chakra::make_uint64("tensor_size", 100000000);
  return b.trace();
}

// Roofline, peak 100 TFLOP/s, 1000 GB/s: (1e9 FLOP, 1e6 B) has intensity 1000 and is compute
// bound: 1e9 / 1e14 s = 10000 ns. (1e6 FLOP, 1e8 B) has intensity 0.01, 1e10 FLOP/s: 100000 ns.
// Statistics weigh by duration over 110000 + 1: compute bound 10000/110001 = 9.091%;
// compute utilisation (1 x 10000 + 1e-4 x 100000)/110001 = 9.100%; memory utilisation
// (0.1 x 10000 + 1 x 100000)/110001 = 91.817%; intensity (1000 x 10000 + 0.01 x 100000)/110001 = 90.917.
TEST(Roofline, TwoNodes) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 2, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.compute = {"roofline", 100, 1000, 0, {}};
  in.graphs = same_trace(roofline_trace(), 2);
  const Logged r = run_logged(in);
  ASSERT_TRUE(r.result.all_finished());
  EXPECT_EQ(r.result.npus[0].finish_ns, 110000u);
  const std::string lines = report::statistics_lines(in, *r.log, 0);
  EXPECT_THAT(lines, HasSubstr("sys[0], GPU time: 110000\n"));
  EXPECT_THAT(lines, HasSubstr("sys[0], Compute bound percentage: 9.091%\n"));
  EXPECT_THAT(lines, HasSubstr("sys[0], Average compute utilization: 9.100%\n"));
  EXPECT_THAT(lines, HasSubstr("sys[0], Average memory utilization: 91.817%\n"));
  EXPECT_THAT(lines, HasSubstr("sys[0], Average operation intensity: 90.917\n"));
}

TEST(Roofline, NodeWithoutNumOpsIsAnError) {
  chakra::TraceBuilder b;
  b.comp("plain", 3);
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 2, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.compute = {"roofline", 100, 1000, 0, {}};
  in.graphs = same_trace(b.trace(), 2);
  EXPECT_THAT([&] { sim::simulate(in); }, ::testing::ThrowsMessage<Error>(HasSubstr("\"num_ops\" and "
                                                                                    "\"tensor_size\"")));
}

chakra::Trace load_store_trace() {
  chakra::TraceBuilder b;
  chakra::Node& load = b.add(chakra::NodeType::kMemLoad, "load");
  *load.add_attr() = chakra::make_uint64("tensor_size", kMiB);
  chakra::Node& store = b.add(chakra::NodeType::kMemStore, "store", {0});
  *store.add_attr() = chakra::make_uint64("tensor_size", kMiB);
  return b.trace();
}

sim::Inputs memory_inputs(memory::RemoteMemoryKind kind) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 2, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.memory = {kind, 100, 50, 1, 2};
  in.graphs = same_trace(load_store_trace(), 2);
  return in;
}

// Each access: 100 + floor(1048576 / 50) = 21071 ns. Per-NPU memory serves both NPUs at
// once: 42142 each. A pool serves one access at a time in arrival order: NPU 0's load, NPU 1's
// load, NPU 0's store (63213), NPU 1's store (84284). A per-node memory of 2 NPUs is a pool.
TEST(RemoteMemory, PerNpuAndPool) {
  const Logged per_npu = run_logged(memory_inputs(memory::RemoteMemoryKind::kPerNpu));
  EXPECT_EQ(per_npu.result.npus[0].finish_ns, 42142u);
  EXPECT_EQ(per_npu.result.npus[1].finish_ns, 42142u);
  const Logged pool = run_logged(memory_inputs(memory::RemoteMemoryKind::kPool));
  EXPECT_EQ(pool.result.npus[0].finish_ns, 63213u);
  EXPECT_EQ(pool.result.npus[1].finish_ns, 84284u);
  const Logged per_node = run_logged(memory_inputs(memory::RemoteMemoryKind::kPerNode));
  EXPECT_EQ(per_node.result.npus[1].finish_ns, 84284u);
  EXPECT_THAT(report::statistics_lines(memory_inputs(memory::RemoteMemoryKind::kPool), *pool.log, 1),
              HasSubstr("sys[1], Remote mem time: 84284\n"));  // queued from 0: busy 0-84284
}

TEST(RemoteMemory, NoMemoryExpansionIsAnError) {
  EXPECT_THAT([&] { sim::simulate(memory_inputs(memory::RemoteMemoryKind::kNone)); },
              ::testing::ThrowsMessage<Error>(HasSubstr("NO_MEMORY_EXPANSION")));
}

// replay-only: every node, collectives included, lasts its recorded duration.
TEST(Replay, EveryNodeByDuration) {
  chakra::TraceBuilder b;
  b.collective("ar", chakra::CommType::kAllReduce, kMiB).set_duration_micros(5);
  b.comp("c", 2, {0});
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 2, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.replay_only = true;
  in.graphs = same_trace(b.trace(), 2);
  const Logged r = run_logged(in);
  EXPECT_EQ(r.result.npus[0].finish_ns, 7000u);
  EXPECT_THAT(report::statistics_lines(in, *r.log, 0), HasSubstr("sys[0], Replay time: 7000\n"));
}

// METADATA, INVALID and CPU nodes run and are counted, where the reference aborts or throws.
TEST(Statistics, NeverAbortsOnOtherNodeTypes) {
  chakra::TraceBuilder b;
  b.add(chakra::NodeType::kMetadata, "meta");
  b.add(chakra::NodeType::kInvalid, "invalid", {0});
  chakra::Node& cpu = b.comp("cpu", 4, {1});
  *cpu.mutable_attr(0) = chakra::make_bool("is_cpu_op", true);
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 2, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = same_trace(b.trace(), 2);
  const Logged r = run_logged(in);
  ASSERT_TRUE(r.result.all_finished());
  EXPECT_EQ(r.result.npus[0].finish_ns, 4000u);
  EXPECT_EQ(r.result.npus[0].exposed_comm_ns, 4000u);  // CPU time is not subtracted (#302)
  const std::string lines = report::statistics_lines(in, *r.log, 0);
  EXPECT_THAT(lines, HasSubstr("sys[0], CPU time: 4000\n"));
  EXPECT_THAT(lines, HasSubstr("sys[0], Invalid time: 0\n"));
}

}  // namespace
}  // namespace chakrasim::test
