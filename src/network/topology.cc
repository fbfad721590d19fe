#include "network/topology.h"

#include <algorithm>

#include "core/error.h"

namespace chakrasim::network {

const char* dimension_kind_name(DimensionKind kind) {
  switch (kind) {
    case DimensionKind::kRing: return "Ring";
    case DimensionKind::kFullyConnected: return "FullyConnected";
    case DimensionKind::kSwitch: return "Switch";
  }
  return "?";
}

double npu_fabric_egress_bytes_per_ns(const TopologySpec& spec, NpuId npu) {
  double sum = 0;
  for (const std::uint32_t link : spec.fabric->out_links(spec.fabric->npu_node(npu))) {
    sum += spec.fabric->link(link).bytes_per_ns;
  }
  return spec.nic_bytes_per_ns > 0 ? std::min(sum, spec.nic_bytes_per_ns) : sum;
}

Topology::Topology(TopologySpec spec) : spec_(std::move(spec)) {
  std::uint64_t count = 1;
  for (const DimensionSpec& d : spec_.dims) {
    stride_.push_back(static_cast<NpuId>(count));
    count *= d.npus;
    if (count > 0xffffffffull) fail("the network has more than 2^32 NPUs ({} so far)", count);
  }
  npu_count_ = static_cast<NpuId>(count);
}

std::size_t Topology::lowest_differing_dim(NpuId a, NpuId b) const {
  for (std::size_t d = 0; d < dims(); ++d) {
    if (coordinate(a, d) != coordinate(b, d)) return d;
  }
  return 0;
}

std::uint32_t Topology::hops(std::size_t dim, std::uint32_t a, std::uint32_t b) const {
  const DimensionSpec& d = spec_.dims[dim];
  switch (d.kind) {
    case DimensionKind::kRing: {
      std::uint32_t forward = a > b ? a - b : b - a;
      std::uint32_t backward = d.npus - forward;
      return forward < backward ? forward : backward;
    }
    case DimensionKind::kFullyConnected: return 1;
    case DimensionKind::kSwitch: return 2;
  }
  return 1;
}

}  // namespace chakrasim::network
