// Every node's start and end on every NPU, recorded while the simulation runs; the source of
// the statistics lines, and later of timelines and CSV files.
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.h"
#include "workload/executor.h"

namespace chakrasim::report {

struct NodeSpan {
  std::uint32_t node = 0;  // index in the NPU's graph
  Tick start = 0;
  Tick end = kNeverTick;   // kNeverTick while running
};

class NodeLog final : public workload::NodeObserver {
 public:
  explicit NodeLog(NpuId npus) : spans_(npus), open_(npus) {}

  void on_node_start(NpuId npu, std::uint32_t node, Tick now) override;
  void on_node_end(NpuId npu, std::uint32_t node, Tick now) override;

  // Spans of one NPU in start order.
  const std::vector<NodeSpan>& spans(NpuId npu) const { return spans_[npu]; }

 private:
  std::vector<std::vector<NodeSpan>> spans_;
  // Per NPU: node -> index in spans_, for the few nodes running at once.
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> open_;
};

}  // namespace chakrasim::report
