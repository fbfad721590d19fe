// The packet-level backend (`--backend ns3`): the Fabric simulated packet by packet by ns-3
// (Debian's ns-3 3.37). Every node of the graph is an ns-3 node with an IPv4 stack, every
// directed link a point-to-point channel of the link's bandwidth and latency whose sending port
// queues data in RED (marking ECN) and ACKs ahead of it, and messages go over DCTCP connections
// (see Ns3Settings) kept open between each pair of NPUs, one message at a time per connection
// (a pair opens another when all of its are busy), as NCCL keeps its connections. Each message
// follows the route the flow backend gives it (the same EcmpRouter, routing spec and flow keys;
// its ACKs take the reverse route of the same key). It arrives when the receiving application
// has read its last byte. A message of 0 bytes takes the path's latency only, as in the flow
// backend. A NIC cap is a link of that rate between each NPU and its node in the fabric, each
// way, that all its traffic crosses.
//
// What it models: packets and their serialisation on every hop, queue build-up in switch
// buffers, tail drops, TCP's handshake (a pair's first message), slow start, congestion
// avoidance, loss recovery and timeouts, ACK traffic. What it ignores: RDMA transports and
// lossless Ethernet (no PFC, no DCQCN or HPCC: Debian's ns-3 has none of them), switch-internal
// contention beyond the output queue of each port, host stack delays.
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

struct Ns3Options {
  RoutingSpec routing = {};
  // Caps each NPU's sending and receiving, over all its links together (0: no cap).
  double nic_bytes_per_ns = 0;
  Ns3Settings settings = {};
};

class Ns3Network final : public Network {
 public:
  Ns3Network(std::shared_ptr<const Fabric> fabric, EventQueue& queue, ArrivalSink& sink, Ns3Options options = {});

  void send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) override;
  void handle(const Event& event) override;
  Tick next_event_time() const override;
  void advance_to(Tick t) override;

  // For tests and benchmarks: ns-3 events run so far, messages in flight, and TCP connections
  // opened.
  std::uint64_t ns3_events() const { return engine_.events(); }
  std::uint64_t in_flight() const { return in_flight_; }
  std::size_t connections() const { return engine_.connections(); }

 private:
  // Appends the engine's links for a message from `src` to `dst` on the fabric route `route`.
  void engine_path(NpuId src, NpuId dst, const std::vector<std::uint32_t>& route,
                   std::vector<std::uint32_t>& out) const;

  std::shared_ptr<const Fabric> fabric_;
  EcmpRouter router_;
  bool nic_limited_ = false;
  EventQueue& queue_;
  ArrivalSink& sink_;
  Ns3Engine engine_;
  std::uint64_t next_flow_key_ = 0;
  std::uint64_t in_flight_ = 0;       // messages sent with bytes, not yet arrived
  std::vector<std::uint64_t> ready_;  // arrived at ready_at_, not yet told to the sink
  Tick ready_at_ = 0;
  std::vector<std::uint32_t> route_, path_, reverse_path_;  // scratch
};

}  // namespace chakrasim::network
