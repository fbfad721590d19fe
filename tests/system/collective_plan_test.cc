// Tests of plan_collective and phase_output_bytes (docs/astra-sim-model.md §4.1-4.2): chunk size
// and count, and the phase list per collective kind, optimization, token list and dimension mask.
#include "system/collective_plan.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"

namespace chakrasim::system {
namespace {

using network::DimensionKind;
using network::Topology;
using network::TopologySpec;

constexpr std::uint32_t kAllDims = 0xffffffffu;
constexpr std::uint64_t kMiB = 1048576;

// A system with `tokens` "ring" tokens (or "oneRing" ones) for every collective kind.
SystemSpec spec_of(std::size_t tokens, std::uint64_t splits, bool local_bw_aware, bool one_flat = false) {
  SystemSpec spec;
  spec.preferred_dataset_splits = splits;
  spec.collective_optimization =
      local_bw_aware ? CollectiveOptimization::kLocalBwAware : CollectiveOptimization::kBaseline;
  AlgorithmChoice choice;
  choice.one_flat = one_flat;
  for (auto& impl : spec.implementations) impl.assign(tokens, choice);
  return spec;
}

Topology ring8() { return Topology(TopologySpec{{{DimensionKind::kRing, 8, 50, 500}}}); }

// The reference's 3-D example: [Ring 2, FullyConnected 8, Switch 4], 64 NPUs, strides 1, 2, 16.
Topology three_d() {
  return Topology(TopologySpec{{{DimensionKind::kRing, 2, 200, 50},
                                {DimensionKind::kFullyConnected, 8, 100, 500},
                                {DimensionKind::kSwitch, 4, 50, 2000}}});
}

// One phase as a line, e.g. "RS d1 n8 s2 524288 first", so a whole plan compares at once and a
// failure shows the plan. A flat phase ends with " flat", a communicator group's with " group".
std::string describe(const PhasePlan& p) {
  static const char* const kKinds[] = {"AR", "AG", "RS", "A2A"};
  static const char* const kPicks[] = {"rr", "first", "second"};
  std::string s = std::string(kKinds[static_cast<int>(p.kind)]) + " d" + std::to_string(p.dim) + " n" +
                  std::to_string(p.ring_size) + " s" + std::to_string(p.stride) + " " + std::to_string(p.bytes) + " " +
                  kPicks[static_cast<int>(p.pick)];
  if (p.flat) s += " flat";
  if (p.members != nullptr) s += " group";
  if (p.algorithm != AlgorithmKind::kRing) s += " not-ring";
  return s;
}

std::vector<std::string> phases_of(const ChunkPlan& plan) {
  std::vector<std::string> out;
  for (const PhasePlan& p : plan.phases) out.push_back(describe(p));
  return out;
}

using Lines = std::vector<std::string>;

// ---- chunking ----

TEST(CollectivePlan, OneMebibyteInFourSplitsIsFourChunksOfAQuarter) {
  // Ring 8, 1 MiB, splits 4: chunk = 1048576 / 4 = 262144, 4 chunks; the same for every kind.
  const Topology t = ring8();
  const SystemSpec spec = spec_of(1, 4, false);
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                              CollectiveKind::kAllToAll}) {
    const ChunkPlan plan = plan_collective(spec, t, kind, kMiB, kAllDims);
    EXPECT_EQ(plan.chunk_bytes, 262144u) << collective_name(kind);
    EXPECT_EQ(plan.chunks, 4u) << collective_name(kind);
  }
  // Splits 1: one chunk of the whole buffer.
  const ChunkPlan one = plan_collective(spec_of(1, 1, false), t, CollectiveKind::kAllReduce, kMiB, kAllDims);
  EXPECT_EQ(one.chunk_bytes, kMiB);
  EXPECT_EQ(one.chunks, 1u);
}

