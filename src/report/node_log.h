// What ran when, recorded while the simulation runs: every node's start and end, and every
// collective chunk's phases, on the NPUs chosen. The source of the statistics lines, the
// timeline and the per-node CSV.
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.h"
#include "network/network.h"
#include "sim/simulation.h"
#include "system/comm.h"
#include "workload/executor.h"

namespace chakrasim::report {

struct NodeSpan {
  std::uint32_t node = 0;  // index in the NPU's graph
  Tick start = 0;
  Tick end = kNeverTick;  // kNeverTick while running
};

// One phase of one chunk of a collective node.
struct PhaseSpan {
  std::uint32_t node = 0;
  std::uint32_t chunk = 0;
  std::uint32_t phase = 0;
  Tick start = 0;
  Tick end = kNeverTick;
  system::AlgorithmKind algorithm = system::AlgorithmKind::kRing;
  std::uint32_t dim = 0;
  std::uint32_t ring_size = 0;
  std::uint64_t bytes = 0;      // entering the phase, per NPU
  bool group = false;           // a communicator group's ring, not a network dimension
  const char* label = nullptr;  // what ran it, when not the algorithm (PhasePlan::label)
};

class NodeLog final : public workload::NodeObserver, public system::CollectiveObserver {
 public:
  // Records the NPUs whose entry in `selected` is true; an empty `selected` means every NPU.
  explicit NodeLog(NpuId npus, std::vector<bool> selected = {});

  void on_node_start(NpuId npu, std::uint32_t node, Tick now) override;
  void on_node_end(NpuId npu, std::uint32_t node, Tick now) override;
  void on_phase_start(NpuId npu, std::uint64_t token, std::uint32_t chunk, std::uint32_t phase,
                      const system::PhasePlan& plan, Tick now) override;
  void on_phase_end(NpuId npu, std::uint64_t token, std::uint32_t chunk, std::uint32_t phase, Tick now) override;

  // Before a run: in a folded one (network/folding.h; a symmetric run is one), each NPU's record
  // is its representative's, recorded whenever the NPU is selected; nullptr: every NPU's own.
  // Forgets what an earlier run recorded. simulate_recorded calls it.
  void begin_run(const network::Folding* folding);

  bool recorded(NpuId npu) const { return selected_.empty() || selected_[npu]; }
  // Spans of one recorded NPU in start order.
  const std::vector<NodeSpan>& spans(NpuId npu) const { return spans_[source(npu)]; }
  const std::vector<PhaseSpan>& phases(NpuId npu) const { return phases_[source(npu)]; }

 private:
  NpuId source(NpuId npu) const { return representative_of_.empty() ? npu : representative_of_[npu]; }

  std::vector<bool> asked_;  // the selection as given
  std::vector<bool> selected_;
  std::vector<NpuId> representative_of_;  // per NPU, in a folded run
  std::vector<std::vector<NodeSpan>> spans_;
  std::vector<std::vector<PhaseSpan>> phases_;
  // Per NPU: node -> index in spans_, for the few nodes running at once.
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> open_;
  std::vector<std::vector<std::uint32_t>> open_phases_;  // per NPU: indices of running phases
};

// Runs `inputs` with `log` (and `links`, `flows`, when given) listening, besides what `hooks` already
// has (a progress line, say). A symmetric run stays one: the log then takes NPU 0's record for
// every NPU's, which is exact.
sim::Result simulate_recorded(const sim::Inputs& inputs, NodeLog& log, network::LinkObserver* links = nullptr,
                              sim::Hooks hooks = {}, network::FlowObserver* flows = nullptr);

}  // namespace chakrasim::report
