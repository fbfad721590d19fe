// A cluster fabric as a graph: NPUs and switches joined by directed links, each with a
// bandwidth and a latency. Where the analytical backends see a network as dimensions (a ring, a
// fully connected group, one ideal switch each), the flow- and packet-level backends route every
// message through a Fabric: a fat-tree with an oversubscribed spine, rails, planes, NVSwitch
// domains, a torus, or whatever a topology file draws.
//
// Nodes are numbered 0..node_count()-1 as they are added; NPUs are numbered among themselves in
// node order, so NPU r is the r-th NPU node (as the reference and SimAI number the non-switch ids
// of their topology files). A cable is two links, one per direction.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/types.h"

namespace chakrasim::network {

enum class FabricNodeKind : std::uint8_t {
  kNpu,
  kScaleUpSwitch,   // inside a scale-up domain (NVSwitch): NPUs of one domain only
  kScaleOutSwitch,  // the scale-out network (leaf, spine, core, dragonfly router)
};
const char* fabric_node_kind_name(FabricNodeKind kind);

struct FabricLink {
  std::uint32_t from = 0;  // node ids
  std::uint32_t to = 0;
  double bytes_per_ns = 0;  // = GB/s of 10^9 bytes
  double latency_ns = 0;
};

class Fabric {
 public:
  std::uint32_t add_node(FabricNodeKind kind);
  // A directed link; returns its id (links are numbered as they are added).
  std::uint32_t add_link(std::uint32_t from, std::uint32_t to, double bytes_per_ns, double latency_ns);
  // Both directions, `a` -> `b` first.
  void add_cable(std::uint32_t a, std::uint32_t b, double bytes_per_ns, double latency_ns);

  // Whether NPUs pass traffic on (a torus, where each NPU is a router) or only send and receive
  // (behind switches: the default). Routes cross an NPU only when they do.
  void set_npus_forward(bool forward) { npus_forward_ = forward; }
  bool npus_forward() const { return npus_forward_; }

  // Builds the per-node link lists and checks the graph: every link between two distinct nodes,
  // positive bandwidth, finite non-negative latency, at least one NPU, and every NPU reaching
  // every other one. Throws Error starting with `source`. Call once, after the last link.
  void finish(const std::string& source);

  std::uint32_t node_count() const { return static_cast<std::uint32_t>(kinds_.size()); }
  std::uint32_t link_count() const { return static_cast<std::uint32_t>(links_.size()); }
  NpuId npu_count() const { return static_cast<NpuId>(npu_nodes_.size()); }
  std::uint32_t npu_node(NpuId npu) const { return npu_nodes_[npu]; }
  FabricNodeKind kind(std::uint32_t node) const { return kinds_[node]; }
  const FabricLink& link(std::uint32_t id) const { return links_[id]; }
  const std::vector<FabricLink>& links() const { return links_; }
  // Links leaving `node`, by id (after finish()).
  std::span<const std::uint32_t> out_links(std::uint32_t node) const {
    return {out_.data() + out_begin_[node], out_.data() + out_begin_[node + 1]};
  }
  // "NPU 3 (node 3)", "switch 17 (scale-out)".
  std::string node_name(std::uint32_t node) const;
  std::string link_name(std::uint32_t id) const;

  // Backends that cap each NPU's NIC number two more links per NPU after the fabric's: NPU r's
  // NIC out at link_count() + r, its NIC in at link_count() + npu_count() + r.
  std::uint32_t nic_out_link(NpuId npu) const { return link_count() + npu; }
  std::uint32_t nic_in_link(NpuId npu) const { return link_count() + npu_count() + npu; }
  // link_name for a fabric link, "NPU 3 NIC out" / "NPU 3 NIC in" for a NIC's.
  std::string link_or_nic_name(std::uint32_t id) const;

 private:
  std::vector<FabricNodeKind> kinds_;
  std::vector<std::uint32_t> npu_nodes_;
  std::vector<std::uint32_t> npu_of_node_;  // an NPU node's rank (0 for switches)
  std::vector<FabricLink> links_;
  std::vector<std::uint32_t> out_begin_;  // CSR over links_ by `from`
  std::vector<std::uint32_t> out_;
  bool npus_forward_ = false;
};

}  // namespace chakrasim::network
