#include "network/network.h"

#include "core/error.h"
#include "network/analytical/congestion_aware.h"
#include "network/analytical/congestion_unaware.h"

namespace chakrasim::network {

const std::vector<BackendInfo>& backends() {
  static const std::vector<BackendInfo> kBackends = {
      {"congestion-unaware",
       "analytical: per-hop latency plus one serialisation per message at the lowest differing "
       "dimension; no bandwidth sharing (ASTRA-sim's congestion-unaware backend)"},
      {"congestion-aware",
       "analytical: directional links served first come first served, store and forward on every "
       "hop; multi-dimensional routes go dimension by dimension, lowest first; no switch-internal "
       "contention, packets or flow control (ASTRA-sim's congestion-aware backend, extended to "
       "several dimensions)"},
  };
  return kBackends;
}

const BackendInfo& find_backend(const std::string& name) {
  for (const BackendInfo& b : backends()) {
    if (name == b.name) return b;
  }
  std::string valid;
  for (const BackendInfo& b : backends()) valid += std::string(valid.empty() ? "" : ", ") + b.name;
  fail("unknown network backend \"{}\"; valid backends are: {}", name, valid);
}

std::unique_ptr<Network> make_network(const std::string& name, const Topology& topology,
                                      EventQueue& queue, ArrivalSink& sink, bool symmetric) {
  const std::string chosen = find_backend(name).name;
  if (chosen == "congestion-unaware") return std::make_unique<CongestionUnaware>(topology, queue, sink);
  if (chosen == "congestion-aware") return std::make_unique<CongestionAware>(topology, queue, sink, symmetric);
  fail("internal error: backend \"{}\" is registered but not built", chosen);
}

}  // namespace chakrasim::network
