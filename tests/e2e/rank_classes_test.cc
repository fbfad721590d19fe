// Folded runs by classes of ranks (sim/rank_classes.h) simulate one NPU per class and must give
// exactly the figures of the full run, for every NPU; where the conditions do not hold the run
// folds less, or not at all, and a folded run that does not finish is run in full.
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "chakra/trace_builder.h"
#include "network/network.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;
using system::CollectiveKind;

// A pipeline-parallel job on a 3-D network: tensor parallel along dimension 0, stages along
// dimension 1, data parallel along dimension 2 (rank = tp + T * (stage + P * dp)). Each rank
// receives its stage input, computes (longer in later stages), all-reduces in its TP group,
// sends on; then receives the gradient, computes, sends it back, and reduce-scatters and
// all-gathers in its DP group while a second TP all-reduce runs: the TP, DP and stage traffic
// share links. TP groups are ids 1.., DP groups 1000.., listed in ring order.
struct PipelineJob {
  std::uint32_t tp = 4, stages = 3, dp = 4;
  std::uint64_t p2p_bytes = 256 * 1024;
  std::int64_t jitter_rank = -1;                      // this rank's first compute takes 1 us longer
  bool lost_message = false;                          // stage 1 waits for a message nobody sends
  std::vector<std::uint32_t> tp_ring = {0, 1, 2, 3};  // TP groups list their members in this order of tp
  bool twin_tp_groups = false;  // the second TP all-reduce runs on a second group of the same members
  // The first and last stages all-reduce in skewed pairs: rank (t, first, d) with (t ^ 1, last, d),
  // so a representative's partner is no representative, and the partner's representative sees
  // the message on another pair group.
  bool skewed_pairs = false;
  bool last_stage_skips_pairs = false;  // and the last stage never joins them
  std::uint32_t pair_group(std::uint32_t t, std::uint32_t d) const { return 3000 + t + tp * d; }

  NpuId rank(std::uint32_t t, std::uint32_t s, std::uint32_t d) const { return t + tp * (s + stages * d); }
  std::uint32_t tp_group(std::uint32_t s, std::uint32_t d) const { return 1 + s + stages * d; }
  std::uint32_t dp_group(std::uint32_t t, std::uint32_t s) const { return 1000 + t + tp * s; }

  system::CommGroups groups() const {
    system::CommGroups g;
    for (std::uint32_t d = 0; d < dp; ++d) {
      for (std::uint32_t s = 0; s < stages; ++s) {
        for (const std::uint32_t t : tp_ring) g[tp_group(s, d)].push_back(rank(t, s, d));
      }
    }
    for (std::uint32_t s = 0; s < stages; ++s) {
      for (std::uint32_t t = 0; t < tp; ++t) {
        for (std::uint32_t d = 0; d < dp; ++d) g[dp_group(t, s)].push_back(rank(t, s, d));
      }
    }
    if (skewed_pairs) {
      for (std::uint32_t d = 0; d < dp; ++d) {
        for (std::uint32_t t = 0; t < tp; ++t) g[pair_group(t, d)] = {rank(t, 0, d), rank(t ^ 1, stages - 1, d)};
      }
    }
    if (twin_tp_groups) {
      for (std::uint32_t d = 0; d < dp; ++d) {
        for (std::uint32_t s = 0; s < stages; ++s) g[2000 + tp_group(s, d)] = g.at(tp_group(s, d));
      }
    }
    return g;
  }

  chakra::Trace trace(std::uint32_t t, std::uint32_t s, std::uint32_t d) const {
    chakra::TraceBuilder b;
    auto in_group = [](chakra::Node& n, std::uint32_t group) {
      *n.add_attr() = chakra::make_string("pg_name", std::to_string(group));
      return n.id();
    };
    const NpuId me = rank(t, s, d);
    std::vector<std::uint64_t> deps;
    if (s > 0) deps.push_back(b.recv("act in", static_cast<std::int32_t>(rank(t, s - 1, d)), 7, p2p_bytes).id());
    if (lost_message && s == 1) deps.push_back(b.recv("lost", static_cast<std::int32_t>(rank(t, 0, d)), 99, 64).id());
    const std::uint64_t extra = static_cast<std::int64_t>(me) == jitter_rank ? 1 : 0;
    chakra::Node& fwd_node = b.comp("fwd", 3 + 2 * s + extra);
    for (const std::uint64_t dep : deps) fwd_node.add_data_deps(dep);
    const std::uint64_t fwd = fwd_node.id();
    const std::uint64_t tp_ar =
        in_group(b.collective("tp ar", chakra::CommType::kAllReduce, kMiB, {fwd}), tp_group(s, d));
    std::uint64_t before_bwd = tp_ar;
    if (s + 1 < stages) {
      b.send("act out", static_cast<std::int32_t>(rank(t, s + 1, d)), 7, p2p_bytes).data_deps({tp_ar});
      before_bwd =
          b.recv("grad in", static_cast<std::int32_t>(rank(t, s + 1, d)), 8, p2p_bytes).data_deps({tp_ar}).id();
    }
    const std::uint64_t bwd = b.comp("bwd", 5 + s, {before_bwd}).id();
    if (s > 0) b.send("grad out", static_cast<std::int32_t>(rank(t, s - 1, d)), 8, p2p_bytes).data_deps({bwd});
    in_group(b.collective("tp ar 2", chakra::CommType::kAllReduce, 2 * kMiB, {bwd}),
             (twin_tp_groups ? 2000 : 0) + tp_group(s, d));
    const std::uint64_t rs =
        in_group(b.collective("dp rs", chakra::CommType::kReduceScatter, 3 * kMiB, {bwd}), dp_group(t, s));
    const std::uint64_t ag =
        in_group(b.collective("dp ag", chakra::CommType::kAllGather, 512 * 1024, {rs}), dp_group(t, s));
    const std::uint64_t opt = b.comp("opt", 2, {ag}).id();
    if (skewed_pairs && (s == 0 || (s + 1 == stages && !last_stage_skips_pairs))) {
      in_group(b.collective("pair ar", chakra::CommType::kAllReduce, 64 * 1024, {opt}),
               s == 0 ? pair_group(t, d) : pair_group(t ^ 1, d));
    }
    return b.trace();
  }

