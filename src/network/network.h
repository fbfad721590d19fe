// The network layer's interface: a backend moves a message of some bytes from one NPU to
// another and reports its arrival. Backends register by name in network.cc with a line saying
// what they model and what they ignore.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "core/types.h"
#include "network/topology.h"

namespace chakrasim::network {

// Told when a message has arrived at its destination.
class ArrivalSink {
 public:
  virtual ~ArrivalSink() = default;
  // Called at the arrival tick with the id given to Network::send.
  virtual void on_arrival(std::uint64_t message) = 0;
};

// Told when a link carries a message, for utilisation reports (backends with links only).
class LinkObserver {
 public:
  virtual ~LinkObserver() = default;
  // `link` serialises a message from `start` to `end`.
  virtual void on_link_busy(std::uint32_t link, Tick start, Tick end) = 0;
};

class Network {
 public:
  virtual ~Network() = default;
  // Links this backend models (0: none, e.g. congestion-unaware), their names for reports
  // ("NPU 3 -> NPU 4, ring dim 0"), and the observer told of their use.
  virtual std::uint32_t link_count() const { return 0; }
  virtual std::string link_name(std::uint32_t /*link*/) const { return {}; }
  virtual void observe_links(LinkObserver* /*observer*/) {}
  // Sends `bytes` from `src` to `dst` (src != dst) at the current tick; the sink hears of
  // `message` when its last byte has arrived at `dst`.
  virtual void send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) = 0;
  // Handles one of the events this backend scheduled (EventTarget::kNetwork).
  virtual void handle(const Event& event) = 0;
};

struct BackendInfo {
  const char* name;
  const char* description;  // what it models and what it ignores
};
// The registered backends, in the order the CLI lists them.
const std::vector<BackendInfo>& backends();

// The named backend; throws Error listing the valid names for an unknown one.
const BackendInfo& find_backend(const std::string& name);

// Builds the named backend; throws Error listing the valid names for an unknown one.
// `symmetric`: only NPU 0 sends (a symmetric run, sim/symmetry.h), and every other NPU is taken
// to do the same at the same times, shifted by its coordinates; a backend with shared state
// keeps one representative of each class of links that the shift maps onto each other.
std::unique_ptr<Network> make_network(const std::string& name, const Topology& topology,
                                      EventQueue& queue, ArrivalSink& sink, bool symmetric = false);

}  // namespace chakrasim::network
