#include "report/astra_statistics.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "compute/compute_model.h"

namespace chakrasim::report {
namespace {

enum class OpType { kCpu, kGpu, kComm, kRemoteMem, kReplay, kInvalid };

OpType op_type(const sim::Inputs& inputs, const chakra::Graph& g, std::uint32_t node) {
  if (inputs.replay_only) return OpType::kReplay;
  switch (g.type(node)) {
    case chakra::NodeType::kMemLoad:
    case chakra::NodeType::kMemStore: return OpType::kRemoteMem;
    case chakra::NodeType::kComp: return g.is_cpu_op(node) ? OpType::kCpu : OpType::kGpu;
    case chakra::NodeType::kCommColl:
    case chakra::NodeType::kCommSend:
    case chakra::NodeType::kCommRecv: return OpType::kComm;
    default: return OpType::kInvalid;  // INVALID, and METADATA where the reference aborts
  }
}

Tick union_length(std::vector<std::pair<Tick, Tick>> intervals) {
  if (intervals.empty()) return 0;
  std::sort(intervals.begin(), intervals.end());
  Tick total = 0;
  Tick start = intervals[0].first, end = intervals[0].second;
  for (const auto& [s, e] : intervals) {
    if (s <= end) {
      end = std::max(end, e);
    } else {
      total += end - start;
      start = s;
      end = e;
    }
  }
  return total + (end - start);
}

}  // namespace

NpuStatistics npu_statistics(const sim::Inputs& inputs, const NodeLog& log, NpuId npu) {
  NpuStatistics st;
  const chakra::Graph& g = *inputs.graphs[npu];
  std::vector<std::pair<Tick, Tick>> by_type[6];
  const std::unique_ptr<compute::ComputeModel> model = compute::make_compute_model(inputs.compute);
  st.has_utilization = model->reports_utilization();
  double compute_bound_ns = 0, compute_util = 0, memory_util = 0, intensity = 0;
  Tick compute_ns = 1;  // the reference's guard against dividing by zero
  for (const NodeSpan& s : log.spans(npu)) {
    if (s.end == kNeverTick) continue;
    st.wall = std::max(st.wall, s.end);
    const OpType type = op_type(inputs, g, s.node);
    by_type[static_cast<int>(type)].emplace_back(s.start, s.end);
    if (type != OpType::kCpu && type != OpType::kGpu) continue;
    const Tick duration = s.end - s.start;
    compute_ns += duration;
    if (type != OpType::kGpu) continue;
    if (const std::optional<compute::NodeUtilization> u = model->utilization(g, s.node)) {
      const auto weight = static_cast<double>(duration);
      if (u->compute_bound) compute_bound_ns += weight;
      compute_util += u->compute * weight;
      memory_util += u->memory * weight;
      intensity += u->intensity * weight;
    }
  }
  auto fill = [&](OpType t, Tick& value, bool& has) {
    has = !by_type[static_cast<int>(t)].empty();
    value = union_length(by_type[static_cast<int>(t)]);
  };
  fill(OpType::kCpu, st.cpu, st.has_cpu);
  fill(OpType::kGpu, st.gpu, st.has_gpu);
  fill(OpType::kComm, st.comm, st.has_comm);
  fill(OpType::kRemoteMem, st.remote_mem, st.has_remote_mem);
  fill(OpType::kReplay, st.replay, st.has_replay);
  fill(OpType::kInvalid, st.invalid, st.has_invalid);
  if (st.has_gpu && st.has_comm && st.gpu + st.comm > st.wall) st.overlap = st.gpu + st.comm - st.wall;
  const double total = static_cast<double>(compute_ns);
  st.compute_bound = compute_bound_ns / total;
  st.compute_utilization = compute_util / total;
  st.memory_utilization = memory_util / total;
  st.operation_intensity = intensity / total;
  return st;
}

std::string statistics_lines(const sim::Inputs& inputs, const NodeLog& log, NpuId npu) {
  const NpuStatistics st = npu_statistics(inputs, log, npu);
  std::string out = fmt::format("sys[{0}]. Post statistics processing start.\nsys[{0}]. Post statistics processing "
                                "end.\n"
                                "sys[{0}], Wall time: {1}\n",
                                npu, st.wall);
  auto line = [&](bool has, const char* name, Tick value) {
    if (has) out += fmt::format("sys[{}], {} time: {}\n", npu, name, value);
  };
  line(st.has_cpu, "CPU", st.cpu);
  line(st.has_gpu, "GPU", st.gpu);
  line(st.has_comm, "Comm", st.comm);
  line(st.has_remote_mem, "Remote mem", st.remote_mem);
  line(st.has_replay, "Replay", st.replay);
  line(st.has_invalid, "Invalid", st.invalid);
  if (st.overlap > 0) out += fmt::format("sys[{}], Total compute-communication overlap: {}\n", npu, st.overlap);
  if (st.has_utilization) {
    out += fmt::format("sys[{0}], Compute bound percentage: {1:.3f}%\nsys[{0}], Average compute utilization: {2:.3f}%\n"
                       "sys[{0}], Average memory utilization: {3:.3f}%\nsys[{0}], Average operation intensity: "
                       "{4:.3f}\n",
                       npu, st.compute_bound * 100, st.compute_utilization * 100, st.memory_utilization * 100,
                       st.operation_intensity);
  }
  return out;
}

}  // namespace chakrasim::report