TEST(CollectivePlan, TinyChunksAreInflatedToTheTotalNpuCountExceptAllGather) {
  // Ring 8, splits 4. 30 B: chunk 30/4 = 7 < 8 NPUs, so chunk = 8 and size = 4*8 = 32: 4 chunks
  // of 8 (without the inflation it would be ceil(30/7) = 5 chunks of 7). 10 B: chunk 2 -> 8,
  // 4 chunks. 0 B: chunk 0 -> 8, 4 chunks.
  // All-gather is not inflated: 30 B -> chunk 7, ceil(30/7) = 5 chunks.
  const Topology t = ring8();
  const SystemSpec spec = spec_of(1, 4, false);
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll}) {
    for (std::uint64_t bytes : {30u, 10u, 0u}) {
      const ChunkPlan plan = plan_collective(spec, t, kind, bytes, kAllDims);
      EXPECT_EQ(plan.chunk_bytes, 8u) << collective_name(kind) << " " << bytes;
      EXPECT_EQ(plan.chunks, 4u) << collective_name(kind) << " " << bytes;
    }
  }
  const ChunkPlan ag = plan_collective(spec, t, CollectiveKind::kAllGather, 30, kAllDims);
  EXPECT_EQ(ag.chunk_bytes, 7u);
  EXPECT_EQ(ag.chunks, 5u);
}

TEST(CollectivePlan, InflationBoundaryIsStrictlyLessThanTheNpuCount) {
  // Ring 8, splits 4. 35 B: chunk floor(35/4) = 8 = 8 NPUs, not inflated, so the size stays 35:
  // ceil(35/8) = 5 chunks of 8 (inflating would reset the size to 32 and give 4). 32 B: 4 chunks
  // of 8. 100 B: chunk 25, 4 chunks of 25 (no inflation on 8 NPUs).
  const Topology t = ring8();
  const SystemSpec spec = spec_of(1, 4, false);
  ChunkPlan plan = plan_collective(spec, t, CollectiveKind::kAllReduce, 35, kAllDims);
  EXPECT_EQ(plan.chunk_bytes, 8u);
  EXPECT_EQ(plan.chunks, 5u);
  plan = plan_collective(spec, t, CollectiveKind::kAllReduce, 32, kAllDims);
  EXPECT_EQ(plan.chunk_bytes, 8u);
  EXPECT_EQ(plan.chunks, 4u);
  plan = plan_collective(spec, t, CollectiveKind::kAllReduce, 100, kAllDims);
  EXPECT_EQ(plan.chunk_bytes, 25u);
  EXPECT_EQ(plan.chunks, 4u);
}

TEST(CollectivePlan, InflationUsesEveryNpuOfTheNetworkEvenForASubset) {
  // 3-D [2, 8, 4] = 64 NPUs with one token (the collective covers only dim 0's 2 NPUs):
  // 100 B, splits 4: chunk 25 < 64, so chunk = 64 and 4 chunks; 256 B: chunk 64, not inflated.
  const Topology t = three_d();
  const SystemSpec spec = spec_of(1, 4, false);
  ChunkPlan plan = plan_collective(spec, t, CollectiveKind::kAllReduce, 100, kAllDims);
  EXPECT_EQ(plan.chunk_bytes, 64u);
  EXPECT_EQ(plan.chunks, 4u);
  plan = plan_collective(spec, t, CollectiveKind::kReduceScatter, 100, 0b001);
  EXPECT_EQ(plan.chunk_bytes, 64u);
  EXPECT_EQ(plan.chunks, 4u);
  plan = plan_collective(spec, t, CollectiveKind::kAllReduce, 256, kAllDims);
  EXPECT_EQ(plan.chunk_bytes, 64u);
  EXPECT_EQ(plan.chunks, 4u);
}

TEST(CollectivePlan, ARemainderMakesAFullSizeExtraChunk) {
  // Ring 8, 1000 B, splits 3: chunk 333, 3*333 = 999 leaves 1 B, which becomes a 4th full
  // chunk of 333 (1332 B simulated). 1001 B splits 4: chunk 250, 4*250 = 1000, 5 chunks.
  const Topology t = ring8();
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                              CollectiveKind::kAllToAll}) {
    ChunkPlan plan = plan_collective(spec_of(1, 3, false), t, kind, 1000, kAllDims);
    EXPECT_EQ(plan.chunk_bytes, 333u) << collective_name(kind);
    EXPECT_EQ(plan.chunks, 4u) << collective_name(kind);
    plan = plan_collective(spec_of(1, 4, false), t, kind, 1001, kAllDims);
    EXPECT_EQ(plan.chunk_bytes, 250u) << collective_name(kind);
    EXPECT_EQ(plan.chunks, 5u) << collective_name(kind);
  }
}

TEST(CollectivePlan, AllGatherOfZeroBytesHasNoChunks) {
  // Ring 8, all-gather of 0 B, splits 4: nothing to move, 0 chunks.
  const ChunkPlan plan = plan_collective(spec_of(1, 4, false), ring8(), CollectiveKind::kAllGather, 0, kAllDims);
  EXPECT_EQ(plan.chunks, 0u);
}

