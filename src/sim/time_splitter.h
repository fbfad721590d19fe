// The observer that keeps each NPU's TimeSplit (sim/time_split.h) while a run goes on, and the
// labels of the communicator groups' kinds it splits collectives by.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "chakra/graph.h"
#include "core/types.h"
#include "network/topology.h"
#include "sim/time_split.h"
#include "system/comm_groups.h"
#include "workload/executor.h"

namespace chakrasim::sim {

// The label of every communicator group's kind: the name the group-kinds file gives it (e.g.
// "TP"), else its shape, "8-NPU groups, dim 0" (the network dimensions its members differ in);
// "all NPUs" for the world group (pg_name "" or "0").
class GroupKinds {
 public:
  GroupKinds(const system::CommGroups& groups, const std::map<std::uint32_t, std::string>& names,
             const network::Topology& topology);
  // The kind of group `group` (0: every NPU); groups defined at run time get "other groups".
  std::uint16_t kind_of(std::uint32_t group) const;
  const std::vector<std::string>& labels() const { return labels_; }

 private:
  std::uint16_t intern(const std::string& label);
  std::vector<std::string> labels_;
  std::unordered_map<std::uint32_t, std::uint16_t> kind_of_group_;
  std::uint16_t world_ = 0;
  std::uint16_t other_ = 0;
};

// Keeps every NPU's TimeSplit while a run goes on, as an observer of the executor; passes each
// start and end on to `next` (the caller's observer) when there is one. `graphs[r]` is the graph
// NPU r runs.
class TimeSplitter final : public workload::NodeObserver {
 public:
  TimeSplitter(std::vector<const chakra::Graph*> graphs, const GroupKinds& kinds, workload::NodeObserver* next);

  void on_node_start(NpuId npu, std::uint32_t node, Tick now) override;
  void on_node_end(NpuId npu, std::uint32_t node, Tick now) override;

  // NPU `npu`'s split up to `finish_ns` (its finish time).
  TimeSplit split(NpuId npu, Tick finish_ns) const;

 private:
  enum Part : std::uint8_t { kCompute, kCollective, kP2p, kMemory, kOther };
  struct Running {
    std::uint32_t count[kOther] = {0, 0, 0, 0};
    std::vector<std::uint32_t> collectives_of_kind;  // per group kind
    Tick since_ns = 0;                               // the last start or end
    TimeSplit split;
  };
  Part part_of(const chakra::Graph& graph, std::uint32_t node, std::uint16_t& kind) const;
  // Charges [since, now) to the part running, then applies `delta` to the node's count.
  void step(NpuId npu, std::uint32_t node, Tick now, int delta);
  static void charge(Running& r, Tick until_ns);

  std::vector<const chakra::Graph*> graphs_;
  const GroupKinds& kinds_;
  workload::NodeObserver* next_;
  std::vector<Running> npus_;
};

}  // namespace chakrasim::sim
