// The synthesizer's statistics (tools/synthesize/synthesis_stats.h), against closed forms.
#include "tools/synthesize/synthesis_stats.h"

#include <numeric>

#include <gtest/gtest.h>

namespace chakrasim::test {
namespace {

TEST(SynthesisStats, SummariesKeepTheMeanAndTheRange) {
  const tools::ValueDistribution constant = tools::summarise({5, 5, 5});
  EXPECT_TRUE(constant.constant());
  EXPECT_EQ(constant.quantiles.front(), 5);
  // 1..17: nine quantiles at probabilities k/8 of the sorted samples are 1, 3, ..., 17.
  std::vector<double> samples(17);
  std::iota(samples.begin(), samples.end(), 1);
  const tools::ValueDistribution d = tools::summarise(samples);
  EXPECT_EQ(d.samples, 17u);
  EXPECT_DOUBLE_EQ(d.mean, 9);
  ASSERT_EQ(d.quantiles.size(), 9u);
  for (std::size_t k = 0; k < 9; ++k) EXPECT_DOUBLE_EQ(d.quantiles[k], 1 + 2.0 * static_cast<double>(k));
  // Fewer samples than nine: each is a quantile.
  EXPECT_EQ(tools::summarise({3, 1, 2}).quantiles, (std::vector<double>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(tools::quantile_at(d, 0.5), 9);
  EXPECT_DOUBLE_EQ(tools::quantile_at(d, 1.0 / 16), 2);  // halfway between the first two
}

// The draws sum to count x mean exactly (largest remainders), whatever the count, and ascend.
TEST(SynthesisStats, DrawsKeepTheTotal) {
  tools::ValueDistribution d;
  d.mean = 1000.5;
  d.quantiles = {10, 200, 900, 5000};
  tools::SplitMix random(3);
  for (const std::size_t count : {1u, 2u, 7u, 100u, 1001u}) {
    const std::vector<std::uint64_t> v = tools::draw_values(d, count, random);
    ASSERT_EQ(v.size(), count);
    const std::uint64_t sum = std::accumulate(v.begin(), v.end(), std::uint64_t{0});
    EXPECT_EQ(sum, static_cast<std::uint64_t>(std::llround(1000.5 * static_cast<double>(count)))) << count;
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
  }
}

TEST(SynthesisStats, InverseNormal) {
  EXPECT_NEAR(tools::inverse_normal(0.5), 0, 1e-12);
  EXPECT_NEAR(tools::inverse_normal(0.975), 1.959963984540054, 1e-9);
  EXPECT_NEAR(tools::inverse_normal(0.001), -3.090232306167813, 1e-9);
}

// Monotone columns have normal-score correlation 1 (or -1 reversed); the Iman-Conover draw then
// orders the column with the repetition index (or against it).
TEST(SynthesisStats, CorrelationsOrderTheDraws) {
  const std::vector<double> up = {1, 5, 7, 20}, down = {9, 4, 2, 1}, position = {0, 1, 2, 3};
  const std::vector<double> c = tools::normal_score_correlation({position, up, down});
  EXPECT_DOUBLE_EQ(c[1], 1);
  EXPECT_DOUBLE_EQ(c[2], -1);
  EXPECT_DOUBLE_EQ(c[4], 1);
  EXPECT_DOUBLE_EQ(c[5], -1);
  tools::SplitMix random(11);
  const auto ranks = tools::coupled_ranks(c, 3, 50, random);
  ASSERT_EQ(ranks.size(), 2u);
  for (std::size_t row = 0; row < 50; ++row) {
    EXPECT_EQ(ranks[0][row], row);
    EXPECT_EQ(ranks[1][row], 49 - row);
  }
  // Uncorrelated: a permutation of the ranks.
  const auto free = tools::coupled_ranks({1, 0, 0, 1}, 2, 30, random);
  std::vector<std::size_t> sorted = free[0];
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t k = 0; k < 30; ++k) EXPECT_EQ(sorted[k], k);
}

}  // namespace
}  // namespace chakrasim::test
