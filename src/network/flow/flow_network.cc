#include "network/flow/flow_network.h"

#include <algorithm>
#include <cmath>

#include "core/sim_time.h"
#include "network/fabric/empty_message.h"

namespace chakrasim::network {

namespace {

// The fabric's links, then with a NIC cap each NPU's NIC out and NIC in.
std::vector<double> capacities(const Fabric& fabric, double nic_bytes_per_ns) {
  std::vector<double> out(fabric.link_count());
  for (std::uint32_t id = 0; id < out.size(); ++id) out[id] = fabric.link(id).bytes_per_ns;
  if (nic_bytes_per_ns > 0) out.resize(out.size() + 2 * std::size_t{fabric.npu_count()}, nic_bytes_per_ns);
  return out;
}

}  // namespace

FlowNetwork::FlowNetwork(std::shared_ptr<const Fabric> fabric, EventQueue& queue, ArrivalSink& sink,
                         FlowOptions options)
    : fabric_(std::move(fabric)),
      router_(*fabric_, std::move(options.routing)),
      nic_limited_(options.nic_bytes_per_ns > 0),
      queue_(queue),
      sink_(sink),
      solver_(capacities(*fabric_, options.nic_bytes_per_ns)) {}

void FlowNetwork::send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) {
  router_.route(src, dst, next_flow_key_++, route_);
  if (route_.empty()) bytes = 0;  // to itself: nothing crosses a link
  if (bytes == 0) {               // nothing to share: the path's latency alone
    deliver_empty_message(queue_, *fabric_, route_, src, dst, message, flow_observer_);
    return;
  }
  double latency = 0;
  for (std::uint32_t id : route_) latency += fabric_->link(id).latency_ns;
  if (nic_limited_) {
    route_.push_back(fabric_->nic_out_link(src));
    route_.push_back(fabric_->nic_in_link(dst));
  }
  const std::uint32_t id = solver_.add(route_);
  if (id >= flows_.size()) flows_.resize(id + 1);
  Flow& f = flows_[id];
  f.message = message;
  f.src = src;
  f.dst = dst;
  f.bytes = bytes;
  f.start = queue_.now();
  f.remaining_bytes = static_cast<double>(bytes);
  f.rate = 0;
  // A flow that ended within this ns, after its start, may have moved the clock past it.
  clock_ns_ = std::max(clock_ns_, static_cast<double>(queue_.now()));
  f.updated_at = clock_ns_;
  f.latency_ns = latency;
  f.active = true;
  ++active_;
  apply(solver_.solve());
}

void FlowNetwork::apply(const std::vector<MaxMinSolver::Change>& changes) {
  const double now = clock_ns_;
  for (const MaxMinSolver::Change& change : changes) {
    Flow& f = flows_[change.flow];
    if (observer_ != nullptr && change.old_rate > 0) report_segment(change.flow, change.old_rate);
    f.remaining_bytes = std::max(0.0, f.remaining_bytes - change.old_rate * (now - f.updated_at));
    f.updated_at = now;
    f.rate = solver_.rate(change.flow);
    if (f.rate <= 0) {  // never for positive capacities; a re-solve will give it a rate
      completions_.erase(change.flow);
      continue;
    }
    f.finish_ns = now + f.remaining_bytes / f.rate;
    ticks_from_ns(f.finish_ns, [&] {  // a time the clock can hold, or a clear error now
      return fmt::format("a flow with {} bytes left at {} bytes/ns", f.remaining_bytes, f.rate);
    });
    completions_.set(change.flow, f.finish_ns);
  }
}

Tick FlowNetwork::next_event_time() const {
  // The ns in which the next flow ends.
  if (completions_.empty()) return kNeverTick;
  return std::max(queue_.now(), static_cast<Tick>(completions_.top_ns()));
}

void FlowNetwork::finish(std::uint32_t id) {
  Flow& f = flows_[id];
  f.active = false;
  --active_;
  if (observer_ != nullptr) report_segment(id, f.rate);
  const auto hops = static_cast<std::uint32_t>(solver_.links_of(id).size()) - (nic_limited_ ? 2u : 0u);
  solver_.remove(id);
  // The last byte arrives the path latency after it was sent, truncated once, as the
  // congestion-aware backend truncates latency plus serialisation.
  const Tick at = std::max(queue_.now(), ticks_from_ns(f.finish_ns + f.latency_ns, [&] {
                             return fmt::format("a flow's arrival at {} ns", f.finish_ns + f.latency_ns);
                           }));
  queue_.schedule(at, EventTarget::kNetwork, 0, f.dst, f.message);
  if (flow_observer_ != nullptr) flow_observer_->on_flow({f.src, f.dst, f.bytes, f.start, at, hops});
}

void FlowNetwork::advance_to(Tick t) {
  // The flows ending within ns t, in the order of their exact ends: each end re-solves the
  // others at that exact time, so that they get the freed capacity neither early nor late; a
  // re-solve may end more flows within t.
  const double end_of_t = static_cast<double>(t) + 1.0;
  while (!completions_.empty() && completions_.top_ns() < end_of_t) {
    clock_ns_ = std::max(clock_ns_, completions_.top_ns());
    while (!completions_.empty() && completions_.top_ns() <= clock_ns_) {
      const std::uint32_t id = completions_.top();
      completions_.erase(id);
      finish(id);
    }
    apply(solver_.solve());
  }
}

void FlowNetwork::report_segment(std::uint32_t id, double rate) {
  const auto from = static_cast<Tick>(flows_[id].updated_at);
  const auto to = static_cast<Tick>(clock_ns_);
  if (to <= from) return;
  for (std::uint32_t l : solver_.links_of(id)) {
    observer_->on_link_share(l, from, to, std::min(1.0, rate / solver_.capacity(l)));
  }
}

std::string FlowNetwork::link_name(std::uint32_t link) const { return fabric_->link_or_nic_name(link); }

void FlowNetwork::handle(const Event& event) { sink_.on_arrival(event.arg); }

double FlowNetwork::rate_of(std::uint64_t message) const {
  for (const Flow& f : flows_) {
    if (f.active && f.message == message) return f.rate;
  }
  return 0;
}

}  // namespace chakrasim::network
