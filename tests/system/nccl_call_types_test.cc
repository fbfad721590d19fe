// A call's element type and reduction (nccl-tests' -d and -o): which algorithms NCCL 2.30 leaves
// for them (call_types.h has the rules and their sources), and nccl-tests' counts and columns.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "system/nccl/call_types.h"
#include "system/nccl/sweep.h"
#include "system/nccl_test_support.h"

namespace chakrasim::system::nccl {
namespace {

using ::chakrasim::test::error_of;
using ::testing::HasSubstr;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

bool on(const Enabled& e, Collective c, Algorithm a) {
  return e.algorithms[static_cast<std::size_t>(c)][static_cast<std::size_t>(a)];
}

Enabled for_call(Collective c, DataType type, ReduceOp op, const Machine& m) {
  Enabled e = Enabled::all();
  restrict_to_call(e, c, type, op, m);
  return e;
}

TEST(NcclCallTypes, NamesAndSizesAsNcclTestsHasThem) {
  // Collectives as nccl-tests, its binaries and NCCL name them.
  EXPECT_EQ(parse_collective("all_reduce"), Collective::kAllReduce);
  EXPECT_EQ(parse_collective("all_reduce_perf"), Collective::kAllReduce);
  EXPECT_EQ(parse_collective("ReduceScatter"), Collective::kReduceScatter);
  EXPECT_EQ(parse_collective("sendrecv_perf"), Collective::kSendRecv);
  EXPECT_EQ(parse_collective("_perf"), std::nullopt);
  EXPECT_EQ(parse_data_type("bfloat16"), DataType::kBfloat16);
  EXPECT_EQ(parse_data_type("f8e5m2"), DataType::kFloat8E5M2);
  EXPECT_EQ(parse_data_type("Float"), std::nullopt);  // exact, as nccl-tests compares
  EXPECT_EQ(parse_reduce_op("mulsum"), ReduceOp::kMulSum);
  EXPECT_EQ(parse_reduce_op("avg"), ReduceOp::kAvg);
  EXPECT_STREQ(data_type_name(DataType::kUint64), "uint64");
  EXPECT_STREQ(reduce_op_name(ReduceOp::kProd), "prod");
  EXPECT_EQ(element_bytes(DataType::kInt8), 1u);
  EXPECT_EQ(element_bytes(DataType::kHalf), 2u);
  EXPECT_EQ(element_bytes(DataType::kBfloat16), 2u);
  EXPECT_EQ(element_bytes(DataType::kUint32), 4u);
  EXPECT_EQ(element_bytes(DataType::kDouble), 8u);
  EXPECT_EQ(element_bytes(DataType::kFloat8E4M3), 1u);
}

TEST(NcclCallTypes, NvlsRunsWhatTheSwitchesReduce) {
  const Machine m = dgx();
  const auto nvls = [&](Collective c, DataType t, ReduceOp op) {
    const Enabled e = for_call(c, t, op, m);
    EXPECT_EQ(on(e, c, Algorithm::kNvls), on(e, c, Algorithm::kNvlsTree));
    return on(e, c, Algorithm::kNvls);
  };
  const Collective ar = Collective::kAllReduce;
  // Sums of 16-, 32- and 64-bit floats and 32- and 64-bit integers.
  for (DataType t : {DataType::kHalf, DataType::kBfloat16, DataType::kFloat, DataType::kDouble, DataType::kInt32,
                     DataType::kUint32, DataType::kInt64, DataType::kUint64}) {
    EXPECT_TRUE(nvls(ar, t, ReduceOp::kSum)) << data_type_name(t);
  }
  // Max and min of those integers and the 16-bit floats, not of float or double.
  EXPECT_TRUE(nvls(ar, DataType::kBfloat16, ReduceOp::kMax));
  EXPECT_TRUE(nvls(ar, DataType::kHalf, ReduceOp::kMin));
  EXPECT_TRUE(nvls(ar, DataType::kInt32, ReduceOp::kMin));
  EXPECT_TRUE(nvls(ar, DataType::kUint64, ReduceOp::kMax));
  EXPECT_FALSE(nvls(ar, DataType::kFloat, ReduceOp::kMax));
  EXPECT_FALSE(nvls(ar, DataType::kDouble, ReduceOp::kMin));
  // Nothing of 8 bits; no product; "avg" and a pre-multiplied sum are other operations.
  EXPECT_FALSE(nvls(ar, DataType::kInt8, ReduceOp::kSum));
  EXPECT_FALSE(nvls(ar, DataType::kUint8, ReduceOp::kSum));
  EXPECT_FALSE(nvls(ar, DataType::kFloat8E4M3, ReduceOp::kSum));
  EXPECT_FALSE(nvls(ar, DataType::kFloat, ReduceOp::kProd));
  EXPECT_FALSE(nvls(ar, DataType::kFloat, ReduceOp::kAvg));
  EXPECT_FALSE(nvls(ar, DataType::kBfloat16, ReduceOp::kMulSum));
  EXPECT_FALSE(nvls(Collective::kReduceScatter, DataType::kFloat, ReduceOp::kAvg));
  // An all-gather reduces nothing: NVLS stays whatever the type.
  EXPECT_TRUE(nvls(Collective::kAllGather, DataType::kInt8, ReduceOp::kSum));
  // The choice follows: 64 MiB of floats summed on 8 H100s run NVLS, averaged they run a ring.
  const AchievedModel sum(m, for_call(ar, DataType::kFloat, ReduceOp::kSum, m));
  const AchievedModel avg(m, for_call(ar, DataType::kFloat, ReduceOp::kAvg, m));
  EXPECT_EQ(sum.time(ar, 64 * kMiB).choice.algorithm, Algorithm::kNvls);
  EXPECT_EQ(avg.time(ar, 64 * kMiB).choice.algorithm, Algorithm::kRing);
  EXPECT_GT(avg.time(ar, 64 * kMiB).us, sum.time(ar, 64 * kMiB).us);
}

TEST(NcclCallTypes, CollNetRunsWhatSharpReduces) {
  Machine m = dgx("H100", 8, 2);
  m.collnet = true;
  const auto collnet = [&](Collective c, DataType t, ReduceOp op) {
    const Enabled e = for_call(c, t, op, m);
    EXPECT_EQ(on(e, c, Algorithm::kCollNetDirect), on(e, c, Algorithm::kCollNetChain));
    return on(e, c, Algorithm::kCollNetDirect);
  };
  const Collective ar = Collective::kAllReduce;
  EXPECT_TRUE(collnet(ar, DataType::kFloat, ReduceOp::kSum));
  EXPECT_TRUE(collnet(ar, DataType::kHalf, ReduceOp::kMax));
  EXPECT_TRUE(collnet(ar, DataType::kInt64, ReduceOp::kMin));
  EXPECT_TRUE(collnet(Collective::kReduceScatter, DataType::kDouble, ReduceOp::kSum));
  // "avg" and a pre-multiplied sum reach the network as a sum.
  EXPECT_TRUE(collnet(ar, DataType::kFloat, ReduceOp::kAvg));
  EXPECT_TRUE(collnet(Collective::kReduce, DataType::kFloat, ReduceOp::kMulSum));
  // No product, no 8-bit float.
  EXPECT_FALSE(collnet(ar, DataType::kFloat, ReduceOp::kProd));
  EXPECT_FALSE(collnet(ar, DataType::kFloat8E5M2, ReduceOp::kSum));
  // bfloat16 and 8-bit integers need SHARP v3: NDR's switches, not HDR's.
  EXPECT_TRUE(collnet(ar, DataType::kBfloat16, ReduceOp::kSum));
  EXPECT_TRUE(collnet(ar, DataType::kUint8, ReduceOp::kSum));
  m.nic = &nic_preset("hdr200");
  EXPECT_FALSE(collnet(ar, DataType::kBfloat16, ReduceOp::kSum));
  EXPECT_FALSE(collnet(ar, DataType::kInt8, ReduceOp::kMax));
  EXPECT_TRUE(collnet(ar, DataType::kHalf, ReduceOp::kSum));
  // A collective that reduces nothing is not asked.
  EXPECT_TRUE(collnet(Collective::kAllGather, DataType::kFloat8E4M3, ReduceOp::kProd));
}

TEST(NcclCallTypes, PatHasNoScalingReduceScatter) {
  const Machine m = dgx("H100", 1, 16, 1);  // one GPU a node: PAT's machines
  const Collective rs = Collective::kReduceScatter;
  EXPECT_TRUE(on(for_call(rs, DataType::kFloat, ReduceOp::kSum, m), rs, Algorithm::kPat));
  EXPECT_TRUE(on(for_call(rs, DataType::kFloat, ReduceOp::kMax, m), rs, Algorithm::kPat));
  EXPECT_FALSE(on(for_call(rs, DataType::kFloat, ReduceOp::kAvg, m), rs, Algorithm::kPat));
  EXPECT_FALSE(on(for_call(rs, DataType::kHalf, ReduceOp::kMulSum, m), rs, Algorithm::kPat));
  const Collective ag = Collective::kAllGather;
  EXPECT_TRUE(on(for_call(ag, DataType::kFloat, ReduceOp::kAvg, m), ag, Algorithm::kPat));
}

TEST(NcclCallTypes, EightBitFloatsRankTheRingLastPastEightRanks) {
  // Two nodes, rings and trees only: a large float sum runs the ring (its bandwidth is the
  // tree's across two nodes, its latency lower at this size); an 8-bit float one the tree,
  // the ring's predicted time being x1024. On one node of 8 the ring stays.
  const Machine two = dgx("H100", 8, 2);
  Enabled rings_and_trees = Enabled::all();
  apply_enable_list(rings_and_trees, "Ring,Tree", true, "test");
  const Collective ar = Collective::kAllReduce;
  const auto algorithm = [&](const Machine& m, DataType t) {
    Enabled e = rings_and_trees;
    restrict_to_call(e, ar, t, ReduceOp::kSum, m);
    return TuningModel(m, e).choose(ar, 256 * kMiB).algorithm;
  };
  EXPECT_EQ(algorithm(two, DataType::kFloat), Algorithm::kRing);
  EXPECT_EQ(algorithm(two, DataType::kFloat8E4M3), Algorithm::kTree);
  EXPECT_EQ(algorithm(two, DataType::kFloat8E5M2), Algorithm::kTree);
  EXPECT_EQ(algorithm(dgx(), DataType::kFloat8E4M3), Algorithm::kRing);
  // NCCL asks the type alone: an all-gather of 8-bit floats ranks the ring last too.
  Enabled gather = Enabled::all();
  restrict_to_call(gather, Collective::kAllGather, DataType::kFloat8E4M3, ReduceOp::kSum, two);
  EXPECT_TRUE(gather.ring_last);
  // Where the ring is all there is, it runs.
  Enabled ring = Enabled::all();
  apply_enable_list(ring, "Ring", true, "test");
  restrict_to_call(ring, ar, DataType::kFloat8E4M3, ReduceOp::kSum, two);
  EXPECT_EQ(TuningModel(two, ring).choose(ar, 256 * kMiB).algorithm, Algorithm::kRing);
}

TEST(NcclCallTypes, EightBitFloatReductionsNeedHopper) {
  const Machine a100 = dgx("A100");
  EXPECT_THAT(error_of([&] { check_call(Collective::kAllReduce, DataType::kFloat8E4M3, a100); }),
              HasSubstr("all_reduce of f8e4m3 on A100: NCCL reduces 8-bit floats from Hopper on"));
  EXPECT_THAT(error_of([&] { check_call(Collective::kReduceScatter, DataType::kFloat8E5M2, a100); }),
              HasSubstr("reduce_scatter of f8e5m2 on A100"));
  EXPECT_NO_THROW(check_call(Collective::kAllGather, DataType::kFloat8E4M3, a100));
  EXPECT_NO_THROW(check_call(Collective::kAllReduce, DataType::kBfloat16, a100));
  EXPECT_NO_THROW(check_call(Collective::kAllReduce, DataType::kFloat8E4M3, dgx()));
}

TEST(NcclCallTypes, SweepCountsElementsOfTheType) {
  const AchievedModel model(dgx(), Enabled::all());
  SweepOptions o;
  o.min_bytes = 1000;
  o.max_bytes = 1000;
  o.type = DataType::kDouble;
  // An all-reduce of 1000 bytes of doubles: 125 elements, all of them.
  std::vector<SweepRow> rows = run_sweep(model, o);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].count, 125u);
  EXPECT_EQ(rows[0].size, 1000u);
  EXPECT_EQ(rows[0].type, DataType::kDouble);
  // An all-gather splits them per rank, rounded down to 16 bytes: 15 doubles a rank, 14 rounded;
  // of int8, 125 a rank, 112 rounded.
  o.collective = Collective::kAllGather;
  rows = run_sweep(model, o);
  EXPECT_EQ(rows[0].count, 14u);
  EXPECT_EQ(rows[0].size, 14u * 8 * 8);
  o.type = DataType::kInt8;
  rows = run_sweep(model, o);
  EXPECT_EQ(rows[0].count, 112u);
  EXPECT_EQ(rows[0].size, 112u * 8);
  // The columns: type and operation as nccl-tests names them, the root where there is one.
  o.collective = Collective::kReduce;
  o.type = DataType::kBfloat16;
  o.op = ReduceOp::kMax;
  o.root = 3;
  const std::string reduce = sweep_table(model, o, run_sweep(model, o), false);
  EXPECT_THAT(reduce, HasSubstr("        1000           500  bfloat16     max       3"));
  o.collective = Collective::kAllToAll;
  const std::string all_to_all = sweep_table(model, o, run_sweep(model, o), false);
  EXPECT_THAT(all_to_all, HasSubstr("          56  bfloat16    none      -1"));
}

