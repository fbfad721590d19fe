#include "sim/simulation.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "compute/compute_model.h"
#include "core/error.h"
#include "core/event_queue.h"
#include "core/npu_timers.h"
#include "core/resources.h"
#include "network/network.h"
#include "sim/rank_classes.h"
#include "sim/symmetry.h"
#include "sim/time_splitter.h"
#include "sim/workload_options.h"
#include "system/nccl/nccl_collectives.h"
#include "system/system.h"
#include "workload/executor.h"

namespace chakrasim::sim {

Tick Result::max_finish_ns() const {
  Tick t = 0;
  for (const NpuResult& n : npus) t = n.finish_ns > t ? n.finish_ns : t;
  return t;
}

namespace {

// Collectives `npu` has issued or finished on communicator group `group`, in id order.
std::uint64_t collectives_started(const workload::Executor& executor, NpuId npu, std::uint32_t group,
                                  std::uint32_t up_to_node, bool broadcast_by_duration) {
  const chakra::Graph& g = executor.graph(npu);
  std::uint64_t count = 0;
  for (std::uint32_t i = 0; i < g.size() && i < up_to_node; ++i) {
    if (g.type(i) != chakra::NodeType::kCommColl ||
        !workload::collective_of(g.attrs(i).comm_type, broadcast_by_duration))
      continue;
    if (workload::group_of(g.string(g.attrs(i).pg_name)).value_or(0) != group) continue;
    if (executor.state(npu, i) != workload::Executor::NodeState::kWaiting &&
        executor.state(npu, i) != workload::Executor::NodeState::kReady) {
      ++count;
    }
  }
  return count;
}

// Per communicator group, how many collectives each NPU started (computed once per group).
using StartedCounts = std::map<std::uint32_t, std::vector<std::uint64_t>>;

// What an issued, never-completed node waits for, in words.
std::string stuck_detail(const Inputs& inputs, const workload::Executor& executor, NpuId npu, std::uint32_t node,
                         StartedCounts& started) {
  const chakra::Graph& g = executor.graph(npu);
  const chakra::OpAttrs& a = g.attrs(node);
  switch (g.type(node)) {
    case chakra::NodeType::kCommSend:
      return fmt::format("send of {} bytes to NPU {} with tag {}: NPU {} never posted a receive from NPU {} with "
                         "that tag and size",
                         a.comm_size, a.comm_dst, a.comm_tag, a.comm_dst, npu);
    case chakra::NodeType::kCommRecv:
      return fmt::format("receive of {} bytes from NPU {} with tag {}: NPU {} never sent a message to NPU {} with "
                         "that tag and size",
                         a.comm_size, a.comm_src, a.comm_tag, a.comm_src, npu);
    case chakra::NodeType::kCommColl: {
      const auto kind = workload::collective_of(a.comm_type, inputs.system.broadcast_by_duration);
      if (!kind) break;
      const std::uint32_t group = workload::group_of(g.string(a.pg_name)).value_or(0);
      std::vector<NpuId> members;
      auto it = inputs.groups.find(group);
      if (group != 0 && it != inputs.groups.end()) {
        members = it->second;
      } else {
        for (NpuId r = 0; r < executor.npu_count(); ++r) members.push_back(r);
      }
      // This is the k-th collective of its group on this NPU; peers that started fewer never
      // issued its counterpart.
      const std::uint64_t k = collectives_started(executor, npu, group, node + 1, inputs.system.broadcast_by_duration);
      auto [totals, fresh] = started.try_emplace(group);
      if (fresh) {
        for (NpuId r = 0; r < executor.npu_count(); ++r) {
          totals->second.push_back(
              collectives_started(executor, r, group, executor.graph(r).size(), inputs.system.broadcast_by_duration));
        }
      }
      std::string missing;
      std::size_t count = 0;
      for (NpuId peer : members) {
        if (peer == npu || totals->second[peer] >= k) continue;
        if (count++ < 16) missing += (missing.empty() ? "" : ", ") + std::to_string(peer);
      }
      if (count > 16) missing += fmt::format(" and {} more", count - 16);
      const std::string what = fmt::format("{} of {} bytes{}", system::collective_name(*kind), a.comm_size,
                                           group == 0 ? "" : fmt::format(" on group {}", group));
      if (count == 0)
        return what + ": every peer issued it, but their messages never matched (different sizes or order)";
      return fmt::format("{}: NPU(s) {} never issued their matching collective", what, missing);
    }
    default: break;
  }
  return "issued and never completed";
}

}  // namespace

Result simulate(const Inputs& inputs, workload::NodeObserver* observer) {
  Hooks hooks;
  hooks.nodes = observer;
  return simulate(inputs, hooks);
}

namespace {

std::vector<const chakra::Graph*> graphs_of(const workload::Executor& executor) {
  std::vector<const chakra::Graph*> graphs;
  for (NpuId r = 0; r < executor.npu_count(); ++r) graphs.push_back(&executor.graph(r));
  return graphs;
}

// The layers of one run, built and wired in the order they depend on each other: the event
// queue and timers first, the workload executor, the system layer it sends collectives to, and
// the network backend the system layer sends messages through.
struct Layers {
  // `folding`: a folded run (nullptr: a full one); `symmetric`: the folding is the symmetric
  // run's, NPU 0 alone.
  Layers(const Inputs& inputs, const network::Topology& topology, const network::BackendInfo& backend,
         const network::Folding* folding, bool symmetric, const Hooks& hooks)
      : timers(queue, symmetric ? 1 : topology.npu_count()),
        remote_memory(inputs.memory, topology.npu_count()),
        executor(symmetric ? std::vector<std::shared_ptr<const chakra::Graph>>{inputs.graphs.front()} : inputs.graphs,
                 workload_options(inputs), remote_memory, timers, queue,
                 folding != nullptr && !symmetric ? folding->representatives() : std::vector<NpuId>{}),
        router{&executor},
        system(inputs.system, topology, timers, router, folding),
        nccl(make_nccl(inputs, topology, backend, system, timers, executor, symmetric)),
        network(network::make_network(backend.name, topology, queue, system, folding)),
        own_engine(backend.own_engine),
        group_kinds(inputs.groups, inputs.group_kind_names, topology),
        time_splitter(graphs_of(executor), group_kinds, hooks.nodes) {
    executor.observe(&time_splitter);
    system.observe(hooks.collectives);
    if (nccl) nccl->observe(hooks.collectives);
    system.attach(*network);
    network->observe_links(hooks.links);
    network->observe_flows(hooks.flows);
    system.set_groups(inputs.groups);
    if (nccl) nccl->set_groups(inputs.groups);
    router.nccl = nccl.get();
    for (std::size_t k = 0; k < system::kCollectiveKinds; ++k) {
      if (!inputs.custom_algorithms[k].empty()) {
        system.set_custom_algorithm(static_cast<system::CollectiveKind>(k), inputs.custom_algorithms[k]);
      }
    }
    // With the NCCL model, collectives go to it; sends, receives and groups pass through it.
    if (nccl) {
      executor.attach(*nccl);
    } else {
      executor.attach(system);
    }
  }

