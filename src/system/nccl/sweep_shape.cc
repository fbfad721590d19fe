#include "system/nccl/sweep_shape.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace chakrasim::system::nccl {

SweepShape sweep_shape(std::span<const SweepPoint> points) {
  if (points.empty()) throw Error("a sweep's shape: no size to read it from");
  for (const SweepPoint& p : points) {
    if (p.size_bytes == 0 || !(p.time_us > 0) || !std::isfinite(static_cast<double>(p.size_bytes) / p.time_us)) {
      throw Error(fmt::format("a sweep's shape: {} bytes in {} us; expected a size and a time over 0, the bytes a rate",
                              p.size_bytes, p.time_us));
    }
  }
  std::vector<SweepPoint> by_size(points.begin(), points.end());
  std::stable_sort(by_size.begin(), by_size.end(),
                   [](const SweepPoint& a, const SweepPoint& b) { return a.size_bytes < b.size_bytes; });
  // bytes / us is MB/s; / 1000 gives GB/s, nccl-tests' algbw.
  const auto algbw = [](const SweepPoint& p) { return static_cast<double>(p.size_bytes) / p.time_us / 1000; };
  SweepShape shape;
  shape.floor_size_bytes = by_size.front().size_bytes;
  shape.floor_us = by_size.front().time_us;
  for (const SweepPoint& p : by_size) {
    if (p.time_us < shape.floor_us) {
      shape.floor_us = p.time_us;
      shape.floor_size_bytes = p.size_bytes;
    }
    if (algbw(p) > shape.peak_algbw_gb_per_s) {
      shape.peak_algbw_gb_per_s = algbw(p);
      shape.peak_size_bytes = p.size_bytes;
    }
  }
  const double half = shape.peak_algbw_gb_per_s / 2;
  if (algbw(by_size.front()) >= half) return shape;
  for (std::size_t i = 1; i < by_size.size(); ++i) {
    const double below = algbw(by_size[i - 1]), at = algbw(by_size[i]);
    if (at < half) continue;
    // below < half <= at, as the first row at or over half follows one under it.
    const double share = (half - below) / (at - below);
    const double log_below = std::log(static_cast<double>(by_size[i - 1].size_bytes));
    const double log_at = std::log(static_cast<double>(by_size[i].size_bytes));
    shape.half_peak_size_bytes = std::exp(log_below + share * (log_at - log_below));
    break;
  }
  return shape;
}

}  // namespace chakrasim::system::nccl