TEST(NcclCallTypes, AnEmptyCallRunsNothing) {
  // NCCL returns at once from a call of no element: no latency but the platform's, no algorithm.
  Machine m = dgx();
  m.platform_latency_us = 2.5;
  const AchievedModel model(m, Enabled::all());
  SweepOptions o;
  o.collective = Collective::kAllGather;
  o.min_bytes = 64;  // 16 floats, 2 a rank: none once rounded to 16 bytes
  o.max_bytes = 128;
  const std::vector<SweepRow> rows = run_sweep(model, o);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].empty);
  EXPECT_EQ(rows[0].out_of_place.time_us, 2.5);
  EXPECT_EQ(rows[0].out_of_place.algbw, 0.0);
  EXPECT_FALSE(rows[1].empty);
  EXPECT_GT(rows[1].out_of_place.time_us, 10.0);
  const std::string table = sweep_table(model, o, {rows[0]}, true);
  EXPECT_THAT(table, HasSubstr("     2.50    0.00    0.00    N/A  -\n"));
  // An all-to-all of no element too (NCCL 2.30's own all-to-all); a send/receive still posts an
  // empty send and receive: timed as ever.
  o.collective = Collective::kAllToAll;
  EXPECT_TRUE(run_sweep(model, o)[0].empty);
  o.collective = Collective::kSendRecv;
  o.min_bytes = 2;  // under one float
  const std::vector<SweepRow> posted = run_sweep(model, o);
  EXPECT_EQ(posted[0].count, 0u);
  EXPECT_FALSE(posted[0].empty);
  EXPECT_GT(posted[0].out_of_place.time_us, 2.5);
}

}  // namespace
}  // namespace chakrasim::system::nccl
