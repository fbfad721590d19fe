// A multi-dimensional physical topology: each dimension is a Ring, a FullyConnected group or a
// Switch of `npus` NPUs with a per-link bandwidth and latency (docs/astra-sim-model.md §1.2).
// Rank <-> coordinates: dimension 0 varies fastest, rank = c0 + n0*(c1 + n1*(c2 + ...)).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/types.h"
#include "network/fabric/fabric.h"
#include "network/fabric/routing.h"

namespace chakrasim::network {

enum class DimensionKind : std::uint8_t { kRing, kFullyConnected, kSwitch };
const char* dimension_kind_name(DimensionKind kind);

struct DimensionSpec {
  DimensionKind kind = DimensionKind::kRing;
  std::uint32_t npus = 0;
  // Per link and direction. The YAML says "GB/s" but means GB = 2^30 bytes (docs/astra-sim-model.md
  // §1.2; bytes_per_ns below converts with 2^30), so the name says GiB/s.
  double bandwidth_gib_per_s = 0;
  double latency_ns = 0;  // per hop
};

struct TopologySpec {
  std::vector<DimensionSpec> dims;
  // A network drawn as a graph (topology: [ Custom ], network/fabric/fabric.h), for the backends
  // that route through one (their row says routes_fabric). `dims` is then one Switch dimension
  // of all its NPUs, for the collective algorithms, which reason in dimensions.
  std::shared_ptr<const Fabric> fabric = nullptr;
  // For the backends that route through a graph (the dimensions' own graph when no fabric is
  // given): how routes are chosen, and a cap on each NPU's injection and reception (0: none).
  RoutingSpec routing = {};
  double nic_bytes_per_ns = 0;
};

// Bytes per ns for a bandwidth in GiB/s (the network YAML's "GB/s"), computed in the reference's
// order (x 2^30, then / 10^9) so that every truncation downstream matches.
inline double bytes_per_ns(double bandwidth_gib_per_s) {
  return bandwidth_gib_per_s * static_cast<double>(1u << 30) / 1'000'000'000.0;
}

// The most one NPU can send at once over its links in a dimension, in bytes per ns: two ring
// links, n-1 links of a fully connected group, one link up to a switch (network/links.h draws
// them). A collective's bus bandwidth above the sum over the dimensions it used is more than the
// links can carry.
inline double npu_egress_bytes_per_ns(const DimensionSpec& dim) {
  const double links = dim.kind == DimensionKind::kRing             ? 2.0
                       : dim.kind == DimensionKind::kFullyConnected ? static_cast<double>(dim.npus - 1)
                                                                    : 1.0;
  return dim.npus < 2 ? 0.0 : links * bytes_per_ns(dim.bandwidth_gib_per_s);
}

// The same for a network drawn as a graph (spec.fabric set): NPU `npu`'s out-links summed,
// capped by its NIC when the spec caps injection (nic_bytes_per_ns).
double npu_fabric_egress_bytes_per_ns(const TopologySpec& spec, NpuId npu);

class Topology {
 public:
  explicit Topology(TopologySpec spec);

  const TopologySpec& spec() const { return spec_; }
  const Fabric* fabric() const { return spec_.fabric.get(); }
  std::size_t dims() const { return spec_.dims.size(); }
  std::uint32_t npus_in(std::size_t dim) const { return spec_.dims[dim].npus; }
  NpuId npu_count() const { return npu_count_; }
  // Rank distance between neighbours in `dim`: the product of the sizes of lower dimensions.
  NpuId stride(std::size_t dim) const { return stride_[dim]; }
  std::uint32_t coordinate(NpuId npu, std::size_t dim) const { return (npu / stride_[dim]) % spec_.dims[dim].npus; }
  // The lowest dimension in which two distinct NPUs' coordinates differ.
  std::size_t lowest_differing_dim(NpuId a, NpuId b) const;
  // Hops between coordinates a and b of `dim`: shorter way round a (bidirectional) ring,
  // 1 in a FullyConnected group, 2 (up and down) through a switch.
  std::uint32_t hops(std::size_t dim, std::uint32_t a, std::uint32_t b) const;

 private:
  TopologySpec spec_;
  std::vector<NpuId> stride_;
  NpuId npu_count_ = 1;
};

}  // namespace chakrasim::network
