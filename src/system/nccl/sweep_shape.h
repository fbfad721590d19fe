// The shape of a message-size sweep, the three things besides the error in time that say whether a
// model has a machine's collectives right: the latency floor (the least a call takes), the
// peak (the most bytes a microsecond any size moves) and the size at which half of that peak is
// first reached, where a call stops being its latency and becomes its bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace chakrasim::system::nccl {

struct SweepPoint {
  std::uint64_t size_bytes = 0;  // as nccl-tests prints it; more than 0
  double time_us = 0;            // more than 0
};

struct SweepShape {
  // The least time any size takes, and the smallest size that takes it: the latency floor, where
  // the sweep starts small enough to show one (a spike, a call held up by something else, is
  // always slower, never faster, so the least time is the floor's truest figure).
  std::uint64_t floor_size_bytes = 0;
  double floor_us = 0;
  std::uint64_t peak_size_bytes = 0;  // the smallest size that moves the most bytes a microsecond
  double peak_algbw_gb_per_s = 0;
  // The size at which the algorithm bandwidth (size / time) first reaches half the peak: between
  // the last size under half and the first at or over it, where the bandwidth crosses half on a
  // line through the two in log(size) (sizes double from row to row in most sweeps, and a
  // bandwidth of L + size / B rises evenly in log(size) around its half). Absent where the
  // smallest size is already at half: the sweep starts too late to show it.
  std::optional<double> half_peak_size_bytes;
};

// The shape of `points`, in any order. Throws Error for no point, or a size or time of 0 or less
// (or not a number).
SweepShape sweep_shape(std::span<const SweepPoint> points);

}  // namespace chakrasim::system::nccl
