#include "network/fabric/generators.h"

#include <cmath>

#include "core/error.h"

namespace chakrasim::network {
namespace {

constexpr std::uint64_t kMaxNodes = std::uint64_t{1} << 26;

void check_link(const LinkSpec& link, const std::string& where) {
  if (!(link.bytes_per_ns > 0) || !std::isfinite(link.bytes_per_ns))
    fail("{}: bandwidth {} GB/s; expected a positive number", where, link.bytes_per_ns);
  if (!(link.latency_ns >= 0) || !std::isfinite(link.latency_ns))
    fail("{}: latency {} ns; expected 0 or more", where, link.latency_ns);
}

}  // namespace

Fabric switched_cluster(const SwitchedClusterSpec& spec, const std::string& source) {
  const std::size_t tiers = spec.children.size();
  if (spec.npus == 0) fail("{}: npus is 0; expected at least 1", source);
  if (tiers == 0 || spec.parents.size() != tiers || spec.tier_links.size() != tiers) {
    fail("{}: {} tiers of children, {} of parents and {} of links; expected one of each per tier, at least one tier",
         source, tiers, spec.parents.size(), spec.tier_links.size());
  }
  const std::uint32_t per_server = spec.npus_per_server;
  if (per_server == 0 || spec.npus % per_server != 0) {
    fail("{}: {} NPUs per server; expected a number that divides the {} NPUs", source, per_server, spec.npus);
  }
  if (spec.rail_optimised && per_server < 2) fail("{}: rail-optimised needs servers of 2 or more NPUs", source);
  if (spec.planes == 0) fail("{}: planes is 0; expected 1 or more", source);
  std::uint64_t nics = 1;
  for (std::size_t i = 0; i < tiers; ++i) {
    if (spec.children[i] == 0 || spec.parents[i] == 0)
      fail("{}: tier {}: {} children and {} parents; expected 1 or more of each", source, i + 1, spec.children[i],
           spec.parents[i]);
    nics *= spec.children[i];
    if (nics > kMaxNodes) fail("{}: the tree has more than {} NICs; expected a smaller fabric", source, kMaxNodes);
    check_link(spec.tier_links[i], fmt::format("{}: tier {} links", source, i + 1));
  }
  if (nics < spec.npus) {
    fail("{}: the tree holds {} NICs (the product of the children per tier); expected at least one per NPU, {}", source,
         nics, spec.npus);
  }
  if (per_server > 1) check_link(spec.scale_up, fmt::format("{}: scale-up links", source));

  // Nodes per tier of one plane: (product of m above the tier) x (product of w up to it).
  std::vector<std::uint64_t> above(tiers + 1, 1), below(tiers + 1, 1);  // index: tier 0..h
  for (std::size_t i = tiers; i-- > 0;) above[i] = above[i + 1] * spec.children[i];
  for (std::size_t i = 1; i <= tiers; ++i) below[i] = below[i - 1] * spec.parents[i - 1];
  std::uint64_t switches_per_plane = 0;
  for (std::size_t i = 1; i <= tiers; ++i) switches_per_plane += above[i] * below[i];
  if (switches_per_plane * spec.planes + spec.npus > kMaxNodes)
    fail("{}: more than {} switches; expected a smaller fabric", source, kMaxNodes);

  Fabric f;
  for (std::uint32_t r = 0; r < spec.npus; ++r) f.add_node(FabricNodeKind::kNpu);
  if (per_server > 1) {
    for (std::uint32_t s = 0; s < spec.npus / per_server; ++s) {
      const std::uint32_t sw = f.add_node(FabricNodeKind::kScaleUpSwitch);
      for (std::uint32_t k = 0; k < per_server; ++k)
        f.add_cable(s * per_server + k, sw, spec.scale_up.bytes_per_ns, spec.scale_up.latency_ns);
    }
  }
  const std::uint32_t servers = spec.npus / per_server;
  for (std::uint32_t plane = 0; plane < spec.planes; ++plane) {
    // first[i]: node id of tier i's first switch (index A x below[i] + B within the tier).
    std::vector<std::uint32_t> first(tiers + 1, 0);
    for (std::size_t i = 1; i <= tiers; ++i) {
      first[i] = f.node_count();
      for (std::uint64_t k = 0; k < above[i] * below[i]; ++k) f.add_node(FabricNodeKind::kScaleOutSwitch);
    }
    // Tier 0 -> 1: NIC k (a NIC per NPU and plane) to its w[0] leaves.
    for (std::uint32_t k = 0; k < spec.npus; ++k) {
      const std::uint32_t npu = spec.rail_optimised ? (k % servers) * per_server + k / servers : k;
      const std::uint64_t a = k / spec.children[0];
      for (std::uint32_t b = 0; b < spec.parents[0]; ++b) {
        f.add_cable(npu, first[1] + static_cast<std::uint32_t>(a * below[1] + b),
                    spec.tier_links[0].bytes_per_ns / spec.planes, spec.tier_links[0].latency_ns);
      }
    }
    // Tier i -> i+1: switch (A, B) to (A / m[i], B + below[i] x b) for b < w[i].
    for (std::size_t i = 1; i < tiers; ++i) {
      for (std::uint64_t a = 0; a < above[i]; ++a) {
        for (std::uint64_t b0 = 0; b0 < below[i]; ++b0) {
          const std::uint32_t node = first[i] + static_cast<std::uint32_t>(a * below[i] + b0);
          for (std::uint64_t b = 0; b < spec.parents[i]; ++b) {
            const std::uint64_t parent = (a / spec.children[i]) * below[i + 1] + b0 + below[i] * b;
            f.add_cable(node, first[i + 1] + static_cast<std::uint32_t>(parent), spec.tier_links[i].bytes_per_ns,
                        spec.tier_links[i].latency_ns);
          }
        }
      }
    }
  }
  f.finish(source);
  return f;
}

Fabric dragonfly(const DragonflySpec& spec, const std::string& source) {
  const std::uint32_t a = spec.routers, p = spec.npus, h = spec.global_links;
  if (a == 0 || p == 0 || h == 0) {
    fail("{}: {} routers per group, {} NPUs per router, {} global links per router; expected 1 or more of each", source,
         a, p, h);
  }
  const std::uint64_t groups = spec.groups != 0 ? spec.groups : std::uint64_t{a} * h + 1;
  if (groups < 2 || groups > std::uint64_t{a} * h + 1) {
    fail("{}: {} groups; expected 2 to {} (routers x global links + 1: every group needs a link to every other)",
         source, groups, std::uint64_t{a} * h + 1);
  }
  if (groups * a * (p + 1) > kMaxNodes) fail("{}: more than {} nodes; expected a smaller dragonfly", source, kMaxNodes);
  check_link(spec.nic, source + ": NIC links");
  check_link(spec.local, source + ": local links");
  check_link(spec.global, source + ": global links");
  Fabric f;
  const std::uint64_t routers = groups * a;
  for (std::uint64_t n = 0; n < routers * p; ++n) f.add_node(FabricNodeKind::kNpu);
  const std::uint32_t first = f.node_count();
  for (std::uint64_t r = 0; r < routers; ++r) f.add_node(FabricNodeKind::kScaleOutSwitch);
  auto router = [&](std::uint64_t group, std::uint64_t i) { return first + static_cast<std::uint32_t>(group * a + i); };
  for (std::uint64_t r = 0; r < routers; ++r) {
    for (std::uint32_t k = 0; k < p; ++k)
      f.add_cable(static_cast<std::uint32_t>(r * p + k), first + static_cast<std::uint32_t>(r), spec.nic.bytes_per_ns,
                  spec.nic.latency_ns);
  }
  for (std::uint64_t g = 0; g < groups; ++g) {
    for (std::uint32_t i = 0; i < a; ++i) {
      for (std::uint32_t k = i + 1; k < a; ++k)
        f.add_cable(router(g, i), router(g, k), spec.local.bytes_per_ns, spec.local.latency_ns);
    }
    // Global link j reaches group (g + j + 1) mod groups; each pair of groups is cabled once,
    // from the lower group (its partner's link back is j' = groups - 2 - j).
    for (std::uint64_t j = 0; j + 1 < groups; ++j) {
      const std::uint64_t other = (g + j + 1) % groups;
      if (other < g) continue;
      const std::uint64_t back = groups - 2 - j;
      f.add_cable(router(g, j / h), router(other, back / h), spec.global.bytes_per_ns, spec.global.latency_ns);
    }
  }
  f.finish(source);
  return f;
}

Fabric torus(const std::vector<std::uint32_t>& dims, const LinkSpec& link, const std::string& source) {
  if (dims.empty()) fail("{}: a torus needs at least one dimension", source);
  std::uint64_t npus = 1;
  for (std::uint32_t n : dims) {
    if (n == 0) fail("{}: a torus dimension of 0 NPUs; expected 1 or more", source);
    npus *= n;
    if (npus > kMaxNodes) fail("{}: more than {} NPUs; expected a smaller torus", source, kMaxNodes);
  }
  check_link(link, fmt::format("{}: torus links", source));
  Fabric f;
  for (std::uint64_t r = 0; r < npus; ++r) f.add_node(FabricNodeKind::kNpu);
  std::uint64_t stride = 1;
  for (std::uint32_t n : dims) {
    for (std::uint64_t r = 0; r < npus && n > 1; ++r) {
      const std::uint64_t c = (r / stride) % n;
      if (n == 2 && c == 1) continue;  // two NPUs: one cable, not two
      const std::uint64_t next = r - c * stride + ((c + 1) % n) * stride;
      f.add_cable(static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(next), link.bytes_per_ns, link.latency_ns);
    }
    stride *= n;
  }
  f.set_npus_forward(true);
  f.finish(source);
  return f;
}

Fabric fabric_of_dimensions(const Topology& topology) {
  Fabric f;
  const NpuId npus = topology.npu_count();
  for (NpuId r = 0; r < npus; ++r) f.add_node(FabricNodeKind::kNpu);
  for (std::size_t d = 0; d < topology.dims(); ++d) {
    const DimensionSpec& dim = topology.spec().dims[d];
    const double bw = bytes_per_ns(dim.bandwidth_gib_per_s);
    const NpuId stride = topology.stride(d);
    for (NpuId r = 0; r < npus; ++r) {
      const std::uint32_t c = topology.coordinate(r, d);
      const NpuId base = r - c * stride;  // coordinate 0 of r's group in this dimension
      switch (dim.kind) {
        case DimensionKind::kRing:
          if (dim.npus > 2 || (dim.npus == 2 && c == 0))
            f.add_cable(r, base + ((c + 1) % dim.npus) * stride, bw, dim.latency_ns);
          break;
        case DimensionKind::kFullyConnected:
          for (std::uint32_t other = c + 1; other < dim.npus; ++other)
            f.add_cable(r, base + other * stride, bw, dim.latency_ns);
          break;
        case DimensionKind::kSwitch: break;
      }
    }
    if (dim.kind == DimensionKind::kSwitch && dim.npus > 1) {
      // One switch per group: the NPUs that differ only in this dimension.
      for (NpuId r = 0; r < npus; ++r) {
        if (topology.coordinate(r, d) != 0) continue;
        const std::uint32_t sw = f.add_node(FabricNodeKind::kScaleOutSwitch);
        for (std::uint32_t c = 0; c < dim.npus; ++c) f.add_cable(r + c * stride, sw, bw, dim.latency_ns);
      }
    }
  }
  f.set_npus_forward(true);
  f.finish("the network's dimensions");
  return f;
}

}  // namespace chakrasim::network
