// The analytical congestion-unaware backend (docs/astra-sim-model.md §6.2). A message takes
// floor(hops * latency + bytes / bandwidth) ns, with the parameters of the lowest dimension in
// which source and destination differ. It models per-hop latency and one serialisation
// (cut-through); it ignores bandwidth sharing between concurrent messages, and charges a
// message that crosses several dimensions at the cost of the lowest one, as the reference does.
#pragma once

#include <vector>

#include "network/network.h"

namespace chakrasim::network {

class CongestionUnaware final : public Network {
 public:
  CongestionUnaware(const Topology& topology, EventQueue& queue, ArrivalSink& sink);
  void send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) override;
  void handle(const Event& event) override;

  // The delay send() charges, exposed for tests and closed-form checks.
  Tick delay(NpuId src, NpuId dst, std::uint64_t bytes) const;

 private:
  const Topology& topology_;
  EventQueue& queue_;
  ArrivalSink& sink_;
  std::vector<double> bytes_per_ns_;
};

}  // namespace chakrasim::network
