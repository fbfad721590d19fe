// The flow-level backend (`--backend flow`). Each message is a flow over its route through a
// Fabric (routing.h: ECMP, d-mod-k or fixed); every active flow gets its max-min fair share of
// the links it crosses, recomputed whenever a flow starts or ends, incrementally: only the flows
// whose rate the change can move are re-solved (max_min.h). This is the model SimGrid validated
// (CM02 without TCP corrections); it captures oversubscription, incast and hot spots, and ignores
// packets: queue build-up, congestion-control dynamics, PFC, and the first byte's head start.
//
// Time is kept exact in doubles inside the backend: a flow ends at the exact time its last byte
// leaves, and the others are re-solved at that time, not at a whole ns. Its last byte arrives the
// path's latency later, truncated once to the ns, as the analytical backends truncate latency
// plus serialisation, so that where the models coincide the figures agree to the ns.
//
// It has its own engine (network.h's contract): completions are kept in a heap here; the event
// loop asks next_event_time() (the ns in which the next flow ends) and calls advance_to(t).
// Arrivals go through the global queue.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "network/fabric/fabric.h"
#include "network/fabric/routing.h"
#include "network/flow/completion_heap.h"
#include "network/flow/max_min.h"
#include "network/network.h"

namespace chakrasim::network {

struct FlowOptions {
  RoutingSpec routing = {};
  // Caps each NPU's sending and receiving, over all its links together (0: no cap): two more
  // links per NPU, its NIC out and in, that every flow from or to it crosses.
  double nic_bytes_per_ns = 0;
};

class FlowNetwork final : public Network {
 public:
  FlowNetwork(std::shared_ptr<const Fabric> fabric, EventQueue& queue, ArrivalSink& sink, std::uint64_t ecmp_seed = 1)
      : FlowNetwork(std::move(fabric), queue, sink, FlowOptions{.routing = {.seed = ecmp_seed}}) {}
  FlowNetwork(std::shared_ptr<const Fabric> fabric, EventQueue& queue, ArrivalSink& sink, FlowOptions options);

  void send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) override;
  void handle(const Event& event) override;
  Tick next_event_time() const override;
  void advance_to(Tick t) override;

  // The fabric's links, then (with a NIC cap) each NPU's NIC out and NIC in. Their use is
  // reported per rate segment of every flow: from a rate change to the next, each link the flow
  // crosses carries it at rate / capacity of its capacity.
  std::uint32_t link_count() const override { return solver_.link_count(); }
  std::string link_name(std::uint32_t link) const override;
  void observe_links(LinkObserver* observer) override { observer_ = observer; }
  void observe_flows(FlowObserver* observer) override { flow_observer_ = observer; }

  // For tests: the current rate of the flow carrying `message` (bytes per ns), 0 when none.
  double rate_of(std::uint64_t message) const;
  std::size_t active_flows() const { return active_; }
  // The solver, for its work counters (benchmarks, tests).
  const MaxMinSolver& solver() const { return solver_; }

 private:
  struct Flow {
    std::uint64_t message = 0;
    NpuId src = 0;
    NpuId dst = 0;
    std::uint64_t bytes = 0;
    Tick start = 0;
    double remaining_bytes = 0;
    double rate = 0;        // bytes per ns
    double finish_ns = 0;   // when the last byte leaves, at the current rate (exact)
    double updated_at = 0;  // ns: remaining_bytes is as of this time
    double latency_ns = 0;  // of the whole path
    bool active = false;
  };

  // Takes the solver's new rates: brings each changed flow's bytes up to now at its old rate and
  // reschedules its completion.
  void apply(const std::vector<MaxMinSolver::Change>& changes);
  void finish(std::uint32_t flow);
  // Tells the observer of what flow `id` carried at `rate` from its last change to now.
  void report_segment(std::uint32_t id, double rate);

  std::shared_ptr<const Fabric> fabric_;
  EcmpRouter router_;
  bool nic_limited_ = false;
  LinkObserver* observer_ = nullptr;
  FlowObserver* flow_observer_ = nullptr;
  EventQueue& queue_;
  ArrivalSink& sink_;
  MaxMinSolver solver_;
  std::vector<Flow> flows_;  // by the solver's flow id
  std::size_t active_ = 0;
  std::uint64_t next_flow_key_ = 0;
  CompletionHeap completions_;  // the active flows by exact end
  // The exact time (ns) of the last change of rates: the queue's tick, or within it the exact end
  // of a flow that has ended (never behind either).
  double clock_ns_ = 0;
  std::vector<std::uint32_t> route_;  // scratch
};

}  // namespace chakrasim::network
