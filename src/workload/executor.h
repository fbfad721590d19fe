// The workload layer: for every NPU, walks its Chakra graph and issues ready nodes to the
// compute model and the system layer, as the reference's Workload does (docs/astra-sim-model.md
// §3):
//  - a node is ready when all its parents (data and control) have finished;
//  - each NPU has one CPU slot (is_cpu_op), one GPU-compute slot (COMP) and one GPU-comm slot
//    (collectives, sends, memory, METADATA, INVALID); receives need no slot;
//  - at every completion the NPU visits its ready nodes in ascending id and issues each one
//    whose slot is free.
// A METADATA node carrying a PyTorch process-group description (inputs.values) registers its
// communicator groups for that NPU, as the reference means to.
// Unlike the reference, nodes freed by a zero-time node (INVALID, METADATA, a skipped roofline
// node) are issued in the same pass instead of waiting for another completion that may never
// come, and METADATA nodes do not abort the run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <vector>

#include "chakra/graph.h"
#include "compute/compute_model.h"
#include "core/npu_timers.h"
#include "core/types.h"
#include "memory/remote_memory.h"
#include "system/comm.h"

namespace chakrasim::workload {

struct NpuTotals {
  bool finished = false;
  Tick finish_ns = 0;
  Tick gpu_compute_ns = 0;  // sum of GPU COMP durations ("exposed" subtracts this)
  Tick cpu_compute_ns = 0;
  std::uint64_t nodes_done = 0;
};

struct WorkloadOptions {
  compute::ComputeSpec compute;
  bool replay_only = false;           // every node is replayed for its recorded duration
  bool remote_memory = false;         // MEM_LOAD/MEM_STORE nodes have a remote memory to go to
  bool broadcast_by_duration = true;  // system::SystemSpec::broadcast_by_duration
};

// Checks, before anything runs, that every node of `graph` is one this build can simulate and
// carries the attributes its model reads; throws Error naming the file and the node.
void validate(const chakra::Graph& graph, const WorkloadOptions& options);

// How a collective node runs on the system layer (docs/astra-sim-model.md §3.5): the native kind
// it runs as, and how its comm_size is read. ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER and
// ALL_TO_ALL run as themselves; REDUCE_SCATTER_BLOCK as a reduce-scatter and BARRIER as an
// all-reduce of its comm_size (0 when absent: the reference's inflation to one byte per NPU
// still makes every member wait for every other); GATHER and SCATTER as an all-gather of each
// member's piece (the root's link carries the n-1 others' pieces either way); BROADCAST and
// REDUCE in their rooted sizing (system::RequestSizing). nullopt: not run by the system layer
// (an unsupported comm_type, or BROADCAST while `broadcast_by_duration`).
struct CollectiveForm {
  system::CollectiveKind kind = system::CollectiveKind::kAllReduce;
  system::RequestSizing sizing = system::RequestSizing::kAsIs;
};
std::optional<CollectiveForm> collective_form(std::int64_t comm_type, bool broadcast_by_duration);
// The native collective kind a node runs as (collective_form's kind).
std::optional<system::CollectiveKind> collective_of(std::int64_t comm_type, bool broadcast_by_duration);
// "all-reduce", "broadcast", "barrier", ...: what the node's comm_type names, for people.
const char* collective_node_name(std::int64_t comm_type);
// The communicator group a pg_name selects: "" and "0" mean every NPU (0); nullopt if invalid.
std::optional<std::uint32_t> group_of(const std::string& pg_name);

// Told when nodes start and end (statistics, timelines); absent by default.
class NodeObserver {
 public:
  virtual ~NodeObserver() = default;
  virtual void on_node_start(NpuId npu, std::uint32_t node, Tick now) = 0;
  virtual void on_node_end(NpuId npu, std::uint32_t node, Tick now) = 0;
};

class Executor final : public system::CommListener {
 public:
  // `graphs[r]` is rank r's trace; ranks with identical traces may share one graph. `ranks_to_run`
  // (ascending; empty: all): the ranks that run, in a folded run (network/folding.h) the class
  // representatives; the others keep their graph but no state and never start.
  Executor(std::vector<std::shared_ptr<const chakra::Graph>> graphs, const WorkloadOptions& options,
           memory::RemoteMemory& memory, NpuTimers& timers, EventQueue& queue, std::vector<NpuId> ranks_to_run = {});

  void attach(system::Comm& system) { system_ = &system; }
  void observe(NodeObserver* observer) { observer_ = observer; }

  // Issues every running NPU's initial ready nodes (time 0), in rank order.
  void start();

  void handle_timer(const TimerEntry& entry);
  void on_comm_done(NpuId npu, std::uint64_t token) override;

  const NpuTotals& totals(NpuId npu) const { return npus_[npu].totals; }
  NpuId npu_count() const { return static_cast<NpuId>(npus_.size()); }
  // The ranks that run (all, unless the constructor was given fewer), ascending.
  const std::vector<NpuId>& running_ranks() const { return ranks_to_run_; }
  const chakra::Graph& graph(NpuId npu) const { return *npus_[npu].graph; }
  enum class NodeState : std::uint8_t { kWaiting, kReady, kIssued, kDone };
  NodeState state(NpuId npu, std::uint32_t node) const { return npus_[npu].state[node]; }

 private:
  enum TimerKind : std::uint8_t { kNodeDone };
  enum Slot : std::uint8_t { kCpu, kGpu, kComm, kNoSlot, kSlotClasses };

  using MinHeap = std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>>;
  struct Npu {
    std::shared_ptr<const chakra::Graph> graph;
    std::vector<std::uint32_t> waiting_parents;  // per node: parents not yet finished
    std::vector<NodeState> state;                // per node
    MinHeap ready[kSlotClasses];
    bool busy[kNoSlot] = {false, false, false};
    bool in_pass = false;
    std::uint32_t in_flight = 0;
    NpuTotals totals;
  };

  Slot slot_of(const chakra::Graph& graph, std::uint32_t node) const;
  void issue_ready(NpuId npu);
  void issue(NpuId npu, std::uint32_t node);
  void schedule_node_done(NpuId npu, std::uint32_t node, Tick delay);
  void issue_compute(NpuId npu, std::uint32_t node, Slot slot);
  void issue_collective(NpuId npu, std::uint32_t node);
  void issue_point_to_point(NpuId npu, std::uint32_t node);
  void complete(NpuId npu, std::uint32_t node);
  void register_process_groups(NpuId npu, std::uint32_t node);

  std::vector<Npu> npus_;
  std::vector<NpuId> ranks_to_run_;
  std::unique_ptr<compute::ComputeModel> compute_;
  bool replay_only_;
  bool broadcast_by_duration_;
  memory::RemoteMemory& memory_;
  NodeObserver* observer_ = nullptr;
  NpuTimers& timers_;
  EventQueue& queue_;
  system::Comm* system_ = nullptr;
};

}  // namespace chakrasim::workload
