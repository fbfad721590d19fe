// RCCL's MSCCL schedules (msccl.h): which calls they take, and their time.
#include <gtest/gtest.h>

#include "system/nccl/achieved.h"
#include "system/nccl/call_types.h"
#include "system/nccl/msccl.h"
#include "system/nccl_test_support.h"

namespace chakrasim::system::nccl {
namespace {

constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024;

const MscclSchedule* mi300x_schedule(std::uint64_t bytes, std::uint32_t element_bytes = 4, std::uint32_t ranks = 8,
                                     std::uint32_t nodes = 1, Collective c = Collective::kAllReduce,
                                     bool in_place = false) {
  return find_msccl_schedule(kRcclMi300xSchedules, c, ranks, nodes, bytes, element_bytes, in_place);
}

TEST(Msccl, RcclsSchedulesTakeTheSizesTheyName) {
  // 1 KiB-64 KiB: LL on 4 channels; to 512 KiB less a byte: LL on 8; 512 KiB-16 MiB: Simple.
  ASSERT_NE(mi300x_schedule(kKiB), nullptr);
  EXPECT_EQ(mi300x_schedule(kKiB)->protocol, Protocol::kLL);
  EXPECT_EQ(mi300x_schedule(64 * kKiB)->channels, 4u);
  EXPECT_EQ(mi300x_schedule(128 * kKiB)->channels, 8u);
  EXPECT_EQ(mi300x_schedule(128 * kKiB)->protocol, Protocol::kLL);
  EXPECT_EQ(mi300x_schedule(512 * kKiB)->protocol, Protocol::kSimple);
  EXPECT_EQ(mi300x_schedule(16 * kMiB)->protocol, Protocol::kSimple);
  EXPECT_EQ(mi300x_schedule(16 * kMiB + 2 * kKiB), nullptr);  // beyond the last: RCCL's ring
}

TEST(Msccl, InPlaceRcclLeavesElevenToFourteenMibToItsRing) {
  // RCCL's in-place schedules are its out-of-place ones but for 11534337-14680064 bytes.
  const auto in_place_schedule = [](std::uint64_t bytes) {
    return mi300x_schedule(bytes, 4, 8, 1, Collective::kAllReduce, true);
  };
  for (const std::uint64_t bytes :
       {kKiB, 64 * kKiB, 128 * kKiB, 512 * kKiB, 8 * kMiB, 11 * kMiB, 15 * kMiB, 16 * kMiB}) {
    ASSERT_NE(in_place_schedule(bytes), nullptr) << bytes;
    EXPECT_EQ(in_place_schedule(bytes)->protocol, mi300x_schedule(bytes)->protocol) << bytes;
    EXPECT_EQ(in_place_schedule(bytes)->channels, mi300x_schedule(bytes)->channels) << bytes;
  }
  for (const std::uint64_t bytes : {11 * kMiB + 2 * kKiB, 12 * kMiB, 14 * kMiB}) {
    EXPECT_EQ(in_place_schedule(bytes), nullptr) << bytes;
    EXPECT_NE(mi300x_schedule(bytes), nullptr) << bytes;
  }
  EXPECT_NE(in_place_schedule(14 * kMiB + 2 * kKiB), nullptr);
  // The call's model: in place (Enabled::in_place), 12 MiB runs RCCL's ring.
  EXPECT_EQ(AchievedModel(dgx("MI300X"), in_place(Enabled::all()))
                .time(Collective::kAllReduce, 12 * kMiB)
                .choice.algorithm,
            Algorithm::kRing);
  EXPECT_EQ(AchievedModel(dgx("MI300X"), Enabled::all()).time(Collective::kAllReduce, 12 * kMiB).choice.algorithm,
            Algorithm::kMsccl);
}

TEST(Msccl, AScheduleNeedsWholeElementsInEachChunkAndItsRanksInOneNode) {
  // 512 B of floats is 128 elements: not a whole one in each of 256 chunks. 1 KiB of doubles
  // neither; 2 KiB of them is.
  EXPECT_EQ(mi300x_schedule(512), nullptr);
  EXPECT_EQ(mi300x_schedule(kKiB, 8), nullptr);
  EXPECT_NE(mi300x_schedule(2 * kKiB, 8), nullptr);
  EXPECT_EQ(mi300x_schedule(kKiB + 2, 4), nullptr);  // not a whole number of floats
  // Past 64 KiB, 512 chunks: 65 KiB of floats (16640) is 256-whole, not 512-whole.
  EXPECT_EQ(mi300x_schedule(65 * kKiB), nullptr);
  EXPECT_NE(mi300x_schedule(66 * kKiB), nullptr);
  EXPECT_EQ(mi300x_schedule(kMiB, 4, 4), nullptr);  // written for 8 ranks
  EXPECT_EQ(mi300x_schedule(kMiB, 4, 8, 2), nullptr);
  EXPECT_EQ(mi300x_schedule(kMiB, 4, 8, 1, Collective::kAllGather), nullptr);
}

TEST(Msccl, OnEightMi300xsRcclRunsTheScheduleAndNvidiasGpusNever) {
  const AchievedModel mi300x(dgx("MI300X"), Enabled::all());
  const Timing middle = mi300x.time(Collective::kAllReduce, 4 * kMiB);
  EXPECT_EQ(middle.choice.algorithm, Algorithm::kMsccl);
  EXPECT_EQ(middle.choice.protocol, Protocol::kSimple);
  EXPECT_EQ(mi300x.time(Collective::kAllReduce, 32 * kMiB).choice.algorithm, Algorithm::kRing);
  EXPECT_EQ(mi300x.time(Collective::kAllReduce, 256).choice.algorithm, Algorithm::kRing);
  for (const char* gpu : {"H100", "A100", "B200"}) {
    EXPECT_NE(AchievedModel(dgx(gpu), Enabled::all()).time(Collective::kAllReduce, 4 * kMiB).choice.algorithm,
              Algorithm::kMsccl)
        << gpu;
  }
}

TEST(Msccl, NcclAlgoAndTheCallsReductionSwitchItOffNcclProtoDoesNot) {
  Enabled ring = Enabled::all();
  apply_enable_list(ring, "Ring", true, "test");
  EXPECT_EQ(AchievedModel(dgx("MI300X"), ring).time(Collective::kAllReduce, 4 * kMiB).choice.algorithm,
            Algorithm::kRing);
  // RCCL's scheduler does not read NCCL_PROTO: an LL schedule runs with LL "off".
  Enabled no_ll = Enabled::all();
  apply_enable_list(no_ll, "^LL", false, "test");
  const Timing small = AchievedModel(dgx("MI300X"), no_ll).time(Collective::kAllReduce, 64 * kKiB);
  EXPECT_EQ(small.choice.algorithm, Algorithm::kMsccl);
  EXPECT_EQ(small.choice.protocol, Protocol::kLL);
  for (const auto& [op, msccl] : {std::pair{ReduceOp::kSum, true},
                                  {ReduceOp::kProd, true},
                                  {ReduceOp::kMax, true},
                                  {ReduceOp::kMin, true},
                                  {ReduceOp::kAvg, false},
                                  {ReduceOp::kMulSum, false}}) {
    Enabled call = Enabled::all();
    restrict_to_call(call, Collective::kAllReduce, DataType::kFloat, op, dgx("MI300X"));
    EXPECT_EQ(AchievedModel(dgx("MI300X"), call).time(Collective::kAllReduce, 4 * kMiB).choice.algorithm ==
                  Algorithm::kMsccl,
              msccl);
  }
  Enabled doubles = Enabled::all();
  restrict_to_call(doubles, Collective::kAllReduce, DataType::kDouble, ReduceOp::kSum, dgx("MI300X"));
  EXPECT_NE(AchievedModel(dgx("MI300X"), doubles).time(Collective::kAllReduce, kKiB).choice.algorithm,
            Algorithm::kMsccl);
}

TEST(Msccl, AllPairsTakesRcclsLatencyForTwoStepsAndItsShareOfTheLinks) {
  // Each GPU's links carry 2 x 7/8 of the buffer at 0.511 of MI300X's 7 x 64 GB/s (LL: half).
  // Latency, RCCL's MI300X constants: Simple 17 + 2 x 2.1 us, LL 12 + 2 x 0.8 us.
  const AchievedModel mi300x(dgx("MI300X"), Enabled::all());
  const double simple_gb_per_s = 448 * 0.511;
  const double b = 4.0 * kMiB;
  EXPECT_NEAR(mi300x.time(Collective::kAllReduce, 4 * kMiB).us, 21.2 + b * 1.75 / (1000 * simple_gb_per_s), 1e-9);
  const double small = 128.0 * kKiB;
  EXPECT_NEAR(mi300x.time(Collective::kAllReduce, 128 * kKiB).us, 13.6 + small * 1.75 / (500 * simple_gb_per_s), 1e-9);
  // AMD's two 8x MI300X sweeps (docs/nccl.md): 13.1-13.7 us flat from 1 KiB to 8 KiB; 51.7 and
  // 53.0 us at 4 MiB; 148.8 and 149.9 at 16 MiB.
  EXPECT_NEAR(mi300x.time(Collective::kAllReduce, kKiB).us, 13.4, 0.3);
  EXPECT_NEAR(mi300x.time(Collective::kAllReduce, 4 * kMiB).us, 52.4, 52.4 * 0.03);
  EXPECT_NEAR(mi300x.time(Collective::kAllReduce, 16 * kMiB).us, 149.4, 149.4 * 0.01);
  // A platform's latency is added as to any call.
  Machine slower = dgx("MI300X");
  slower.platform_latency_us = 5;
  EXPECT_NEAR(AchievedModel(slower, Enabled::all()).time(Collective::kAllReduce, 4 * kMiB).us,
              mi300x.time(Collective::kAllReduce, 4 * kMiB).us + 5, 1e-9);
}

TEST(Rccl, KeepsLL128OffOnMi300xUnlessNcclProtoIsSet) {
  // RCCL enables LL128 by default only on MI250X: on 4 MI300X (no MSCCL schedule for 4) a
  // 512 KiB all-reduce is LL's or Simple's, where NCCL's model on that mesh would take LL128.
  // With NCCL_PROTO set, RCCL follows the list, LL128 too.
  const AchievedModel rccl(dgx("MI300X", 4), Enabled::all());
  EXPECT_NE(rccl.time(Collective::kAllReduce, 512 * kKiB).choice.protocol, Protocol::kLL128);
  Enabled listed = Enabled::all();
  apply_enable_list(listed, "LL128", false, "test");
  EXPECT_EQ(AchievedModel(dgx("MI300X", 4), listed).time(Collective::kAllReduce, 512 * kKiB).choice.protocol,
            Protocol::kLL128);
  Enabled not_ll = Enabled::all();
  apply_enable_list(not_ll, "^LL", false, "test");
  EXPECT_EQ(AchievedModel(dgx("MI300X", 4), not_ll).time(Collective::kAllReduce, 512 * kKiB).choice.protocol,
            Protocol::kLL128);
  // NCCL_ALGO is not NCCL_PROTO: LL128 stays off.
  Enabled ring = Enabled::all();
  apply_enable_list(ring, "Ring", true, "test");
  EXPECT_NE(AchievedModel(dgx("MI300X", 4), ring).time(Collective::kAllReduce, 512 * kKiB).choice.protocol,
            Protocol::kLL128);
  // NVIDIA's GPUs keep it by default.
  EXPECT_EQ(AchievedModel(dgx("H100", 8, 2), Enabled::all()).time(Collective::kAllGather, 2 * kMiB).choice.protocol,
            Protocol::kLL128);
}

}  // namespace
}  // namespace chakrasim::system::nccl
