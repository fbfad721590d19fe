// Where the NPUs of one phase sit on its logical ring: `size` positions, this NPU at `index`,
// position i being NPU base + i * stride on a network dimension or a flat one* ring, or
// members[i] on a communicator group's ring (the reference's RingTopology index <-> id maps).
// The direct, halving-doubling and double-binary-tree state machines find their peers by
// position, so they hold one of these rather than a list of NPUs.
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.h"

namespace chakrasim::system {

struct RingLayout {
  std::uint32_t size = 1;
  std::uint32_t index = 0;  // this NPU's position
  NpuId base = 0;           // the NPU at position 0 (unused with members)
  NpuId stride = 1;
  const std::vector<NpuId>* members = nullptr;

  NpuId npu_at(std::uint32_t position) const {
    return members != nullptr ? (*members)[position] : base + stride * position;
  }
  // The NPU `distance` positions away: clockwise is towards higher positions.
  NpuId away(std::uint32_t distance, bool clockwise) const {
    distance %= size;
    const std::uint32_t position = clockwise ? (index + distance) % size : (index + size - distance) % size;
    return npu_at(position);
  }
};

}  // namespace chakrasim::system