  static std::unique_ptr<system::nccl::NcclCollectives> make_nccl(const Inputs& inputs,
                                                                  const network::Topology& topology,
                                                                  const network::BackendInfo& backend,
                                                                  system::System& system, NpuTimers& timers,
                                                                  system::CommListener& listener, bool symmetric) {
    if (inputs.system.collectives == system::CollectiveModel::kAstraSim) return nullptr;
    const bool traffic = inputs.system.collectives == system::CollectiveModel::kNcclTraffic;
    if (traffic && !backend.has_links) {
      fail("--collectives nccl-traffic: the {} backend serves every message at full link rate, so NCCL's channels "
           "would not share the links; expected a backend that charges links (congestion-aware, flow, ns3), or "
           "--collectives nccl for the cost alone",
           backend.name);
    }
    const std::uint32_t first = topology.dims() > 0 ? topology.spec().dims[0].npus : topology.npu_count();
    return std::make_unique<system::nccl::NcclCollectives>(system::nccl::run_machine(inputs.system.nccl,
                                                                                     topology.npu_count(), first),
                                                           topology.npu_count(), system, timers, listener, symmetric,
                                                           traffic);
  }

  EventQueue queue;
  NpuTimers timers;
  memory::RemoteMemory remote_memory;
  workload::Executor executor;
  // The system layer's completions: the workload's operations, or the NCCL model's traffic.
  struct CompletionRouter final : system::CommListener {
    explicit CompletionRouter(workload::Executor* e) : executor(e) {}
    void on_comm_done(NpuId npu, std::uint64_t token) override {
      if (nccl != nullptr && (token & system::nccl::NcclCollectives::kTrafficToken) != 0) {
        nccl->on_traffic_done(npu, token);
      } else {
        executor->on_comm_done(npu, token);
      }
    }
    workload::Executor* executor;
    system::nccl::NcclCollectives* nccl = nullptr;
  } router;
  system::System system;
  std::unique_ptr<system::nccl::NcclCollectives> nccl;  // the NCCL model, when the run asks for it
  std::unique_ptr<network::Network> network;
  const bool own_engine;  // the backend's row: ask next_event_time() after every event
  sim::GroupKinds group_kinds;
  sim::TimeSplitter time_splitter;  // passes every node start and end on to hooks.nodes
};

// Calls hooks.progress every progress_every_s of wall time, checked every 65536 events.
class ProgressReporter {
 public:
  ProgressReporter(const Hooks& hooks, const workload::Executor& executor) : hooks_(hooks), executor_(executor) {
    if (!hooks.progress) return;
    next_s_ = hooks.progress_every_s;
    for (const NpuId r : executor.running_ranks()) total_nodes_ += executor.graph(r).size();
  }
  void tick(const EventQueue& queue) {
    if (!hooks_.progress || (queue.events_processed() & 0xffff) != 0) return;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at_).count();
    if (wall < next_s_) return;
    next_s_ = wall + hooks_.progress_every_s;
    std::uint64_t done = 0;
    for (const NpuId r : executor_.running_ranks()) done += executor_.totals(r).nodes_done;
    hooks_.progress(Progress{queue.now(), queue.events_processed(), done, total_nodes_, wall});
  }