  // `net` must have tp x stages x dp NPUs; all-reduces run `all_reduce`, reduce-scatters direct,
  // all-gathers ring.
  sim::Inputs inputs(network::TopologySpec net, const std::string& backend, const std::string& all_reduce,
                     std::uint64_t splits = 2, bool rendezvous = false) const {
    sim::Inputs in;
    in.backend = backend;
    in.network = std::move(net);
    in.system = system_of("ring", 1, splits, 2);
    in.system.implementations[static_cast<std::size_t>(CollectiveKind::kAllReduce)] = {algorithm_of(all_reduce)};
    in.system.implementations[static_cast<std::size_t>(CollectiveKind::kReduceScatter)] = {algorithm_of("direct")};
    in.system.rendezvous = rendezvous;
    in.groups = groups();
    for (std::uint32_t d = 0; d < dp; ++d) {
      for (std::uint32_t s = 0; s < stages; ++s) {
        for (std::uint32_t t = 0; t < tp; ++t) in.graphs.push_back(nullptr);
      }
    }
    for (std::uint32_t d = 0; d < dp; ++d) {
      for (std::uint32_t s = 0; s < stages; ++s) {
        for (std::uint32_t t = 0; t < tp; ++t) {
          in.graphs[rank(t, s, d)] = std::make_shared<const chakra::Graph>(chakra::Graph::build(trace(t, s, d), "job"));
        }
      }
    }
    return in;
  }
};

// Runs `in` folded and in full; expects `classes` classes and every NPU's figures equal.
void expect_folded_as_full(sim::Inputs in, std::uint32_t classes) {
  const sim::Result folded = run(in);
  in.allow_symmetry = false;
  const sim::Result full = run(in);
  EXPECT_EQ(folded.classes_simulated, classes);
  EXPECT_EQ(full.classes_simulated, 0u);
  ASSERT_TRUE(full.all_finished());
  ASSERT_EQ(folded.npus.size(), full.npus.size());
  for (std::size_t r = 0; r < full.npus.size(); ++r) {
    const sim::NpuResult& a = folded.npus[r];
    const sim::NpuResult& b = full.npus[r];
    EXPECT_EQ(a.finish_ns, b.finish_ns) << "NPU " << r;
    EXPECT_EQ(a.exposed_comm_ns, b.exposed_comm_ns) << "NPU " << r;
    EXPECT_EQ(a.gpu_compute_ns, b.gpu_compute_ns) << "NPU " << r;
    EXPECT_EQ(a.nodes_done, b.nodes_done) << "NPU " << r;
    EXPECT_EQ(a.split.collective_ns, b.split.collective_ns) << "NPU " << r;
    EXPECT_EQ(a.split.p2p_wait_ns, b.split.p2p_wait_ns) << "NPU " << r;
    EXPECT_EQ(a.split.by_group_kind_ns, b.split.by_group_kind_ns) << "NPU " << r;
  }
  if (classes > 0) {
    EXPECT_LT(folded.events * 2, full.events);  // and it is cheaper
  }
}

const network::TopologySpec kSwitchSwitchRing = network_of(
    {{DimensionKind::kSwitch, 4, 100, 300}, {DimensionKind::kSwitch, 3, 25, 1000}, {DimensionKind::kRing, 4, 50, 500}});

