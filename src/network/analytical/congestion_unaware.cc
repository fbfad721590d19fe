#include "network/analytical/congestion_unaware.h"

#include "core/sim_time.h"

namespace chakrasim::network {

CongestionUnaware::CongestionUnaware(const Topology& topology, EventQueue& queue, ArrivalSink& sink)
    : topology_(topology), queue_(queue), sink_(sink) {
  for (const DimensionSpec& d : topology.spec().dims) bytes_per_ns_.push_back(bytes_per_ns(d.bandwidth_gib_per_s));
}

Tick CongestionUnaware::delay(NpuId src, NpuId dst, std::uint64_t bytes) const {
  const std::size_t dim = topology_.lowest_differing_dim(src, dst);
  const std::uint32_t hops = topology_.hops(dim, topology_.coordinate(src, dim), topology_.coordinate(dst, dim));
  // One truncation of the sum, as the reference: latency and serialisation stay fractional.
  const double ns = hops * topology_.spec().dims[dim].latency_ns + static_cast<double>(bytes) / bytes_per_ns_[dim];
  return ticks_from_ns(ns, [&] { return fmt::format("a message of {} bytes from NPU {} to NPU {}", bytes, src, dst); });
}

void CongestionUnaware::send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) {
  queue_.schedule(queue_.now() + delay(src, dst, bytes), EventTarget::kNetwork, 0, dst, message);
}

void CongestionUnaware::handle(const Event& event) { sink_.on_arrival(event.arg); }

}  // namespace chakrasim::network
