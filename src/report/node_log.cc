#include "report/node_log.h"

namespace chakrasim::report {

void NodeLog::on_node_start(NpuId npu, std::uint32_t node, Tick now) {
  open_[npu].emplace_back(node, static_cast<std::uint32_t>(spans_[npu].size()));
  spans_[npu].push_back({node, now, kNeverTick});
}

void NodeLog::on_node_end(NpuId npu, std::uint32_t node, Tick now) {
  auto& open = open_[npu];
  for (std::size_t i = 0; i < open.size(); ++i) {
    if (open[i].first == node) {
      spans_[npu][open[i].second].end = now;
      open[i] = open.back();
      open.pop_back();
      return;
    }
  }
}

}  // namespace chakrasim::report
