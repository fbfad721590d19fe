#include "network/ns3/ns3_network.h"

#include <algorithm>

#include "core/sim_time.h"
#include "network/fabric/empty_message.h"

namespace chakrasim::network {
namespace {

// The engine's nodes are the fabric's, then (with a NIC cap) one host per NPU, behind its NIC.
// Its links are the fabric's, then per NPU r its NIC out (host -> the NPU's fabric node) at
// link_count + r and its NIC in at link_count + npus + r, of no latency.
std::vector<Ns3Link> links_of(const Fabric& fabric, double nic_bytes_per_ns) {
  std::vector<Ns3Link> links;
  links.reserve(fabric.link_count());
  for (const FabricLink& l : fabric.links()) links.push_back({l.from, l.to, l.bytes_per_ns, l.latency_ns});
  if (nic_bytes_per_ns > 0) {
    for (NpuId r = 0; r < fabric.npu_count(); ++r) {
      links.push_back({fabric.node_count() + r, fabric.npu_node(r), nic_bytes_per_ns, 0});
    }
    for (NpuId r = 0; r < fabric.npu_count(); ++r) {
      links.push_back({fabric.npu_node(r), fabric.node_count() + r, nic_bytes_per_ns, 0});
    }
  }
  return links;
}

std::vector<std::uint32_t> hosts_of(const Fabric& fabric, double nic_bytes_per_ns) {
  std::vector<std::uint32_t> hosts;
  for (NpuId r = 0; r < fabric.npu_count(); ++r) {
    hosts.push_back(nic_bytes_per_ns > 0 ? fabric.node_count() + r : fabric.npu_node(r));
  }
  return hosts;
}

}  // namespace

Ns3Network::Ns3Network(std::shared_ptr<const Fabric> fabric, EventQueue& queue, ArrivalSink& sink, Ns3Options options)
    : fabric_(std::move(fabric)),
      router_(*fabric_, std::move(options.routing)),
      nic_limited_(options.nic_bytes_per_ns > 0),
      queue_(queue),
      sink_(sink),
      engine_(fabric_->node_count() + (nic_limited_ ? fabric_->npu_count() : 0),
              links_of(*fabric_, options.nic_bytes_per_ns), hosts_of(*fabric_, options.nic_bytes_per_ns),
              options.settings),
      busy_(fabric_->link_count() + (nic_limited_ ? 2 * fabric_->npu_count() : 0)) {}

std::string Ns3Network::link_name(std::uint32_t link) const { return fabric_->link_or_nic_name(link); }

void Ns3Network::observe_links(LinkObserver* observer) {
  link_observer_ = observer;
  engine_.listen_to_links(observer != nullptr ? this : nullptr);
}

void Ns3Network::on_transmit(std::uint32_t link, std::uint64_t start_ns, std::uint64_t end_ns) {
  Busy& b = busy_[link];
  if (start_ns > b.end) {  // idle since b.end: the busy period before is complete
    if (b.end > b.start) link_observer_->on_link_busy(link, b.start, b.end);
    b.start = start_ns;
  }
  b.end = end_ns;
}

void Ns3Network::tell_busy_links() {
  if (link_observer_ == nullptr) return;
  for (std::uint32_t link = 0; link < busy_.size(); ++link) {
    Busy& b = busy_[link];
    if (b.end > b.start) link_observer_->on_link_busy(link, b.start, b.end);
    b.start = b.end;
  }
}

void Ns3Network::engine_path(NpuId src, NpuId dst, const std::vector<std::uint32_t>& route,
                             std::vector<std::uint32_t>& out) const {
  out.clear();
  if (nic_limited_) out.push_back(fabric_->nic_out_link(src));
  out.insert(out.end(), route.begin(), route.end());
  if (nic_limited_) out.push_back(fabric_->nic_in_link(dst));
}

void Ns3Network::send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) {
  // The same flow keys as the flow backend, so that both take the same routes.
  const std::uint64_t key = next_flow_key_++;
  router_.route(src, dst, key, route_);
  if (bytes == 0) {  // no connection to open
    deliver_empty_message(queue_, *fabric_, route_, src, dst, message, flow_observer_);
    return;
  }
  std::uint32_t tag = 0;
  if (free_pending_.empty()) {
    tag = static_cast<std::uint32_t>(pending_.size());
    pending_.emplace_back();
  } else {
    tag = free_pending_.back();
    free_pending_.pop_back();
  }
  pending_[tag] = {message, {src, dst, bytes, queue_.now(), 0, static_cast<std::uint32_t>(route_.size())}};
  engine_path(src, dst, route_, path_);
  router_.route(dst, src, key, route_);
  engine_path(dst, src, route_, reverse_path_);
  engine_.start_flow(queue_.now(), bytes, tag, path_, reverse_path_);
  ++in_flight_;
}

void Ns3Network::handle(const Event& event) { sink_.on_arrival(event.arg); }

Tick Ns3Network::next_event_time() const {
  if (!ready_.empty()) return ready_at_;
  // With no message in flight, what ns-3 still has to do (closing handshakes, ACKs, cancelled
  // timers) concerns no one until the next send, which runs it first.
  if (in_flight_ == 0) return kNeverTick;
  const std::uint64_t next = engine_.next_event_ns();
  if (next == Ns3Engine::kNoEvent) return kNeverTick;
  return std::max<Tick>(next, queue_.now());
}

void Ns3Network::advance_to(Tick t) {
  for (;;) {
    if (!ready_.empty() && ready_at_ <= t) {
      const std::vector<std::uint64_t> arrived = std::move(ready_);
      ready_.clear();
      in_flight_ -= arrived.size();
      for (const std::uint64_t tag : arrived) {
        Pending done = pending_[tag];  // a copy: the sink may send, and grow pending_
        free_pending_.push_back(static_cast<std::uint32_t>(tag));
        if (flow_observer_ != nullptr) {
          done.record.arrival = queue_.now();
          flow_observer_->on_flow(done.record);
        }
        sink_.on_arrival(done.message);
      }
    }
    if (in_flight_ == 0) {
      tell_busy_links();
      return;
    }
    // Nothing happens in chakrasim before its queue's next event, but for an arrival: ns-3 may
    // run up to that event, and stops at the first arrival on its way.
    engine_.run_until(queue_.empty() ? kMaxSimulatedNs : queue_.next_time());
    ready_ = engine_.take_arrivals();
    if (ready_.empty()) return;
    ready_at_ = engine_.now_ns();
    if (ready_at_ > t) return;  // reported when the loop gets there
  }
}

}  // namespace chakrasim::network
