#include "sim/simulation.h"

#include "core/error.h"
#include "core/event_queue.h"
#include "core/npu_timers.h"
#include "network/network.h"
#include "system/system.h"
#include "workload/executor.h"

namespace chakrasim::sim {

Tick Result::max_finish_ns() const {
  Tick t = 0;
  for (const NpuResult& n : npus) t = n.finish_ns > t ? n.finish_ns : t;
  return t;
}

namespace {

workload::WorkloadOptions workload_options(const Inputs& inputs) {
  workload::WorkloadOptions options;
  options.compute = inputs.compute;
  options.replay_only = inputs.replay_only;
  options.remote_memory = inputs.memory.kind != memory::RemoteMemoryKind::kNone;
  return options;
}

}  // namespace

void validate(const Inputs& inputs) {
  const network::Topology topology(inputs.network);
  if (inputs.graphs.size() != topology.npu_count()) {
    fail("the workload has {} rank files but the network has {} NPUs; expected one trace per NPU",
         inputs.graphs.size(), topology.npu_count());
  }
  for (std::size_t k = 0; k < system::kCollectiveKinds; ++k) {
    const auto& list = inputs.system.implementations[k];
    if (!list.empty() && !list.front().one_flat && list.size() > topology.dims()) {
      fail("{}-implementation lists {} algorithms but the network has {} dimensions; expected at "
           "most one per dimension",
           system::collective_name(static_cast<system::CollectiveKind>(k)), list.size(), topology.dims());
    }
  }
  const workload::WorkloadOptions options = workload_options(inputs);
  const chakra::Graph* last = nullptr;
  for (const auto& g : inputs.graphs) {
    if (g.get() == last) continue;
    last = g.get();
    workload::validate(*g, options);
  }
}

Result simulate(const Inputs& inputs, workload::NodeObserver* observer) {
  validate(inputs);
  const network::Topology topology(inputs.network);
  EventQueue queue;
  NpuTimers timers(queue, topology.npu_count());
  memory::RemoteMemory remote_memory(inputs.memory, topology.npu_count());
  workload::Executor executor(inputs.graphs, workload_options(inputs), remote_memory, timers, queue);
  executor.observe(observer);
  system::System system(inputs.system, topology, timers, executor);
  std::unique_ptr<network::Network> network = network::make_network(inputs.backend, topology, queue, system);
  system.attach(*network);
  system.set_groups(inputs.groups);
  executor.attach(system);

  executor.start();
  while (!queue.empty()) {
    const Event e = queue.pop();
    switch (e.target) {
      case EventTarget::kTimers:
        timers.fire(e, [&](const TimerEntry& entry) {
          if (entry.owner == TimerOwner::kWorkload) executor.handle_timer(entry);
          else system.handle_timer(entry);
        });
        break;
      case EventTarget::kNetwork: network->handle(e); break;
      case EventTarget::kMemory: break;
    }
  }

  Result result;
  result.events = queue.events_processed();
  result.messages = system.messages_sent();
  result.npus.resize(executor.npu_count());
  for (NpuId r = 0; r < executor.npu_count(); ++r) {
    const workload::NpuTotals& t = executor.totals(r);
    NpuResult& n = result.npus[r];
    n.finished = t.finished;
    n.finish_ns = t.finish_ns;
    n.gpu_compute_ns = t.gpu_compute_ns;
    n.cpu_compute_ns = t.cpu_compute_ns;
    n.exposed_comm_ns = t.finish_ns - t.gpu_compute_ns;
    n.nodes = executor.graph(r).size();
    n.nodes_done = t.nodes_done;
    if (t.finished) continue;
    // Unfinished parents of every unfinished node, in one pass over the graph.
    const chakra::Graph& g = executor.graph(r);
    using State = workload::Executor::NodeState;
    std::vector<std::vector<std::uint64_t>> waiting(g.size());
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      if (executor.state(r, i) == State::kDone) continue;
      for (std::uint32_t c : g.children(i)) waiting[c].push_back(g.id(i));
    }
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      const State s = executor.state(r, i);
      if (s == State::kDone) continue;
      result.stuck.push_back({r, g.id(i), g.name(i), chakra::node_type_name(g.raw_type(i)),
                              s == State::kIssued, std::move(waiting[i])});
    }
  }
  return result;
}

}  // namespace chakrasim::sim