TEST(RankClasses, StagesFoldAndMatchTheFullRun) {
  // Halving-doubling TP groups in a switch fold by flipping tp bits; direct and ring DP groups on
  // a ring by rotating dp: one class per stage, 3 of 48 NPUs.
  const PipelineJob job;
  for (std::uint64_t splits : {1u, 4u}) {
    for (bool rendezvous : {false, true}) {
      SCOPED_TRACE(fmt::format("splits {} rendezvous {}", splits, rendezvous));
      expect_folded_as_full(job.inputs(kSwitchSwitchRing, "congestion-unaware", "halvingDoubling", splits, rendezvous),
                            3);
    }
  }
  // Two groups of the same members per TP group: each moves onto its own twin.
  PipelineJob twins;
  twins.twin_tp_groups = true;
  expect_folded_as_full(twins.inputs(kSwitchSwitchRing, "congestion-unaware", "halvingDoubling"), 3);
  // Groups across classes whose members are no representatives: the tags' groups move.
  PipelineJob pairs;
  pairs.skewed_pairs = true;
  expect_folded_as_full(pairs.inputs(kSwitchSwitchRing, "congestion-unaware", "halvingDoubling"), 3);
  // Ring TP groups on a ring, with zero latency (arrivals tie with link releases): rotations.
  const auto rings = network_of({{DimensionKind::kRing, 4, 100, 0},
                                 {DimensionKind::kRing, 3, 25, 0},
                                 {DimensionKind::kFullyConnected, 4, 50, 0}});
  expect_folded_as_full(job.inputs(rings, "congestion-unaware", "ring"), 3);
}

TEST(RankClasses, FoldsOnlyWhatTheAlgorithmsAllow) {
  const PipelineJob job;
  // Halving-doubling on a ring of 4: flips are no moves of a ring, but rotating by 2 is p ^ 2,
  // which keeps halving-doubling's partners. Classes: 3 stages x 2 TP halves.
  const auto ring_tp = network_of(
      {{DimensionKind::kRing, 4, 100, 300}, {DimensionKind::kSwitch, 3, 25, 1000}, {DimensionKind::kRing, 4, 50, 500}});
  expect_folded_as_full(job.inputs(ring_tp, "congestion-unaware", "halvingDoubling"), 6);
  // Ring TP groups listed as tp 0, 2, 1, 3: flipping tp bit 0 moves ring positions by 2, a
  // rotation of the ring; flipping bit 1 swaps neighbours, rotating tp by 1 or 2 neither. Classes:
  // 3 stages x 2.
  PipelineJob scrambled;
  scrambled.tp_ring = {0, 2, 1, 3};
  expect_folded_as_full(scrambled.inputs(kSwitchSwitchRing, "congestion-unaware", "ring"), 6);
}

TEST(RankClasses, RanksThatDifferRunInFull) {
  // One rank's compute 1 us longer: no move maps the traces onto each other.
  PipelineJob job;
  job.jitter_rank = 13;
  expect_folded_as_full(job.inputs(kSwitchSwitchRing, "congestion-unaware", "halvingDoubling"), 0);
}

TEST(RankClasses, UnfoldableRunsRunInFull) {
  const PipelineJob job;
  // NCCL's collectives.
  sim::Inputs in = job.inputs(kSwitchSwitchRing, "congestion-aware", "halvingDoubling");
  in.system.collectives = system::CollectiveModel::kNccl;
  EXPECT_EQ(run(in).classes_simulated, 0u);
  // A backend whose row is not shift-invariant.
  in = job.inputs(kSwitchSwitchRing, "flow", "halvingDoubling");
  EXPECT_EQ(run(in).classes_simulated, 0u);
  // A backend that charges links: the order of messages tied on a link follows the order of
  // events, which the moves do not keep. (With rendezvous and one chunk this job's full run
  // finishes its data-parallel halves 500 ns apart.)
  expect_folded_as_full(job.inputs(kSwitchSwitchRing, "congestion-aware", "halvingDoubling", 1, true), 0);
}

TEST(RankClasses, AFoldedRunThatStopsRunsInFull) {
  // Stage 1 waits for a message nobody sends: the folded run stops with NPUs unfinished, and the
  // full run reports every stuck NPU, not only the representatives.
  PipelineJob job;
  job.lost_message = true;
  const sim::Result r = run(job.inputs(kSwitchSwitchRing, "congestion-unaware", "halvingDoubling"));
  EXPECT_EQ(r.classes_simulated, 0u);
  std::set<NpuId> stuck;
  for (const sim::StuckNode& n : r.stuck) stuck.insert(n.npu);
  // Stage 1, stage 2 (waiting for its input) and stage 0 (for its gradients): all 48 NPUs.
  EXPECT_EQ(stuck.size(), 48u);
  EXPECT_TRUE(stuck.count(job.rank(3, 1, 2)) == 1);
  // Stopped inside a collective whose partners never issue it: the full run's report says so.
  PipelineJob alone;
  alone.skewed_pairs = true;
  alone.last_stage_skips_pairs = true;
  const sim::Result pairs = run(alone.inputs(kSwitchSwitchRing, "congestion-unaware", "halvingDoubling"));
  EXPECT_EQ(pairs.classes_simulated, 0u);
  ASSERT_FALSE(pairs.stuck.empty());
  EXPECT_EQ(pairs.stuck.front().npu, 0u);
  EXPECT_NE(pairs.stuck.front().detail.find("never issued"), std::string::npos) << pairs.stuck.front().detail;
}

}  // namespace
}  // namespace chakrasim::test
