// One simulated run: wires the layers together (event queue, per-NPU timers, network backend,
// system layer, workload executors), fires every NPU at time 0, and runs events until none is
// left. The result says when each NPU finished, or which NPUs did not.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chakra/graph.h"
#include "compute/compute_spec.h"
#include "core/types.h"
#include "memory/remote_memory_spec.h"
#include "network/folding.h"
#include "network/topology.h"
#include "sim/time_split.h"
#include "system/comm_groups.h"
#include "system/system_spec.h"

namespace chakrasim::workload {
class NodeObserver;
}
namespace chakrasim::system {
class CollectiveObserver;
}
namespace chakrasim::network {
class LinkObserver;
class FlowObserver;
}  // namespace chakrasim::network

namespace chakrasim::sim {

struct Inputs {
  network::TopologySpec network;
  system::SystemSpec system;
  compute::ComputeSpec compute;
  memory::RemoteMemorySpec memory;
  bool replay_only = false;
  std::string backend = "congestion-unaware";
  system::CommGroups groups;  // communicator groups from the group file
  // Names of the groups' kinds ("TP", "DP", ...) by group id, from the group-kinds file; groups
  // without a name are labelled by their shape (sim/time_split.h).
  std::map<std::uint32_t, std::string> group_kind_names;
  // Simulate NPU 0 alone when every NPU's timeline is provably the same (sim/symmetry.h); the
  // results are identical either way, so this only exists for tests that check that.
  bool allow_symmetry = true;
  // Names the system and group files in error messages.
  std::string system_source = "the system configuration";
  std::string groups_source = "the communicator-group file";
  // One graph per rank; identical ranks may share one.
  std::vector<std::shared_ptr<const chakra::Graph>> graphs;
  // Per collective kind with a custom implementation (system.custom_prefixes), its algorithm ET
  // for each rank.
  std::array<std::vector<std::shared_ptr<const chakra::Graph>>, system::kCollectiveKinds> custom_algorithms;
};

struct NpuResult {
  bool finished = false;
  Tick finish_ns = 0;
  Tick gpu_compute_ns = 0;
  Tick cpu_compute_ns = 0;
  Tick exposed_comm_ns = 0;  // finish - GPU compute, as the reference prints it
  std::uint64_t nodes = 0;
  std::uint64_t nodes_done = 0;
  TimeSplit split;  // where the time went, the researcher's way (sim/time_split.h)
};

// A node that never finished, for the deadlock report.
struct StuckNode {
  NpuId npu = 0;
  std::uint64_t id = 0;
  std::string name;
  std::string type;
  bool issued = false;                     // issued and never completed (else: waiting for parents or a slot)
  std::vector<std::uint64_t> waiting_for;  // unfinished parents
  // For an issued node, what it waits for: an unmatched send or receive (peer, tag, size), or a
  // collective some peers never issued.
  std::string detail;
};

struct Result {
  std::vector<NpuResult> npus;
  std::vector<std::string> link_names;   // the backend's links (with Hooks::links), by id
  std::vector<std::uint32_t> link_dims;  // each link's network dimension, by id
  std::vector<std::string> group_kinds;  // labels of TimeSplit::by_group_kind_ns, in order
  double peak_flops_per_s = 0;           // the MFU peak per NPU: mfu-peak-perf, else peak-perf (0: not given)
  bool peak_is_mfu_peak = false;         // peak_flops_per_s is the system file's mfu-peak-perf
  bool peak_is_systolic = false;         // peak_flops_per_s is the systolic arrays' own
  std::vector<StuckNode> stuck;          // empty when every NPU finished
  std::uint64_t events = 0;              // events simulated (for NPU 0 alone in a symmetric run)
  std::uint64_t messages = 0;
  bool symmetric = false;  // only NPU 0 was simulated; every NPU's figures are its figures
  // A folded run (sim/rank_classes.h): the classes of ranks, one NPU of each simulated, whose
  // figures are every member's; 1 in a symmetric run, 0 in a full one.
  std::uint32_t classes_simulated = 0;
  // GPU compute nodes of every NPU's trace, and those the compute model timed by its fallback
  // (compute_fallback, e.g. the systolic model's roofline; "" and 0 for a model without one).
  std::uint64_t gpu_compute_nodes = 0;
  std::uint64_t fallback_nodes = 0;
  std::string compute_fallback;

  bool all_finished() const { return stuck.empty(); }
  Tick max_finish_ns() const;
};

// Checks the inputs against each other (ranks vs network size, implementation lists vs
// dimensions, every trace against the models); throws Error on the first problem.
void validate(const Inputs& inputs);

// How far a running simulation is, for a progress line.
struct Progress {
  Tick now = 0;              // simulated time reached
  std::uint64_t events = 0;  // events simulated so far
  std::uint64_t nodes_done = 0;
  std::uint64_t nodes =
      0;  // in all (of the NPUs simulated: NPU 0 alone in a symmetric run, the representatives in a folded one)
  double wall_s = 0;  // since the simulation started
};

// What a caller can listen to while a run goes on. Observers hear every NPU, unless
// `symmetric_ok` says they can take a symmetric run's NPU 0 as every NPU's (sim/symmetry.h):
// then a symmetric run stays one, and Result::symmetric tells them so. With `before_run` too they
// can take a folded run's representatives as their classes' members (sim/rank_classes.h; not
// with `links`): it is told the folding before the run starts, and nullptr before a full run,
// which may follow a folded one that did not finish.
struct Hooks {
  workload::NodeObserver* nodes = nullptr;
  system::CollectiveObserver* collectives = nullptr;
  network::LinkObserver* links = nullptr;  // told of every link's use (backends with has_links)
  network::FlowObserver* flows = nullptr;  // told of every flow (backends with has_flows)
  bool symmetric_ok = false;
  std::function<void(const network::Folding* folding)> before_run;
  // Called every `progress_every_s` of wall time (checked every 65536 events), from the
  // simulation's own thread.
  std::function<void(const Progress&)> progress;
  double progress_every_s = 0.5;
};

// Bytes of state a network of `npus` NPUs needs before any trace is read (queues, timers, ...).
std::uint64_t network_state_bytes(std::uint64_t npus);
// A conservative estimate of the memory a run of `inputs` needs.
std::uint64_t estimate_memory_bytes(const Inputs& inputs);

// Runs the simulation. `observer`, if given, hears every node start and end on every NPU.
Result simulate(const Inputs& inputs, workload::NodeObserver* observer = nullptr);
Result simulate(const Inputs& inputs, const Hooks& hooks);

}  // namespace chakrasim::sim
