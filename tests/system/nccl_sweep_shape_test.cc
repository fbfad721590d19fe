// A sweep's latency floor, peak and half-peak size (sweep_shape.h).
#include <cmath>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "system/nccl/sweep_shape.h"

namespace chakrasim::system::nccl {
namespace {

using ::testing::HasSubstr;

TEST(NcclSweepShape, ReadsTheFloorThePeakAndWhereHalfOfItIsReached) {
  // Given out of order. Bandwidths (bytes / us / 1000): 1 GB/s at 1000 B, 5 at 4000, 8 at 10000,
  // 2 at 20000 (a slow row past the peak). Half the peak, 4, lies between 1000 B (1) and 4000 B
  // (5), three quarters of the way in bandwidth: 1000 x 4^0.75 bytes on the line in log(size).
  const std::vector<SweepPoint> points = {{10000, 1.25}, {1000, 1.0}, {20000, 10.0}, {4000, 0.8}};
  const SweepShape shape = sweep_shape(points);
  EXPECT_EQ(shape.floor_size_bytes, 4000u);  // the least time, though not the smallest size's
  EXPECT_DOUBLE_EQ(shape.floor_us, 0.8);
  EXPECT_EQ(shape.peak_size_bytes, 10000u);
  EXPECT_DOUBLE_EQ(shape.peak_algbw_gb_per_s, 8.0);
  ASSERT_TRUE(shape.half_peak_size_bytes.has_value());
  EXPECT_NEAR(*shape.half_peak_size_bytes, 1000 * std::pow(4.0, 0.75), 1e-9);
  // A row exactly at half is where half is reached.
  const std::vector<SweepPoint> at_half = {{1000, 1.0}, {4000, 1.0}, {16000, 2.0}};
  EXPECT_NEAR(*sweep_shape(at_half).half_peak_size_bytes, 4000, 1e-9);
}

TEST(NcclSweepShape, HalfOfThePeakOfALatencyAndABandwidth) {
  // t(s) = L + s / B, sizes doubling from 8 B to 16 GiB, L = 10 us, B = 1e5 bytes a us (100
  // GB/s). The peak is the largest size's, P = S / (L + S / B); half of it is reached where
  // s / (L + s / B) = P / 2, s = L B P / (2B - P) = 999,884 bytes (P is B within 0.006%). On a
  // line in log(size) between 512 KiB and 1 MiB the crossing comes out 0.15% short of that.
  const double latency_us = 10, bytes_per_us = 1e5;
  std::vector<SweepPoint> points;
  for (int k = 3; k <= 34; ++k) {
    const double size = std::ldexp(1.0, k);
    points.push_back({static_cast<std::uint64_t>(size), latency_us + size / bytes_per_us});
  }
  const SweepShape shape = sweep_shape(points);
  const double largest = std::ldexp(1.0, 34);
  const double peak = largest / (latency_us + largest / bytes_per_us);
  EXPECT_EQ(shape.peak_size_bytes, std::uint64_t{1} << 34);
  EXPECT_NEAR(shape.peak_algbw_gb_per_s, peak / 1000, 1e-9);
  EXPECT_EQ(shape.floor_size_bytes, 8u);
  EXPECT_DOUBLE_EQ(shape.floor_us, latency_us + 8 / bytes_per_us);
  const double half_exact = latency_us * bytes_per_us * peak / (2 * bytes_per_us - peak);
  ASSERT_TRUE(shape.half_peak_size_bytes.has_value());
  EXPECT_NEAR(*shape.half_peak_size_bytes / half_exact, 1, 0.002);
  EXPECT_GT(*shape.half_peak_size_bytes, 512.0 * 1024);
  EXPECT_LT(*shape.half_peak_size_bytes, 1024.0 * 1024);
}

TEST(NcclSweepShape, TiesGoToTheSmallestSize) {
  // 1 us at 1000 and 2000 B (the floor twice), 1 and 2 GB/s then 2 GB/s again at 4000 B (the
  // peak twice): the smaller size of each.
  const std::vector<SweepPoint> ties = {{4000, 2.0}, {2000, 1.0}, {1000, 1.0}};
  const SweepShape shape = sweep_shape(ties);
  EXPECT_EQ(shape.floor_size_bytes, 1000u);
  EXPECT_EQ(shape.peak_size_bytes, 2000u);
}

TEST(NcclSweepShape, ASweepThatStartsPastHalfHasNoHalfPoint) {
  const std::vector<SweepPoint> late = {{1 << 20, 10.0}, {1 << 21, 15.0}};
  const SweepShape shape = sweep_shape(late);
  EXPECT_FALSE(shape.half_peak_size_bytes.has_value());
  EXPECT_EQ(shape.peak_size_bytes, 1u << 21);
}

TEST(NcclSweepShape, NoPointOrOneWithoutARateIsAnError) {
  const auto error_of = [](std::vector<SweepPoint> points) {
    try {
      sweep_shape(points);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_of({}), HasSubstr("no size"));
  EXPECT_THAT(error_of({{0, 1.0}}), HasSubstr("0 bytes in 1 us; expected a size and a time over 0"));
  EXPECT_THAT(error_of({{8, 0.0}}), HasSubstr("8 bytes in 0 us"));
  EXPECT_THAT(error_of({{8, -1.0}}), HasSubstr("8 bytes in -1 us"));
  EXPECT_THAT(error_of({{8, std::nan("")}}), HasSubstr("8 bytes in nan us"));
  EXPECT_THAT(error_of({{8, 1e-320}}), HasSubstr("expected a size and a time over 0"));
}

}  // namespace
}  // namespace chakrasim::system::nccl
