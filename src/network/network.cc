#include "network/network.h"

#include <algorithm>

#include "core/error.h"
#include "network/analytical/congestion_aware.h"
#include "network/analytical/congestion_unaware.h"
#include "network/fabric/generators.h"
#include "network/flow/flow_network.h"
#ifdef CHAKRASIM_HAVE_NS3
#include "network/ns3/ns3_network.h"
#endif

namespace chakrasim::network {
namespace {

// The keys of the analytical network YAML (docs/astra-sim-model.md §1.2). A function, not a
// global, so that a row built during another file's static initialisation still gets them.
std::vector<const char*> analytical_keys() { return {"topology", "npus_count", "bandwidth", "latency"}; }
// What backends that route through a graph read besides: the graph and its routing and NICs.
std::vector<const char*> graph_keys() {
  return {"topology", "npus_count", "bandwidth",   "latency",      "topology_file",
          "routing",  "ecmp_seed",  "routes_file", "nic_bandwidth"};
}

std::unique_ptr<Network> make_congestion_unaware(const Topology& topology, EventQueue& queue, ArrivalSink& sink,
                                                 const Folding* /*folding: nothing to fold, delays are per message*/) {
  return std::make_unique<CongestionUnaware>(topology, queue, sink);
}

std::unique_ptr<Network> make_congestion_aware(const Topology& topology, EventQueue& queue, ArrivalSink& sink,
                                               const Folding* folding) {
  return std::make_unique<CongestionAware>(topology, queue, sink, folding);
}

// The graph a graph-routing backend routes through: the one the YAML names, or the dimensions
// drawn as one.
std::shared_ptr<const Fabric> fabric_of(const Topology& topology) {
  return topology.spec().fabric ? topology.spec().fabric
                                : std::make_shared<const Fabric>(fabric_of_dimensions(topology));
}

std::unique_ptr<Network> make_flow(const Topology& topology, EventQueue& queue, ArrivalSink& sink,
                                   const Folding* /*folding: not shift-invariant, never asked*/) {
  return std::make_unique<FlowNetwork>(fabric_of(topology), queue, sink,
                                       FlowOptions{.routing = topology.spec().routing,
                                                   .nic_bytes_per_ns = topology.spec().nic_bytes_per_ns});
}

#ifdef CHAKRASIM_HAVE_NS3
std::unique_ptr<Network> make_ns3(const Topology& topology, EventQueue& queue, ArrivalSink& sink,
                                  const Folding* /*folding: not shift-invariant, never asked*/) {
  return std::make_unique<Ns3Network>(fabric_of(topology), queue, sink,
                                      Ns3Options{.routing = topology.spec().routing,
                                                 .nic_bytes_per_ns = topology.spec().nic_bytes_per_ns});
}
#endif

// Backends this build leaves out, and why: asking for one says so instead of "unknown".
struct AbsentBackend {
  const char* name;
  const char* reason;
};
const std::vector<AbsentBackend>& absent_backends() {
  static const std::vector<AbsentBackend> absent = {
#ifndef CHAKRASIM_HAVE_NS3
      {"ns3", "this chakrasim was built without ns-3 (libns3-dev was not found when it was configured, or "
              "CHAKRASIM_NS3 was OFF); install libns3-dev and rebuild"},
#endif
  };
  return absent;
}

std::deque<BackendInfo>& table() {
  static std::deque<BackendInfo> rows = {
      {.name = "congestion-unaware",
       .models = "analytical: per-hop latency plus one serialisation per message at the lowest differing "
                 "dimension (ASTRA-sim's congestion-unaware backend)",
       .ignores = "bandwidth sharing between messages, and every dimension but the lowest differing one",
       .shift_invariant = true,
       .has_links = false,
       .own_engine = false,
       .params = analytical_keys(),
       .make = &make_congestion_unaware},
      {.name = "congestion-aware",
       .models = "analytical: directional links served first come first served, store and forward on every "
                 "hop; multi-dimensional routes go dimension by dimension, lowest first (ASTRA-sim's "
                 "congestion-aware backend, extended to several dimensions)",
       .ignores = "switch-internal contention, packets, flow control and routing choices",
       .shift_invariant = true,
       .has_links = true,
       .own_engine = false,
       .params = analytical_keys(),
       .make = &make_congestion_aware},
      {.name = "flow",
       .models = "flow level: every message a flow on its route (ECMP, d-mod-k or fixed) through the network "
                 "drawn as a graph, each flow at its max-min fair share of the links it crosses (and of its NICs, "
                 "when capped), re-solved incrementally as flows start and end, plus the path's latency",
       .ignores = "packets: queue build-up, congestion control, PFC, and the first byte's head start",
       .shift_invariant = false,
       .has_links = true,
       .own_engine = true,
       .routes_fabric = true,
       .has_flows = true,
       .params = graph_keys(),
       .make = &make_flow},
#ifdef CHAKRASIM_HAVE_NS3
      {.name = "ns3",
       .models = "packet level through ns-3: messages on DCTCP connections kept open per NPU pair, each on the "
                 "flow backend's route (ECMP, d-mod-k or fixed), packets serialised on every hop, RED queues marking "
                 "ECN with ACKs served first, a NIC cap as a link, handshake, slow start, loss recovery",
       .ignores = "RDMA and lossless Ethernet (no PFC, DCQCN or HPCC), switch-internal contention beyond each output "
                  "queue, host stack delays",
       .shift_invariant = false,
       .has_links = true,
       .own_engine = true,
       .routes_fabric = true,
       .has_flows = true,
       .params = graph_keys(),
       .make = &make_ns3},
#endif
  };
  return rows;
}

}  // namespace

const std::deque<BackendInfo>& backends() { return table(); }

const BackendInfo& find_backend(const std::string& name) {
  for (const BackendInfo& b : backends()) {
    if (name == b.name) return b;
  }
  for (const AbsentBackend& a : absent_backends()) {
    if (name == a.name) fail("network backend \"{}\" is not available: {}", name, a.reason);
  }
  std::string valid;
  for (const BackendInfo& b : backends()) valid += std::string(valid.empty() ? "" : ", ") + b.name;
  fail("unknown network backend \"{}\"; valid backends are: {}", name, valid);
}

void register_backend(BackendInfo row) {
  const std::string name = row.name == nullptr ? "" : row.name;
  if (name.empty() || row.make == nullptr) fail("network backend \"{}\": a row needs a name and a factory", name);
  const bool taken = std::any_of(table().begin(), table().end(), [&](const BackendInfo& b) { return name == b.name; });
  if (taken) fail("network backend \"{}\" is registered already", name);
  table().push_back(std::move(row));
}

std::unique_ptr<Network> make_network(const std::string& name, const Topology& topology, EventQueue& queue,
                                      ArrivalSink& sink, const Folding* folding) {
  const BackendInfo& row = find_backend(name);
  if (topology.fabric() != nullptr && !row.routes_fabric) {
    std::string which;
    for (const BackendInfo& b : backends()) {
      if (b.routes_fabric) which += std::string(which.empty() ? "" : ", ") + b.name;
    }
    fail("the network is drawn as a graph (topology: [ Custom ]), but the {} backend models dimensions only; expected "
         "--backend {}",
         name, which);
  }
  return row.make(topology, queue, sink, folding);
}

}  // namespace chakrasim::network
