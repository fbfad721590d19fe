#include "tools/synthesize/synthesis_stats.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

namespace chakrasim::tools {

std::uint64_t SplitMix::next() {
  state_ += 0x9e3779b97f4a7c15ull;
  return splitmix64(state_);
}

double SplitMix::uniform() { return static_cast<double>(next() >> 11) / static_cast<double>(std::uint64_t{1} << 53); }

double SplitMix::normal() {
  const double u1 = 1 - uniform();  // (0, 1]
  const double u2 = uniform();
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

std::uint64_t SplitMix::below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }

ValueDistribution summarise(std::vector<double> samples) {
  ValueDistribution d;
  d.samples = samples.size();
  if (samples.empty()) {
    d.quantiles = {0};
    return d;
  }
  std::sort(samples.begin(), samples.end());
  long double sum = 0;
  for (const double v : samples) sum += v;
  d.mean = static_cast<double>(sum / static_cast<long double>(samples.size()));
  if (samples.front() == samples.back()) {
    d.quantiles = {samples.front()};
    d.mean = samples.front();
    return d;
  }
  const std::size_t q = std::min<std::size_t>(9, samples.size());
  for (std::size_t i = 0; i < q; ++i) {
    const double at = static_cast<double>(i) * static_cast<double>(samples.size() - 1) / static_cast<double>(q - 1);
    const auto low = static_cast<std::size_t>(std::floor(at));
    const std::size_t high = std::min(low + 1, samples.size() - 1);
    const double frac = at - static_cast<double>(low);
    d.quantiles.push_back(samples[low] + frac * (samples[high] - samples[low]));
  }
  return d;
}

double quantile_at(const ValueDistribution& d, double p) {
  if (d.quantiles.size() == 1) return d.quantiles.front();
  const double at = std::clamp(p, 0.0, 1.0) * static_cast<double>(d.quantiles.size() - 1);
  const auto low = std::min(static_cast<std::size_t>(at), d.quantiles.size() - 2);
  const double frac = at - static_cast<double>(low);
  return d.quantiles[low] + frac * (d.quantiles[low + 1] - d.quantiles[low]);
}

std::vector<std::uint64_t> draw_values(const ValueDistribution& d, std::size_t count, SplitMix& random) {
  std::vector<std::uint64_t> out(count);
  if (count == 0) return out;
  if (d.constant()) {
    std::fill(out.begin(), out.end(), static_cast<std::uint64_t>(std::llround(d.quantiles.front())));
    return out;
  }
  std::vector<double> drawn(count);
  long double sum = 0;
  for (std::size_t t = 0; t < count; ++t) {
    drawn[t] = quantile_at(d, (static_cast<double>(t) + random.uniform()) / static_cast<double>(count));
    sum += drawn[t];
  }
  const long double target = static_cast<long double>(d.mean) * static_cast<long double>(count);
  const long double scale = sum > 0 ? target / sum : 1;
  // Largest remainders: the rounded values sum to the rounded target.
  std::vector<std::pair<double, std::size_t>> remainders(count);
  long double floor_sum = 0;
  for (std::size_t t = 0; t < count; ++t) {
    const long double v = std::max<long double>(0, drawn[t] * scale);
    const long double whole = std::floor(v);
    out[t] = static_cast<std::uint64_t>(whole);
    floor_sum += whole;
    remainders[t] = {static_cast<double>(v - whole), t};
  }
  auto missing = static_cast<std::int64_t>(std::llround(static_cast<double>(std::roundl(target) - floor_sum)));
  std::sort(remainders.begin(), remainders.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (std::size_t k = 0; missing > 0 && k < count; ++k, --missing) ++out[remainders[k].second];
  std::sort(out.begin(), out.end());
  return out;
}

double inverse_normal(double p) {
  p = std::clamp(p, 1e-300, 1 - 1e-16);
  // A logistic first guess, then Newton steps on the distribution function.
  double x = std::log(p / (1 - p)) / 1.702;
  for (int i = 0; i < 60; ++i) {
    const double cdf = 0.5 * std::erfc(-x / std::numbers::sqrt2);
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
    if (pdf < 1e-300) break;
    const double step = (cdf - p) / pdf;
    x -= std::clamp(step, -1.0, 1.0);
    if (std::fabs(step) < 1e-12) break;
  }
  return x;
}

namespace {

// Average ranks (ties share their mean rank), 0-based.
std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean = (static_cast<double>(i) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = mean;
    i = j + 1;
  }
  return rank;
}

// The lower-triangular L with L L^T = m, or empty when m is not positive semi-definite. A zero
// pivot (perfectly correlated columns) gives a zero column, so that such columns stay exactly
// in step.
std::vector<double> cholesky(const std::vector<double>& m, std::size_t n) {
  std::vector<double> l(n * n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      double s = m[i * n + j];
      for (std::size_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      if (i == j) {
        if (s < -1e-9) return {};
        l[i * n + i] = s <= 1e-12 ? 0 : std::sqrt(s);
      } else {
        l[i * n + j] = l[j * n + j] == 0 ? 0 : s / l[j * n + j];
      }
    }
  }
  return l;
}

}  // namespace

std::vector<double> normal_score_correlation(const std::vector<std::vector<double>>& columns) {
  const std::size_t d = columns.size();
  const std::size_t n = d == 0 ? 0 : columns.front().size();
  std::vector<std::vector<double>> scores(d);
  std::vector<double> norm(d, 0);
  for (std::size_t c = 0; c < d; ++c) {
    const std::vector<double> rank = average_ranks(columns[c]);
    scores[c].resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      scores[c][i] = inverse_normal((rank[i] + 0.5) / static_cast<double>(n));
      norm[c] += scores[c][i] * scores[c][i];
    }
  }
  std::vector<double> out(d * d, 0);
  for (std::size_t a = 0; a < d; ++a) {
    for (std::size_t b = 0; b < d; ++b) {
      if (a == b) {
        out[a * d + b] = 1;
        continue;
      }
      double dot = 0;
      for (std::size_t i = 0; i < n; ++i) dot += scores[a][i] * scores[b][i];
      const double denominator = std::sqrt(norm[a] * norm[b]);
      out[a * d + b] = denominator > 0 ? std::clamp(dot / denominator, -1.0, 1.0) : 0;
    }
  }
  return out;
}

