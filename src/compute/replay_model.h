// The replay compute model: every compute node takes its recorded duration (replay_ns). It
// models nothing of the chip; it is exact for traces measured on the machine being simulated.
#pragma once

#include "compute/compute_model.h"

namespace chakrasim::compute {

class ReplayModel final : public ComputeModel {
 public:
  std::string check(const chakra::Graph& /*graph*/, std::uint32_t /*node*/) const override { return {}; }
  std::optional<Tick> duration(const chakra::Graph& graph, std::uint32_t node) const override {
    return replay_ns(graph.duration_micros(node));
  }
};

}  // namespace chakrasim::compute
