// The statistics of the synthesizer: summarising samples as quantiles, rank correlations of normal
// scores, and drawing them back (stratified, with the learned total kept, then coupled by the
// Iman-Conover reordering). No <random> distribution, whose output differs between standard
// libraries: a seed draws the same values wherever the maths library agrees.
#pragma once

#include <cstdint>
#include <vector>

#include "core/splitmix.h"
#include "tools/synthesize/synthesis_model.h"

namespace chakrasim::tools {

// A SplitMix64 stream.
class SplitMix {
 public:
  explicit SplitMix(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double uniform();                      // [0, 1)
  double normal();                       // standard normal (Box-Muller)
  std::uint64_t below(std::uint64_t n);  // [0, n)

 private:
  std::uint64_t state_;
};

// The samples' distribution: exact mean, and min, max and up to 7 quantiles between (one value
// when all samples are equal).
ValueDistribution summarise(std::vector<double> samples);

// The value at probability p in [0, 1] of the piecewise-linear quantile function.
double quantile_at(const ValueDistribution& d, double p);

// `count` integer values of `d`, ascending: one stratified draw from each of `count` equal bands of
// probability, scaled so that their sum is count x mean, rounded so that it stays so (largest
// remainders). So a slot's total, and the traffic of each collective type, is the learned one.
std::vector<std::uint64_t> draw_values(const ValueDistribution& d, std::size_t count, SplitMix& random);

// The inverse of the standard normal distribution function, for p in (0, 1).
double inverse_normal(double p);

// The correlation matrix (row-major) of the columns' normal scores (van der Waerden: the inverse
// normal of (average rank + 1/2) / n). A column with one value correlates 0 with the others.
std::vector<double> normal_score_correlation(const std::vector<std::vector<double>>& columns);

// Iman-Conover: `rows` draws of normals with `correlation` (dimension = columns; repaired towards
// the identity when it is not positive definite), ordered by column 0 (the repetition index).
// Returns, for every other column j, the rank (0 = smallest) its value takes at each row: rank[j-1][row].
std::vector<std::vector<std::size_t>> coupled_ranks(const std::vector<double>& correlation, std::size_t columns,
                                                    std::size_t rows, SplitMix& random);

}  // namespace chakrasim::tools