std::vector<std::vector<std::size_t>> coupled_ranks(const std::vector<double>& correlation, std::size_t columns,
                                                    std::size_t rows, SplitMix& random) {
  // Shrunk towards the identity until it factors: a learned matrix is positive semi-definite,
  // one rounded to three decimals or edited may not be.
  std::vector<double> l;
  for (const double shrink : {0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0}) {
    std::vector<double> m(columns * columns);
    for (std::size_t i = 0; i < columns; ++i) {
      for (std::size_t j = 0; j < columns; ++j) {
        m[i * columns + j] = (1 - shrink) * correlation[i * columns + j] + (i == j ? shrink : 0);
      }
    }
    l = cholesky(m, columns);
    if (!l.empty()) break;
  }
  std::vector<std::vector<double>> z(rows, std::vector<double>(columns));
  std::vector<double> g(columns);
  for (std::size_t r = 0; r < rows; ++r) {
    for (double& x : g) x = random.normal();
    for (std::size_t i = 0; i < columns; ++i) {
      double s = 0;
      for (std::size_t k = 0; k <= i; ++k) s += l[i * columns + k] * g[k];
      z[r][i] = s;
    }
  }
  std::stable_sort(z.begin(), z.end(), [](const auto& a, const auto& b) { return a[0] < b[0]; });
  std::vector<std::vector<std::size_t>> ranks(columns - 1, std::vector<std::size_t>(rows));
  std::vector<std::size_t> order(rows);
  for (std::size_t c = 1; c < columns; ++c) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return z[a][c] < z[b][c]; });
    for (std::size_t k = 0; k < rows; ++k) ranks[c - 1][order[k]] = k;
  }
  return ranks;
}

}  // namespace chakrasim::tools