TEST(CollectivePlan, AllGatherSmallerThanTheSplitsMakesOneByteChunks) {
  // Ring 8, all-gather of 3 B, splits 4: floor(3/4) = 0 would never finish in the reference;
  // here chunk = 1 and 3 chunks.
  const ChunkPlan plan = plan_collective(spec_of(1, 4, false), ring8(), CollectiveKind::kAllGather, 3, kAllDims);
  EXPECT_EQ(plan.chunk_bytes, 1u);
  EXPECT_EQ(plan.chunks, 3u);
}

// ---- phases ----

TEST(CollectivePlan, LocalBwAwareAllReduceOnThreeDimensions) {
  // [Ring 2, FC 8, Switch 4], 3 ring tokens, AR 1 MiB, splits 1, c = 1048576 (§5 multi-dim):
  //   RS(d0, c)      n2 stride 1,  first half  -> c/2  = 524288
  //   RS(d1, c/2)    n8 stride 2,  first half  -> c/16 = 65536
  //   AR(d2, c/16)   n4 stride 16, first half  -> 65536
  //   AG(d1, c/16)   n8 stride 2,  second half -> 524288
  //   AG(d0, c/2)    n2 stride 1,  second half -> 1048576
  const ChunkPlan plan = plan_collective(spec_of(3, 1, true), three_d(), CollectiveKind::kAllReduce, kMiB, kAllDims);
  EXPECT_EQ(plan.chunk_bytes, kMiB);
  EXPECT_EQ(plan.chunks, 1u);
  const Lines expected = {"RS d0 n2 s1 1048576 first", "RS d1 n8 s2 524288 first", "AR d2 n4 s16 65536 first",
                          "AG d1 n8 s2 65536 second", "AG d0 n2 s1 524288 second"};
  EXPECT_EQ(phases_of(plan), expected);
}

TEST(CollectivePlan, BaselineAllReduceIsAFullAllReduceInEveryDimension) {
  // Same network, baseline, AR 1 MiB splits 4 (c = 262144): AR(d0), AR(d1), AR(d2), each with
  // the full chunk, round-robin queues.
  const ChunkPlan plan = plan_collective(spec_of(3, 4, false), three_d(), CollectiveKind::kAllReduce, kMiB, kAllDims);
  EXPECT_EQ(plan.chunk_bytes, 262144u);
  EXPECT_EQ(plan.chunks, 4u);
  const Lines expected = {"AR d0 n2 s1 262144 rr", "AR d1 n8 s2 262144 rr", "AR d2 n4 s16 262144 rr"};
  EXPECT_EQ(phases_of(plan), expected);
}

TEST(CollectivePlan, AllGatherVisitsDimensionsInDescendingOrderAndMultiplies) {
  // Same network, AG of a 1 MiB shard, splits 4 (c = 262144): AG(d2, c) -> 4c, AG(d1, 4c) ->
  // 32c, AG(d0, 32c) -> 64c; localBWAware changes nothing for all-gather.
  const Lines expected = {"AG d2 n4 s16 262144 rr", "AG d1 n8 s2 1048576 rr", "AG d0 n2 s1 8388608 rr"};
  for (bool aware : {false, true}) {
    const ChunkPlan plan = plan_collective(spec_of(3, 4, aware), three_d(), CollectiveKind::kAllGather, kMiB, kAllDims);
    EXPECT_EQ(plan.chunk_bytes, 262144u);
    EXPECT_EQ(phases_of(plan), expected) << "localBWAware " << aware;
  }
}

TEST(CollectivePlan, ReduceScatterDividesAndAllToAllKeepsTheSize) {
  // Same network, 1 MiB, splits 1: RS(d0, c) -> c/2, RS(d1, c/2) -> c/16, RS(d2, c/16) -> c/64;
  // A2A keeps c in every dimension. Both ignore localBWAware.
  for (bool aware : {false, true}) {
    const ChunkPlan rs =
        plan_collective(spec_of(3, 1, aware), three_d(), CollectiveKind::kReduceScatter, kMiB, kAllDims);
    EXPECT_EQ(phases_of(rs), (Lines{"RS d0 n2 s1 1048576 rr", "RS d1 n8 s2 524288 rr", "RS d2 n4 s16 65536 rr"}));
    const ChunkPlan a2a = plan_collective(spec_of(3, 1, aware), three_d(), CollectiveKind::kAllToAll, kMiB, kAllDims);
    EXPECT_EQ(phases_of(a2a),
              (Lines{"A2A d0 n2 s1 1048576 rr", "A2A d1 n8 s2 1048576 rr", "A2A d2 n4 s16 1048576 rr"}));
  }
}

