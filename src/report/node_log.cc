#include "report/node_log.h"

#include <utility>

#include "system/collective_plan.h"

namespace chakrasim::report {

NodeLog::NodeLog(NpuId npus, std::vector<bool> selected)
    : asked_(std::move(selected)), spans_(npus), phases_(npus), open_(npus), open_phases_(npus) {
  // NPU 0 is recorded whatever the selection: a symmetric run's record of every NPU.
  if (!asked_.empty()) asked_[0] = true;
  selected_ = asked_;
}

void NodeLog::begin_run(const network::Folding* folding) {
  for (auto& v : spans_) v.clear();
  for (auto& v : phases_) v.clear();
  for (auto& v : open_) v.clear();
  for (auto& v : open_phases_) v.clear();
  selected_ = asked_;
  representative_of_.clear();
  if (folding == nullptr) return;
  representative_of_.resize(spans_.size());
  for (NpuId npu = 0; npu < spans_.size(); ++npu) {
    representative_of_[npu] = folding->representative_of(npu);
    if (!selected_.empty() && asked_[npu]) selected_[representative_of_[npu]] = true;
  }
}

void NodeLog::on_node_start(NpuId npu, std::uint32_t node, Tick now) {
  if (!recorded(npu)) return;
  open_[npu].emplace_back(node, static_cast<std::uint32_t>(spans_[npu].size()));
  spans_[npu].push_back({node, now, kNeverTick});
}

void NodeLog::on_node_end(NpuId npu, std::uint32_t node, Tick now) {
  if (!recorded(npu)) return;
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

void NodeLog::on_phase_start(NpuId npu, std::uint64_t token, std::uint32_t chunk, std::uint32_t phase,
                             const system::PhasePlan& plan, Tick now) {
  if (!recorded(npu)) return;
  open_phases_[npu].push_back(static_cast<std::uint32_t>(phases_[npu].size()));
  phases_[npu].push_back({static_cast<std::uint32_t>(token), chunk, phase, now, kNeverTick, plan.algorithm, plan.dim,
                          plan.ring_size, plan.bytes, plan.members != nullptr, plan.label});
}

void NodeLog::on_phase_end(NpuId npu, std::uint64_t token, std::uint32_t chunk, std::uint32_t phase, Tick now) {
  if (!recorded(npu)) return;
  auto& open = open_phases_[npu];
  for (std::size_t i = 0; i < open.size(); ++i) {
    PhaseSpan& p = phases_[npu][open[i]];
    if (p.node == token && p.chunk == chunk && p.phase == phase) {
      p.end = now;
      open[i] = open.back();
      open.pop_back();
      return;
    }
  }
}

sim::Result simulate_recorded(const sim::Inputs& inputs, NodeLog& log, network::LinkObserver* links, sim::Hooks hooks,
                              network::FlowObserver* flows) {
  hooks.nodes = &log;
  hooks.collectives = &log;
  hooks.links = links;
  hooks.flows = flows;
  hooks.symmetric_ok = true;
  hooks.before_run = [&log](const network::Folding* folding) { log.begin_run(folding); };
  return sim::simulate(inputs, hooks);
}

}  // namespace chakrasim::report
