#include "network/analytical/congestion_aware.h"

#include <fmt/format.h>

namespace chakrasim::network {

// Link ids, per dimension d with n NPUs per group and N NPUs in all:
//   Ring:            base + 2*npu + {0: towards coordinate+1, 1: towards coordinate-1}
//   FullyConnected:  base + (n-1)*npu + k, k = the offset to the destination's coordinate less one
//                    (offsets, not coordinates, so that a folded run's NPU 0 links stand for all)
//   Switch:          base + 2*npu + {0: up to the switch, 1: down from the switch}
CongestionAware::CongestionAware(const Topology& topology, EventQueue& queue, ArrivalSink& sink, bool folded)
    : topology_(topology), queue_(queue), sink_(sink), folded_(folded) {
  const NpuId owners = folded ? 1 : topology.npu_count();
  for (std::size_t d = 0; d < topology.dims(); ++d) {
    const DimensionSpec& spec = topology.spec().dims[d];
    dim_base_.push_back(static_cast<std::uint32_t>(links_.size()));
    const std::uint32_t per_npu = spec.kind == DimensionKind::kFullyConnected ? spec.npus - 1 : 2;
    link_stride_.push_back(per_npu);
    Link link;
    link.bytes_per_ns = bytes_per_ns(spec.bandwidth_gib_per_s);
    link.latency_ns = spec.latency_ns;
    links_.resize(links_.size() + std::size_t{per_npu} * owners, link);
  }
}

std::uint32_t CongestionAware::next_link(Packet& p) const {
  const std::size_t d = topology_.lowest_differing_dim(p.at, p.dst);
  const DimensionSpec& spec = topology_.spec().dims[d];
  const NpuId stride = topology_.stride(d);
  const std::uint32_t here = topology_.coordinate(p.at, d);
  const std::uint32_t there = topology_.coordinate(p.dst, d);
  switch (spec.kind) {
    case DimensionKind::kRing: {
      const std::uint32_t forward = (there + spec.npus - here) % spec.npus;
      const bool clockwise = forward <= spec.npus - forward;
      const std::uint32_t link = link_id(d, p.at, clockwise ? 0 : 1);
      const std::uint32_t next = clockwise ? (here + 1) % spec.npus : (here + spec.npus - 1) % spec.npus;
      p.at = p.at - here * stride + next * stride;
      return link;
    }
    case DimensionKind::kFullyConnected: {
      const std::uint32_t link = link_id(d, p.at, (there + spec.npus - here) % spec.npus - 1);
      p.at = p.at - here * stride + there * stride;
      return link;
    }
    case DimensionKind::kSwitch: {
      if (!p.at_switch) {
        p.at_switch = true;  // up to the switch; `at` stays the sender until it comes down
        return link_id(d, p.at, 0);
      }
      p.at_switch = false;
      p.at = p.at - here * stride + there * stride;
      return link_id(d, p.at, 1);
    }
  }
  return dim_base_[d];
}

std::string CongestionAware::link_name(std::uint32_t link) const {
  std::size_t d = dim_base_.size() - 1;
  while (link < dim_base_[d]) --d;
  const DimensionSpec& spec = topology_.spec().dims[d];
  const std::uint32_t local = link - dim_base_[d];
  const auto owner = static_cast<NpuId>(local / link_stride_[d]);
  const std::uint32_t k = local % link_stride_[d];
  const NpuId stride = topology_.stride(d);
  const std::uint32_t here = topology_.coordinate(owner, d);
  const std::string where = folded_ ? "every NPU's" : fmt::format("NPU {}", owner);
  switch (spec.kind) {
    case DimensionKind::kRing: {
      const std::uint32_t next = k == 0 ? (here + 1) % spec.npus : (here + spec.npus - 1) % spec.npus;
      if (folded_) return fmt::format("{} ring link {} (dim {})", where, k == 0 ? "+1" : "-1", d);
      return fmt::format("NPU {} -> NPU {} (ring, dim {})", owner, owner - here * stride + next * stride, d);
    }
    case DimensionKind::kFullyConnected: {
      if (folded_) return fmt::format("{} link to offset +{} (fully connected, dim {})", where, k + 1, d);
      const std::uint32_t there = (here + k + 1) % spec.npus;
      return fmt::format("NPU {} -> NPU {} (fully connected, dim {})", owner, owner - here * stride + there * stride, d);
    }
    case DimensionKind::kSwitch:
      return fmt::format("{} {} (switch, dim {})", where, k == 0 ? "up-link" : "down-link", d);
  }
  return where;
}

void CongestionAware::send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) {
  const std::uint32_t id = packets_.add(Packet{message, bytes, src, dst, kNone, kNone, false});
  enqueue(next_link(packets_[id]), id);
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
  const Tick now = queue_.now();
  if (observer_ != nullptr) observer_->on_link_busy(link, now, now + static_cast<Tick>(serialisation));
  queue_.schedule(now + static_cast<Tick>(l.latency_ns + serialisation), EventTarget::kNetwork, kHopArrived,
                  packets_[packet].dst, packet);
  queue_.schedule(now + static_cast<Tick>(serialisation), EventTarget::kNetwork, kLinkFree, 0, link);
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
  if (p.at == p.dst && !p.at_switch) {
    const std::uint64_t message = p.message;
    packets_.release(id);
    sink_.on_arrival(message);
    return;
  }
  enqueue(next_link(p), id);
}

}  // namespace chakrasim::network
