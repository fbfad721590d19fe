// The flow-level backend (`--backend flow`). Each message is a flow over its ECMP route through
// a Fabric; every active flow gets its max-min fair share of the links it crosses, recomputed
// whenever a flow starts or ends, for the flows that share a link with the change, transitively
// (its component of the flow-link graph) and no others. A flow's last byte arrives the path's
// latency after it has been sent (both kept exact, the sum truncated to the ns, as the analytical
// backends truncate). This is the model SimGrid validated (CM02 without TCP
// corrections); it captures oversubscription, incast and hot spots, and ignores packets: queue
// build-up, congestion-control dynamics, PFC, and the first byte's head start.
//
// It has its own engine (network.h's contract): completions are kept in a heap here; the event
// loop asks next_event_time() and calls advance_to(t). Arrivals go through the global queue, at
// the completion time plus the path latency.
#pragma once

#include <cstdint>
#include <memory>
#include <queue>
#include <vector>

#include "network/fabric/fabric.h"
#include "network/fabric/routing.h"
#include "network/network.h"

namespace chakrasim::network {

class FlowNetwork final : public Network {
 public:
  FlowNetwork(std::shared_ptr<const Fabric> fabric, EventQueue& queue, ArrivalSink& sink, std::uint64_t ecmp_seed = 1);

  void send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) override;
  void handle(const Event& event) override;
  Tick next_event_time() const override;
  void advance_to(Tick t) override;

  // No link_count() yet: per-link utilisation for reports is still to come (the row's has_links).

  // For tests: the current rate of the flow carrying `message` (bytes per ns), 0 when none.
  double rate_of(std::uint64_t message) const;
  std::size_t active_flows() const { return active_; }

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  struct Flow {
    std::uint64_t message = 0;
    NpuId dst = 0;
    double remaining_bytes = 0;
    double rate = 0;            // bytes per ns
    double finish_ns = 0;       // when the last byte leaves, at the current rate (exact)
    double previous_rate = 0;   // before the solve under way (0: a new flow)
    double updated_at = 0;      // ns: remaining_bytes is as of this time
    double latency_ns = 0;      // of the whole path
    std::uint32_t version = 0;  // completions of older versions in the heap are stale
    bool active = false;
    bool fixed = false;  // during a solve
    std::vector<std::uint32_t> path;
  };
  struct Link {
    double bytes_per_ns = 0;
    std::vector<std::uint32_t> flows;  // active flows crossing it
    // During a solve:
    double left = 0;
    std::uint32_t unfixed = 0;
    std::uint32_t seen = 0;  // the solve that last collected it
  };
  struct Completion {
    Tick time;
    std::uint32_t flow;
    std::uint32_t version;
    bool operator>(const Completion& o) const { return time != o.time ? time > o.time : flow > o.flow; }
  };

  // Re-solves the component of the flow-link graph around `links` and reschedules its flows.
  void solve_around(const std::vector<std::uint32_t>& links);
  void finish(std::uint32_t flow);

  std::shared_ptr<const Fabric> fabric_;
  EcmpRouter router_;
  EventQueue& queue_;
  ArrivalSink& sink_;
  std::vector<Link> links_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_flows_;
  std::size_t active_ = 0;
  std::uint64_t next_flow_key_ = 0;
  std::uint32_t solve_ = 0;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  std::vector<std::uint32_t> route_;  // scratch
};

}  // namespace chakrasim::network