 private:
  const Hooks& hooks_;
  const workload::Executor& executor_;
  const std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
  double next_s_ = 0;
  std::uint64_t total_nodes_ = 0;
};

void dispatch(Layers& layers, const Event& e) {
  switch (e.target) {
    case EventTarget::kTimers:
      layers.timers.fire(e, [&](const TimerEntry& entry) {
        switch (entry.owner) {
          case TimerOwner::kWorkload: layers.executor.handle_timer(entry); break;
          case TimerOwner::kSystem: layers.system.handle_timer(entry); break;
          case TimerOwner::kCollectiveModel: layers.nccl->handle_timer(entry); break;
        }
      });
      break;
    case EventTarget::kNetwork: layers.network->handle(e); break;
  }
}

// The event loop, interleaving the global queue with a backend's own engine as network.h's
// contract says: queued events up to the backend's next time run first, then the clock moves
// to that time and the backend advances to it; the loop ends when both have nothing left. A
// backend without its own engine answers kNeverTick, so its run is the queue drained in one go.
void run_events(Layers& layers, const Hooks& hooks) {
  EventQueue& queue = layers.queue;
  network::Network& network = *layers.network;
  ProgressReporter progress(hooks, layers.executor);
  Tick network_next = network.next_event_time();
  for (;;) {
    while (!queue.empty() && (network_next == kNeverTick || queue.next_time() <= network_next)) {
      progress.tick(queue);
      dispatch(layers, queue.pop());
      if (layers.own_engine) network_next = network.next_event_time();
    }
    network_next = network.next_event_time();
    if (network_next == kNeverTick) {
      if (queue.empty()) return;
      continue;
    }
    if (!queue.empty() && queue.next_time() <= network_next) continue;
    if (network_next < queue.now()) {
      fail("internal error: the network backend's next event ({} ns) is before the current time ({} ns)", network_next,
           queue.now());
    }
    queue.advance_clock(network_next);
    network.advance_to(network_next);
    network_next = network.next_event_time();
  }
}

// Every NPU's totals and, for the NPUs that did not finish, the nodes they still hold.
// How many GPU compute nodes the compute model leaves to its fallback, over every NPU's trace. A
// folded run counts each class's representative once for all its members: their traces are the
// representative's with ranks moved, shapes and all.
void count_fallback_nodes(const Inputs& inputs, const network::Folding* folding, Result& result) {
  if (inputs.replay_only) return;
  const std::unique_ptr<compute::ComputeModel> model = compute::make_compute_model(inputs.compute);
  result.compute_fallback = model->fallback_name();
  if (result.compute_fallback.empty()) return;
  std::map<const chakra::Graph*, std::pair<std::uint64_t, std::uint64_t>> counted;  // graph -> (gpu, fallback)
  for (NpuId r = 0; r < inputs.graphs.size(); ++r) {
    const chakra::Graph& g = *inputs.graphs[folding != nullptr ? folding->representative_of(r) : r];
    auto [at, added] = counted.try_emplace(&g);
    if (added) {
      for (std::uint32_t i = 0; i < g.size(); ++i) {
        if (g.type(i) != chakra::NodeType::kComp || g.is_cpu_op(i)) continue;
        ++at->second.first;
        if (model->falls_back(g, i)) ++at->second.second;
      }
    }
    result.gpu_compute_nodes += at->second.first;
    result.fallback_nodes += at->second.second;
  }
}

Result collect_result(const Inputs& inputs, const Layers& layers, const Hooks& hooks, const network::Folding* folding,
                      bool symmetric) {
  const workload::Executor& executor = layers.executor;
  Result result;
  result.symmetric = symmetric;
  result.classes_simulated = folding != nullptr ? folding->class_count() : 0;
  if (hooks.links != nullptr) {
    for (std::uint32_t l = 0; l < layers.network->link_count(); ++l) {
      result.link_names.push_back(layers.network->link_name(l));
      result.link_dims.push_back(layers.network->link_dimension(l));
    }
  }
  StartedCounts started;
  result.events = layers.queue.events_processed();
  result.messages = layers.system.messages_sent();
  result.npus.resize(executor.npu_count());
  result.group_kinds = layers.group_kinds.labels();
  result.peak_is_mfu_peak = inputs.compute.mfu_peak_tflops > 0;
  result.peak_flops_per_s =
      (inputs.compute.mfu_peak_tflops > 0 ? inputs.compute.mfu_peak_tflops : inputs.compute.peak_perf_tflops) * 1e12;
  if (result.peak_flops_per_s <= 0 && inputs.compute.model == "systolic") {
    result.peak_flops_per_s = inputs.compute.systolic.peak_tflops() * 1e12;
    result.peak_is_systolic = true;
  }
  count_fallback_nodes(inputs, folding, result);
  for (NpuId r = 0; r < executor.npu_count(); ++r) {
    // In a folded run the others' figures are their representatives' (copied after the run).
    if (folding != nullptr && !symmetric && folding->representative_of(r) != r) continue;
    const workload::NpuTotals& t = executor.totals(r);
    NpuResult& n = result.npus[r];
    n.finished = t.finished;
    n.finish_ns = t.finish_ns;
    n.gpu_compute_ns = t.gpu_compute_ns;
    n.cpu_compute_ns = t.cpu_compute_ns;
    n.exposed_comm_ns = t.finish_ns - t.gpu_compute_ns;
    n.nodes = executor.graph(r).size();
    n.nodes_done = t.nodes_done;
    n.split = layers.time_splitter.split(r, t.finish_ns);
    if (t.finished) continue;
    // Unfinished parents of every unfinished node, in one pass over the graph. (A folded run
    // that stops is run again in full, which says what each issued node waits for: the other
    // NPUs' state that says it is not kept here.)
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
      result.stuck.push_back(
          {r, g.id(i), g.name(i), chakra::node_type_name(g.raw_type(i)), s == State::kIssued, std::move(waiting[i]),
           s == State::kIssued && folding == nullptr ? stuck_detail(inputs, executor, r, i, started) : std::string()});
    }
  }
  return result;
}

}  // namespace