TEST(CollectivePlan, OneDimensionLocalBwAwareIsASingleAllReduce) {
  // Ring 8, 1 token, localBWAware AR 1 MiB splits 4: one AR(d0, 262144) on the first-half queues.
  const ChunkPlan plan = plan_collective(spec_of(1, 4, true), ring8(), CollectiveKind::kAllReduce, kMiB, kAllDims);
  EXPECT_EQ(phases_of(plan), (Lines{"AR d0 n8 s1 262144 first"}));
  const ChunkPlan base = plan_collective(spec_of(1, 4, false), ring8(), CollectiveKind::kAllReduce, kMiB, kAllDims);
  EXPECT_EQ(phases_of(base), (Lines{"AR d0 n8 s1 262144 rr"}));
}

TEST(CollectivePlan, InvolvedDimsMaskSkipsDimensions) {
  // 3-D network, 3 tokens, 1 MiB splits 1 (c = 1048576):
  //   AR localBWAware, mask 0b101: RS(d0, c) -> c/2, AR(d2, c/2), AG(d0, c/2).
  //   AR localBWAware, mask 0b010: AR(d1, c) alone.
  //   RS, mask 0b110: RS(d1, c) -> c/8, RS(d2, c/8).
  //   AG, mask 0b011: AG(d1, c) -> 8c, AG(d0, 8c).
  //   mask 0: no phases at all (the chunks are still planned).
  const Topology t = three_d();
  const SystemSpec aware = spec_of(3, 1, true);
  EXPECT_EQ(phases_of(plan_collective(aware, t, CollectiveKind::kAllReduce, kMiB, 0b101)),
            (Lines{"RS d0 n2 s1 1048576 first", "AR d2 n4 s16 524288 first", "AG d0 n2 s1 524288 second"}));
  EXPECT_EQ(phases_of(plan_collective(aware, t, CollectiveKind::kAllReduce, kMiB, 0b010)), (Lines{"AR d1 n8 s2 1048576 "
                                                                                                  "first"}));
  EXPECT_EQ(phases_of(plan_collective(aware, t, CollectiveKind::kReduceScatter, kMiB, 0b110)),
            (Lines{"RS d1 n8 s2 1048576 rr", "RS d2 n4 s16 131072 rr"}));
  EXPECT_EQ(phases_of(plan_collective(aware, t, CollectiveKind::kAllGather, kMiB, 0b011)),
            (Lines{"AG d1 n8 s2 1048576 rr", "AG d0 n2 s1 8388608 rr"}));
  const ChunkPlan none = plan_collective(aware, t, CollectiveKind::kAllReduce, kMiB, 0);
  EXPECT_TRUE(none.phases.empty());
  EXPECT_EQ(none.chunks, 1u);
  EXPECT_EQ(none.chunk_bytes, kMiB);
}

TEST(CollectivePlan, DimensionsOfSizeOneAreSkipped) {
  // [Ring 4, Switch 1, FC 2] (8 NPUs, strides 1, 4, 4), 3 tokens, AR localBWAware 1 MiB
  // splits 1: dim 1 has one NPU, so RS(d0, c) -> c/4, AR(d2, c/4) stride 4, AG(d0, c/4).
  const Topology t(TopologySpec{{{DimensionKind::kRing, 4, 50, 500},
                                 {DimensionKind::kSwitch, 1, 50, 500},
                                 {DimensionKind::kFullyConnected, 2, 50, 500}}});
  EXPECT_EQ(phases_of(plan_collective(spec_of(3, 1, true), t, CollectiveKind::kAllReduce, kMiB, kAllDims)),
            (Lines{"RS d0 n4 s1 1048576 first", "AR d2 n2 s4 262144 first", "AG d0 n4 s1 262144 second"}));
  EXPECT_EQ(phases_of(plan_collective(spec_of(3, 1, false), t, CollectiveKind::kAllGather, kMiB, kAllDims)),
            (Lines{"AG d2 n2 s4 1048576 rr", "AG d0 n4 s1 2097152 rr"}));
}

