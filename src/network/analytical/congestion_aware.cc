#include "network/analytical/congestion_aware.h"

#include "core/sim_time.h"

namespace chakrasim::network {

CongestionAware::CongestionAware(const Topology& topology, EventQueue& queue, ArrivalSink& sink, const Folding* folding)
    : table_(topology, folding), queue_(queue), sink_(sink), links_(table_.size()) {
  for (std::uint32_t l = 0; l < table_.size(); ++l) {
    const DimensionSpec& spec = table_.spec_of(l);
    links_[l].bytes_per_ns = bytes_per_ns(spec.bandwidth_gib_per_s);
    links_[l].latency_ns = spec.latency_ns;
  }
}

void CongestionAware::send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) {
  const std::uint32_t id = packets_.add(Packet{message, bytes, LinkTable::Cursor{src, false}, dst, kNone, kNone});
  Packet& p = packets_[id];
  enqueue(table_.next(p.cursor, p.dst), id);
}

void CongestionAware::enqueue(std::uint32_t link, std::uint32_t packet) {
  Link& l = links_[link];
  packets_[packet].link = link;
  if (!l.busy) {
    transmit(link, packet);
    return;
  }
  packets_[packet].next = kNone;
  if (l.head == kNone) {
    l.head = packet;
  } else {
    packets_[l.tail].next = packet;
  }
  l.tail = packet;
}

// As the reference: the arrival at the next device is scheduled before the link's release, so
// with zero latency the arrival runs first.
void CongestionAware::transmit(std::uint32_t link, std::uint32_t packet) {
  Link& l = links_[link];
  l.busy = true;
  const double serialisation = static_cast<double>(packets_[packet].bytes) / l.bytes_per_ns;
  auto describe = [&] { return fmt::format("a packet of {} bytes on link {}", packets_[packet].bytes, link); };
  const Tick busy_ns = ticks_from_ns(serialisation, describe);
  const Tick hop_ns = ticks_from_ns(l.latency_ns + serialisation, describe);
  const Tick now = queue_.now();
  const Tick free_at = time_after(now, busy_ns, describe);
  const Tick arrives_at = time_after(now, hop_ns, describe);
  if (observer_ != nullptr) observer_->on_link_busy(link, now, free_at);
  queue_.schedule(arrives_at, EventTarget::kNetwork, kHopArrived, packets_[packet].dst, packet);
  queue_.schedule(free_at, EventTarget::kNetwork, kLinkFree, 0, link);
}

void CongestionAware::handle(const Event& event) {
  if (event.kind == kLinkFree) {
    const auto link = static_cast<std::uint32_t>(event.arg);
    Link& l = links_[link];
    l.busy = false;
    if (l.head != kNone) {
      const std::uint32_t packet = l.head;
      l.head = packets_[packet].next;
      if (l.head == kNone) l.tail = kNone;
      transmit(link, packet);
    }
    return;
  }
  const auto id = static_cast<std::uint32_t>(event.arg);
  Packet& p = packets_[id];
  if (LinkTable::arrived(p.cursor, p.dst)) {
    const std::uint64_t message = p.message;
    packets_.release(id);
    sink_.on_arrival(message);
    return;
  }
  enqueue(table_.next(p.cursor, p.dst), id);
}

}  // namespace chakrasim::network
