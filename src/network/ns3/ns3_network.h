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
#include <string>
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

class Ns3Network final : public Network, private Ns3LinkListener {
 public:
  Ns3Network(std::shared_ptr<const Fabric> fabric, EventQueue& queue, ArrivalSink& sink, Ns3Options options = {});

  // The fabric's links, then (with a NIC cap) each NPU's NIC out and NIC in, as the flow
  // backend numbers them. Their use is told per busy period: the packets a link sends back to
  // back make one on_link_busy, told when the link falls idle or, at the latest, when no message
  // is in flight any more (ACKs and handshakes after that are not told).
  std::uint32_t link_count() const override { return static_cast<std::uint32_t>(busy_.size()); }
  std::string link_name(std::uint32_t link) const override;
  void observe_links(LinkObserver* observer) override;
  // Every message, told when it has arrived (a message of 0 bytes when it is sent).
  void observe_flows(FlowObserver* observer) override { flow_observer_ = observer; }
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
  void on_transmit(std::uint32_t link, std::uint64_t start_ns, std::uint64_t end_ns) override;
  void tell_busy_links();
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
  // A message sent with bytes, not yet arrived: the engine's tag is its index here.
  struct Pending {
    std::uint64_t message = 0;
    FlowRecord record;
  };
  std::vector<Pending> pending_;
  std::vector<std::uint32_t> free_pending_;
  FlowObserver* flow_observer_ = nullptr;
  LinkObserver* link_observer_ = nullptr;
  struct Busy {
    Tick start = 0;
    Tick end = 0;  // start == end: idle, nothing to tell
  };
  std::vector<Busy> busy_;            // per link: its busy period so far
  std::uint64_t in_flight_ = 0;       // messages sent with bytes, not yet arrived
  std::vector<std::uint64_t> ready_;  // tags of messages arrived at ready_at_, not yet told to the sink
  Tick ready_at_ = 0;
  std::vector<std::uint32_t> route_, path_, reverse_path_;  // scratch
};

}  // namespace chakrasim::network