TEST(CollectivePlan, FewerTokensThanDimensionsCoverOnlyTheFirstDimensions) {
  // 3-D network, 1 MiB splits 1. One token: AR covers dim 0 only, AR(d0, c). Two tokens:
  // RS(d0, c) -> c/2, AR(d1, c/2), AG(d0, c/2); baseline with two tokens: AR(d0), AR(d1).
  const Topology t = three_d();
  EXPECT_EQ(phases_of(plan_collective(spec_of(1, 1, true), t, CollectiveKind::kAllReduce, kMiB, kAllDims)),
            (Lines{"AR d0 n2 s1 1048576 first"}));
  EXPECT_EQ(phases_of(plan_collective(spec_of(2, 1, true), t, CollectiveKind::kAllReduce, kMiB, kAllDims)),
            (Lines{"RS d0 n2 s1 1048576 first", "AR d1 n8 s2 524288 first", "AG d0 n2 s1 524288 second"}));
  EXPECT_EQ(phases_of(plan_collective(spec_of(2, 1, false), t, CollectiveKind::kAllReduce, kMiB, kAllDims)),
            (Lines{"AR d0 n2 s1 1048576 rr", "AR d1 n8 s2 1048576 rr"}));
  EXPECT_EQ(phases_of(plan_collective(spec_of(2, 1, false), t, CollectiveKind::kAllGather, kMiB, kAllDims)),
            (Lines{"AG d1 n8 s2 1048576 rr", "AG d0 n2 s1 8388608 rr"}));
}

TEST(CollectivePlan, OneRingIsOneFlatPhaseOverAllNpus) {
  // 3-D network (64 NPUs), "oneRing" tokens, 1 MiB splits 1: a single phase over NPUs 0..63
  // with stride 1, whatever the kind and optimization: AR (first half with localBWAware,
  // round-robin in baseline), RS, AG and A2A each one flat phase of c.
  const Topology t = three_d();
  EXPECT_EQ(phases_of(plan_collective(spec_of(3, 1, true, true), t, CollectiveKind::kAllReduce, kMiB, kAllDims)),
            (Lines{"AR d0 n64 s1 1048576 first flat"}));
  EXPECT_EQ(phases_of(plan_collective(spec_of(3, 1, false, true), t, CollectiveKind::kAllReduce, kMiB, kAllDims)),
            (Lines{"AR d0 n64 s1 1048576 rr flat"}));
  EXPECT_EQ(phases_of(plan_collective(spec_of(1, 1, false, true), t, CollectiveKind::kReduceScatter, kMiB, kAllDims)),
            (Lines{"RS d0 n64 s1 1048576 rr flat"}));
  EXPECT_EQ(phases_of(plan_collective(spec_of(1, 1, false, true), t, CollectiveKind::kAllGather, kMiB, kAllDims)),
            (Lines{"AG d0 n64 s1 1048576 rr flat"}));
  EXPECT_EQ(phases_of(plan_collective(spec_of(1, 1, false, true), t, CollectiveKind::kAllToAll, kMiB, kAllDims)),
            (Lines{"A2A d0 n64 s1 1048576 rr flat"}));
}

TEST(CollectivePlan, OneRingIgnoresTheTokensAfterIt) {
  // ["oneRing", "ring", "ring"] on the 3-D network: still one flat phase over 64 NPUs.
  SystemSpec spec = spec_of(3, 1, true);
  spec.implementations[static_cast<std::size_t>(CollectiveKind::kAllReduce)][0].one_flat = true;
  EXPECT_EQ(phases_of(plan_collective(spec, three_d(), CollectiveKind::kAllReduce, kMiB, kAllDims)), (Lines{"AR d0 n64 "
                                                                                                            "s1 "
                                                                                                            "1048576 "
                                                                                                            "first "
                                                                                                            "flat"}));
}