Result simulate(const Inputs& inputs, const Hooks& hooks) {
  validate(inputs);
  const network::Topology topology(inputs.network);
  const network::BackendInfo& backend = network::find_backend(inputs.backend);
  // A symmetric run simulates NPU 0 alone (sim/symmetry.h), unless an observer wants every NPU.
  const bool observed =
      hooks.nodes != nullptr || hooks.collectives != nullptr || hooks.links != nullptr || hooks.flows != nullptr;
  const bool symmetric = inputs.allow_symmetry && (!observed || hooks.symmetric_ok) && is_symmetric(inputs);
  // Else one NPU per class of ranks that run the same timelines (sim/rank_classes.h), unobserved.
  std::optional<network::Folding> folding;
  if (symmetric) {
    folding.emplace(network::Folding::whole(topology));
  } else if (inputs.allow_symmetry &&
             (!observed || (hooks.symmetric_ok && hooks.before_run && hooks.links == nullptr))) {
    folding = find_rank_classes(inputs, topology);
  }
  const network::Folding* fold = folding ? &*folding : nullptr;
  if (hooks.before_run) hooks.before_run(fold);
  Result result;
  {
    Layers layers(inputs, topology, backend, fold, symmetric, hooks);
    layers.executor.start();
    run_events(layers, hooks);
    result = collect_result(inputs, layers, hooks, fold, symmetric);
  }
  if (fold != nullptr) {
    // Every NPU ran its representative's timeline. A folded run cannot deadlock on a peer the
    // full run would not; should it stop anyway, the full run gives the per-NPU report.
    if (!result.all_finished()) {
      Inputs full = inputs;
      full.allow_symmetry = false;
      return simulate(full, hooks);
    }
    if (symmetric) {
      result.npus.assign(inputs.graphs.size(), result.npus.front());
    } else {
      for (NpuId r = 0; r < result.npus.size(); ++r) result.npus[r] = result.npus[fold->representative_of(r)];
    }
  }
  return result;
}

}  // namespace chakrasim::sim
