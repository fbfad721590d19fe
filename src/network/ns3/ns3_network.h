// The packet-level backend (`--backend ns3`): the Fabric simulated packet by packet by ns-3
// (Debian's ns-3 3.37). Every node of the graph is an ns-3 node with an IPv4 stack, every
// directed link a point-to-point channel of the link's bandwidth and latency with a drop-tail
// queue at its sender (RED marking ECN), and every message a DCTCP connection (see
// Ns3Settings) from the sending NPU to the receiving one, routed along the flow backend's ECMP
// route (the same EcmpRouter, seed and flow keys; its ACKs take the reverse route of the same
// key). The message arrives when the receiving application has read its last byte. A message
// of 0 bytes takes the path's latency only, as in the flow backend.
//
// What it models: packets and their serialisation on every hop, queue build-up in switch
// buffers, tail drops, TCP's handshake, slow start, congestion avoidance, loss recovery and
// timeouts, ACK traffic. What it ignores: RDMA transports and lossless Ethernet (no PFC, no
// DCQCN or HPCC: Debian's ns-3 has none of them), switch-internal contention beyond the output
// queue of each port, host stack delays.
//
// Own engine (network.h's contract): next_event_time() is ns-3's next event (or a message's
// arrival already found); advance_to(t) runs ns-3 from there up to the global queue's next
// event, stopping early at the first arrival, so ns-3 runs in long stretches and chakrasim sees
// only the moments a message arrives.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "network/fabric/fabric.h"
#include "network/fabric/routing.h"
#include "network/network.h"
#include "network/ns3/ns3_engine.h"

namespace chakrasim::network {

class Ns3Network final : public Network {
 public:
  Ns3Network(std::shared_ptr<const Fabric> fabric, EventQueue& queue, ArrivalSink& sink,
             const Ns3Settings& settings = {}, std::uint64_t ecmp_seed = 1);

  void send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) override;
  void handle(const Event& event) override;
  Tick next_event_time() const override;
  void advance_to(Tick t) override;

  // For tests and benchmarks: ns-3 events run so far, messages in flight, and connections not
  // yet closed at both ends.
  std::uint64_t ns3_events() const { return engine_.events(); }
  std::uint64_t in_flight() const { return in_flight_; }
  std::size_t open_connections() const { return engine_.open_connections(); }

 private:
  std::shared_ptr<const Fabric> fabric_;
  EcmpRouter router_;
  EventQueue& queue_;
  ArrivalSink& sink_;
  Ns3Engine engine_;
  std::uint64_t next_flow_key_ = 0;
  std::uint64_t in_flight_ = 0;       // messages sent with bytes, not yet arrived
  std::vector<std::uint64_t> ready_;  // arrived at ready_at_, not yet told to the sink
  Tick ready_at_ = 0;
  std::vector<std::uint32_t> route_, reverse_;  // scratch
};

}  // namespace chakrasim::network