TEST(CollectivePlan, ACommunicatorGroupIsOneRingOverItsMembers) {
  // Ring 8, group {4, 6, 5, 7} (file order kept), AR 1 MiB splits 4: chunking still inflates
  // against all 8 NPUs, so the chunk is 262144; one AR phase over the 4 members, whose member
  // list is the group itself; first-half queues with localBWAware, round-robin in baseline.
  // RS keeps the full chunk as its input. A group of the whole network plans as usual, and a
  // group of one NPU has nothing to do.
  const Topology t = ring8();
  const std::vector<NpuId> group = {4, 6, 5, 7};
  ChunkPlan plan = plan_collective(spec_of(1, 4, true), t, CollectiveKind::kAllReduce, kMiB, kAllDims, &group);
  EXPECT_EQ(plan.chunk_bytes, 262144u);
  EXPECT_EQ(plan.chunks, 4u);
  EXPECT_EQ(phases_of(plan), (Lines{"AR d0 n4 s1 262144 first group"}));
  ASSERT_EQ(plan.phases.size(), 1u);
  EXPECT_EQ(plan.phases[0].members, &group);
  plan = plan_collective(spec_of(1, 4, false), t, CollectiveKind::kAllReduce, kMiB, kAllDims, &group);
  EXPECT_EQ(phases_of(plan), (Lines{"AR d0 n4 s1 262144 rr group"}));
  plan = plan_collective(spec_of(1, 4, true), t, CollectiveKind::kReduceScatter, kMiB, kAllDims, &group);
  EXPECT_EQ(phases_of(plan), (Lines{"RS d0 n4 s1 262144 rr group"}));
  // Tiny collective on a group: inflated to 8 B per chunk (all 8 NPUs), not 4.
  plan = plan_collective(spec_of(1, 4, true), t, CollectiveKind::kAllReduce, 10, kAllDims, &group);
  EXPECT_EQ(plan.chunk_bytes, 8u);
  EXPECT_EQ(plan.chunks, 4u);

  const std::vector<NpuId> everyone = {0, 1, 2, 3, 4, 5, 6, 7};
  plan = plan_collective(spec_of(1, 4, true), t, CollectiveKind::kAllReduce, kMiB, kAllDims, &everyone);
  EXPECT_EQ(phases_of(plan), (Lines{"AR d0 n8 s1 262144 first"}));
  const std::vector<NpuId> alone = {3};
  plan = plan_collective(spec_of(1, 4, true), t, CollectiveKind::kAllReduce, kMiB, kAllDims, &alone);
  EXPECT_TRUE(plan.phases.empty());
}

TEST(CollectivePlan, AKindWithNoImplementationThrowsAnErrorNamingIt) {
  // No all-to-all-implementation: planning an all-to-all throws an Error that says
  // "all-to-all"; the other kinds still plan.
  SystemSpec spec = spec_of(1, 4, false);
  spec.implementations[static_cast<std::size_t>(CollectiveKind::kAllToAll)].clear();
  try {
    plan_collective(spec, ring8(), CollectiveKind::kAllToAll, kMiB, kAllDims);
    ADD_FAILURE() << "expected chakrasim::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("all-to-all"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(plan_collective(spec, ring8(), CollectiveKind::kAllReduce, kMiB, kAllDims));
  spec.implementations[static_cast<std::size_t>(CollectiveKind::kReduceScatter)].clear();
  try {
    plan_collective(spec, ring8(), CollectiveKind::kReduceScatter, kMiB, kAllDims);
    ADD_FAILURE() << "expected chakrasim::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reduce-scatter"), std::string::npos) << e.what();
  }
}

TEST(CollectivePlan, PhaseOutputBytes) {
  // 1000 B over 8 NPUs: RS keeps 1000/8 = 125 (1001 -> 125 too, truncated), AG grows to 8000,
  // AR and A2A keep 1000.
  EXPECT_EQ(phase_output_bytes(CollectiveKind::kReduceScatter, 1000, 8), 125u);
  EXPECT_EQ(phase_output_bytes(CollectiveKind::kReduceScatter, 1001, 8), 125u);
  EXPECT_EQ(phase_output_bytes(CollectiveKind::kAllGather, 1000, 8), 8000u);
  EXPECT_EQ(phase_output_bytes(CollectiveKind::kAllReduce, 1000, 8), 1000u);
  EXPECT_EQ(phase_output_bytes(CollectiveKind::kAllToAll, 1000, 8), 1000u);
  EXPECT_EQ(phase_output_bytes(CollectiveKind::kAllGather, 65536, 8), 524288u);
}

TEST(CollectivePlan, CollectiveNames) {
  // The names errors and reports use.
  EXPECT_STREQ(collective_name(CollectiveKind::kAllReduce), "all-reduce");
  EXPECT_STREQ(collective_name(CollectiveKind::kAllGather), "all-gather");
  EXPECT_STREQ(collective_name(CollectiveKind::kReduceScatter), "reduce-scatter");
  EXPECT_STREQ(collective_name(CollectiveKind::kAllToAll), "all-to-all");
}

}  // namespace
}  // namespace chakrasim::system
