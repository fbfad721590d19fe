// The network layer's interface: a backend moves a message of some bytes from one NPU to
// another and reports its arrival. Backends are rows of one table (network.cc): name, what they
// model and ignore, capability flags, the YAML keys they read, and the factory.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "core/types.h"
#include "network/folding.h"
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
  // `link` carries a flow from `start` to `end` at `share` of its capacity (0 < share <= 1), for
  // backends that share links between flows at once (flow level).
  virtual void on_link_share(std::uint32_t link, Tick start, Tick end, double share) = 0;
};

// One message carried as a flow, told when its last byte has arrived (flow-level backends).
struct FlowRecord {
  NpuId src = 0;
  NpuId dst = 0;
  std::uint64_t bytes = 0;
  Tick start = 0;    // sent
  Tick arrival = 0;  // its last byte at dst
  std::uint32_t hops = 0;
};

class FlowObserver {
 public:
  virtual ~FlowObserver() = default;
  virtual void on_flow(const FlowRecord& flow) = 0;
};

class Network {
 public:
  virtual ~Network() = default;
  // Links this backend models (0: none, e.g. congestion-unaware), their names for reports
  // ("NPU 3 -> NPU 4, ring dim 0"), and the observer told of their use.
  virtual std::uint32_t link_count() const { return 0; }
  virtual std::string link_name(std::uint32_t /*link*/) const { return {}; }
  // The network dimension link `link` belongs to (reports summarise links per dimension).
  virtual std::uint32_t link_dimension(std::uint32_t /*link*/) const { return 0; }
  virtual void observe_links(LinkObserver* /*observer*/) {}
  // Backends whose row says has_flows tell this observer of every message they carried.
  virtual void observe_flows(FlowObserver* /*observer*/) {}
  // Sends `bytes` from `src` to `dst` (src != dst) at the current tick; the sink hears of
  // `message` when its last byte has arrived at `dst`.
  virtual void send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) = 0;
  // Handles one of the events this backend scheduled (EventTarget::kNetwork).
  virtual void handle(const Event& event) = 0;

  // A backend with its own event engine (its row says own_engine), e.g. a flow-level one that
  // recomputes rates whenever a flow starts or ends, keeps its pending work to itself and is
  // driven by these two calls. Contract, kept by the event loop (sim/simulation.cc):
  //  * next_event_time() is the earliest time at which the backend has work of its own, or
  //    kNeverTick when it has none. It is never earlier than the queue's now().
  //  * The loop runs every event of the global queue at times up to and including t before it
  //    calls advance_to(t) with t = next_event_time(); during that call the queue's clock reads
  //    t, so arrivals the backend reports then (ArrivalSink::on_arrival) happen at t, and what
  //    the listeners schedule in reply is relative to t.
  //  * advance_to(t) does all the backend's work due at t; afterwards next_event_time() is
  //    later than t unless a send() at t added work at t.
  //  * send() and handle() may change next_event_time(); the loop asks again after every event
  //    it runs (only for own_engine rows: the others' answer is always kNeverTick).
  //  * The run ends only when the queue is empty and next_event_time() is kNeverTick.
  // A backend without its own engine keeps these defaults: it has no work outside the queue.
  virtual Tick next_event_time() const { return kNeverTick; }
  virtual void advance_to(Tick /*t*/) {}
};

// Builds a backend over `topology`. `folding` (nullptr for a full run): only the representatives
// of its classes send (a folded run, network/folding.h), and every other NPU is taken to do the
// same at the same times, moved as the folding moves it; a backend with shared state keeps one
// representative of each class of links that the moves map onto each other. Only backends whose
// row says shift_invariant are asked for one.
using BackendFactory = std::unique_ptr<Network> (*)(const Topology& topology, EventQueue& queue, ArrivalSink& sink,
                                                    const Folding* folding);

// One row of the backend table: everything the rest of the simulator may know about a backend.
// Other layers ask these fields and never compare backend names.
struct BackendInfo {
  const char* name;     // the --backend value
  const char* models;   // one line: what it models
  const char* ignores;  // one line: what it leaves out
  // A run may fold it (network/folding.h): its routes and delays look the same after every move
  // of a folding (rotations, and flips within a switch), and its factory honours `folding`.
  bool shift_invariant;
  bool has_links;                   // reports per-link figures (link_count() > 0, observe_links)
  bool own_engine;                  // has its own event engine: next_event_time() may be other than kNeverTick
  bool routes_fabric = false;       // routes through a network drawn as a graph (topology: [ Custom ])
  bool has_flows = false;           // reports every message as a flow (observe_flows)
  std::vector<const char*> params;  // the network YAML keys it reads (config/network_config.h)
  BackendFactory make;
};

// The registered backends, in the order the CLI lists them.
const std::deque<BackendInfo>& backends();

// The named backend; throws Error listing the valid names for an unknown one.
const BackendInfo& find_backend(const std::string& name);

// Adds a row, for tests that prove a new backend is one row (the built-in rows are listed in
// network.cc). Throws Error for a name already taken or a row without a factory. References to
// earlier rows stay valid.
void register_backend(BackendInfo row);

// Builds the named backend (its row's factory); throws Error listing the valid names for an
// unknown one.
std::unique_ptr<Network> make_network(const std::string& name, const Topology& topology, EventQueue& queue,
                                      ArrivalSink& sink, const Folding* folding = nullptr);

}  // namespace chakrasim::network
