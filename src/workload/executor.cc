#include "workload/executor.h"

#include "chakra/process_groups.h"
#include "core/error.h"
#include "core/sim_time.h"

namespace chakrasim::workload {

using chakra::CommType;
using chakra::NodeType;
using chakra::OpAttrs;

namespace {}  // namespace

std::optional<CollectiveForm> collective_form(std::int64_t comm_type, bool broadcast_by_duration) {
  using system::CollectiveKind;
  using system::RequestSizing;
  switch (static_cast<CommType>(comm_type)) {
    case CommType::kAllReduce:
    case CommType::kBarrier: return CollectiveForm{CollectiveKind::kAllReduce, RequestSizing::kAsIs};
    case CommType::kAllGather:
    case CommType::kGather:
    case CommType::kScatter: return CollectiveForm{CollectiveKind::kAllGather, RequestSizing::kAsIs};
    case CommType::kReduceScatter:
    case CommType::kReduceScatterBlock: return CollectiveForm{CollectiveKind::kReduceScatter, RequestSizing::kAsIs};
    case CommType::kAllToAll: return CollectiveForm{CollectiveKind::kAllToAll, RequestSizing::kAsIs};
    case CommType::kReduce: return CollectiveForm{CollectiveKind::kReduceScatter, RequestSizing::kReduce};
    case CommType::kBroadcast:
      if (broadcast_by_duration) return std::nullopt;
      return CollectiveForm{CollectiveKind::kAllGather, RequestSizing::kBroadcast};
  }
  return std::nullopt;
}

std::optional<system::CollectiveKind> collective_of(std::int64_t comm_type, bool broadcast_by_duration) {
  const auto form = collective_form(comm_type, broadcast_by_duration);
  if (!form) return std::nullopt;
  return form->kind;
}

const char* collective_node_name(std::int64_t comm_type) {
  switch (static_cast<CommType>(comm_type)) {
    case CommType::kAllReduce: return "all-reduce";
    case CommType::kReduce: return "reduce";
    case CommType::kAllGather: return "all-gather";
    case CommType::kGather: return "gather";
    case CommType::kScatter: return "scatter";
    case CommType::kBroadcast: return "broadcast";
    case CommType::kAllToAll: return "all-to-all";
    case CommType::kReduceScatter: return "reduce-scatter";
    case CommType::kReduceScatterBlock: return "reduce-scatter (block)";
    case CommType::kBarrier: return "barrier";
  }
  return "collective";
}

std::optional<std::uint32_t> group_of(const std::string& pg_name) {
  if (pg_name.empty() || pg_name == "0") return 0u;
  std::uint64_t value = 0;
  for (char c : pg_name) {
    if (c < '0' || c > '9' || value > 0xffffffffull) return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (value > 0xffffffffull) return std::nullopt;
  return static_cast<std::uint32_t>(value);
}

void validate(const chakra::Graph& graph, const WorkloadOptions& options) {
  const std::unique_ptr<compute::ComputeModel> compute = compute::make_compute_model(options.compute);
  for (std::uint32_t i = 0; i < graph.size(); ++i) {
    const OpAttrs& a = graph.attrs(i);
    auto where = [&] {
      return fmt::format("{}: node {} (\"{}\", {})", graph.source(), graph.id(i), graph.name(i),
                         chakra::node_type_name(graph.raw_type(i)));
    };
    if (graph.raw_type(i) > static_cast<std::uint32_t>(NodeType::kCommColl)) {
      fail("{}: node {} (\"{}\") has unknown node type {}; expected 0 to 7 (INVALID_NODE to "
           "COMM_COLL_NODE)",
           graph.source(), graph.id(i), graph.name(i), graph.raw_type(i));
    }
    // Limits that keep every time exact (core/sim_time.h): a duration in ns and a size in bytes
    // that neither wrap 64 bits nor lose a unit in a double.
    if (graph.duration_micros(i) > kMaxSimulatedNs / 1000) {
      fail("{}: duration_micros {} is beyond the simulated time a run can reach; expected at most {} µs "
           "(146 years)",
           where(), graph.duration_micros(i), kMaxSimulatedNs / 1000);
    }
    for (const auto& [bit, name, value] : {std::tuple{OpAttrs::kCommSize, "comm_size", a.comm_size},
                                           std::tuple{OpAttrs::kTensorSize, "tensor_size", a.tensor_size}}) {
      if (a.has(bit) && value > kMaxMessageBytes) {
        fail("{}: {} {} is invalid; expected at most {} bytes (2^53, 8 PiB)", where(), name, value, kMaxMessageBytes);
      }
    }
    if (options.replay_only) continue;  // every node is a delay of its recorded duration
    switch (graph.type(i)) {
      case NodeType::kInvalid:
      case NodeType::kMetadata: break;
      case NodeType::kComp:
        if (const std::string why = compute->check(graph, i); !why.empty()) fail("{}: {}", where(), why);
        break;
      case NodeType::kCommColl:
        if (graph.is_cpu_op(i)) fail("{}: a collective cannot be a CPU op (is_cpu_op is true)", where());
        if (!a.has(OpAttrs::kCommType)) fail("{}: missing the attribute \"comm_type\"", where());
        if (static_cast<CommType>(a.comm_type) == CommType::kBroadcast && options.broadcast_by_duration) break;
        if (!collective_form(a.comm_type, options.broadcast_by_duration)) {
          fail("{}: comm_type {} ({}) is not supported; expected 0 to 9 (ALL_REDUCE, REDUCE, ALL_GATHER, GATHER, "
               "SCATTER, BROADCAST, ALL_TO_ALL, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, BARRIER)",
               where(), a.comm_type, chakra::comm_type_name(a.comm_type));
        }
        // A barrier carries no data; the others say how much.
        if (!a.has(OpAttrs::kCommSize) && static_cast<CommType>(a.comm_type) != CommType::kBarrier) {
          fail("{}: missing the attribute \"comm_size\"", where());
        }
        if (!group_of(graph.string(a.pg_name))) {
          fail("{}: pg_name \"{}\" is not a communicator group id; expected a decimal integer "
               "(\"\" or \"0\" for all NPUs)",
               where(), graph.string(a.pg_name));
        }
        break;
      case NodeType::kCommSend:
      case NodeType::kCommRecv: {
        const bool send = graph.type(i) == NodeType::kCommSend;
        if (!a.has(send ? OpAttrs::kCommDst : OpAttrs::kCommSrc)) {
          fail("{}: missing the attribute \"{}\"", where(), send ? "comm_dst" : "comm_src");
        }
        if (!a.has(OpAttrs::kCommSize)) fail("{}: missing the attribute \"comm_size\"", where());
        if (!a.has(OpAttrs::kCommTag)) fail("{}: missing the attribute \"comm_tag\"", where());
        break;
      }
      case NodeType::kMemLoad:
      case NodeType::kMemStore:
        if (!options.remote_memory) {
          fail("{}: remote memory access, but the memory configuration is NO_MEMORY_EXPANSION "
               "(or none was given); expected --memory with PER_NPU_MEMORY_EXPANSION, "
               "PER_NODE_MEMORY_EXPANSION or MEMORY_POOL",
               where());
        }
        if (!a.has(OpAttrs::kTensorSize)) fail("{}: missing the attribute \"tensor_size\"", where());
        break;
    }
  }
}

Executor::Executor(std::vector<std::shared_ptr<const chakra::Graph>> graphs, const WorkloadOptions& options,
                   memory::RemoteMemory& memory, NpuTimers& timers, EventQueue& queue, std::vector<NpuId> ranks_to_run)
    : ranks_to_run_(std::move(ranks_to_run)),
      compute_(compute::make_compute_model(options.compute)),
      replay_only_(options.replay_only),
      broadcast_by_duration_(options.broadcast_by_duration),
      memory_(memory),
      timers_(timers),
      queue_(queue) {
  npus_.resize(graphs.size());
  for (std::size_t r = 0; r < graphs.size(); ++r) npus_[r].graph = std::move(graphs[r]);
  if (ranks_to_run_.empty()) {
    for (NpuId r = 0; r < npus_.size(); ++r) ranks_to_run_.push_back(r);
  }
  for (const NpuId r : ranks_to_run_) {
    Npu& npu = npus_[r];
    const chakra::Graph& g = *npu.graph;
    npu.waiting_parents.resize(g.size());
    npu.state.assign(g.size(), NodeState::kWaiting);
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      npu.waiting_parents[i] = g.parent_count(i);
      if (npu.waiting_parents[i] == 0) {
        npu.state[i] = NodeState::kReady;
        npu.ready[slot_of(g, i)].push(i);
      }
    }
  }
}

Executor::Slot Executor::slot_of(const chakra::Graph& graph, std::uint32_t node) const {
  if (graph.is_cpu_op(node)) return kCpu;
  switch (graph.type(node)) {
    case NodeType::kComp: return kGpu;
    case NodeType::kCommRecv: return kNoSlot;
    default: return kComm;
  }
}

void Executor::start() {
  for (const NpuId r : ranks_to_run_) issue_ready(r);
}

// One pass: repeatedly issue the lowest-id ready node whose slot is free. Zero-time nodes
// complete inside issue() and may free more nodes, which this same loop then sees.
void Executor::issue_ready(NpuId r) {
  Npu& npu = npus_[r];
  npu.in_pass = true;
  for (;;) {
    int best = -1;
    std::uint32_t best_node = 0;
    for (int c = 0; c < kSlotClasses; ++c) {
      if (npu.ready[c].empty() || (c != kNoSlot && npu.busy[c])) continue;
      const std::uint32_t node = npu.ready[c].top();
      if (best < 0 || node < best_node) {
        best = c;
        best_node = node;
      }
    }
    if (best < 0) break;
    npu.ready[best].pop();
    issue(r, best_node);
  }
  npu.in_pass = false;
  if (!npu.totals.finished && npu.in_flight == 0 && npu.totals.nodes_done == npu.graph->size()) {
    npu.totals.finished = true;
    npu.totals.finish_ns = queue_.now();
  }
}

void Executor::issue(NpuId r, std::uint32_t node) {
  Npu& npu = npus_[r];
  const chakra::Graph& g = *npu.graph;
  const Slot slot = slot_of(g, node);
  if (slot != kNoSlot) npu.busy[slot] = true;
  npu.state[node] = NodeState::kIssued;
  ++npu.in_flight;
  if (observer_ != nullptr) observer_->on_node_start(r, node, queue_.now());

  if (replay_only_) {
    const Tick ns = compute::replay_ns(g.duration_micros(node));
    if (g.type(node) == NodeType::kComp) (slot == kCpu ? npu.totals.cpu_compute_ns : npu.totals.gpu_compute_ns) += ns;
    schedule_node_done(r, node, ns);
    return;
  }
  switch (g.type(node)) {
    case NodeType::kComp: issue_compute(r, node, slot); return;
    case NodeType::kCommColl: issue_collective(r, node); return;
    case NodeType::kCommSend:
    case NodeType::kCommRecv: issue_point_to_point(r, node); return;
    case NodeType::kMemLoad:
    case NodeType::kMemStore: {
      const Tick now = queue_.now();
      schedule_node_done(r, node, memory_.access(r, g.attrs(node).tensor_size, now) - now);
      return;
    }
    case NodeType::kMetadata:
      register_process_groups(r, node);
      complete(r, node);
      return;
    default:
      // INVALID and METADATA take no time.
      complete(r, node);
      return;
  }
}

// Every node's end goes through here, so that a sum of long durations that would pass the end of
// simulated time is refused naming the node that reaches it.
void Executor::schedule_node_done(NpuId r, std::uint32_t node, Tick delay) {
  const chakra::Graph& g = *npus_[r].graph;
  time_after(queue_.now(), delay,
             [&] { return fmt::format("{}: node {} (\"{}\") on NPU {}", g.source(), g.id(node), g.name(node), r); });
  timers_.schedule(r, delay, TimerOwner::kWorkload, kNodeDone, node);
}

void Executor::issue_compute(NpuId r, std::uint32_t node, Slot slot) {
  Npu& npu = npus_[r];
  const std::optional<Tick> ns = compute_->duration(*npu.graph, node);
  if (!ns) {
    complete(r, node);
    return;
  }
  (slot == kCpu ? npu.totals.cpu_compute_ns : npu.totals.gpu_compute_ns) += *ns;
  schedule_node_done(r, node, *ns);
}

void Executor::issue_collective(NpuId r, std::uint32_t node) {
  const chakra::Graph& g = *npus_[r].graph;
  const OpAttrs& a = g.attrs(node);
  const auto form = collective_form(a.comm_type, broadcast_by_duration_);
  if (!form) {
    // The reference replays a broadcast for its recorded duration (validate let nothing else by).
    schedule_node_done(r, node, compute::replay_ns(g.duration_micros(node)));
    return;
  }
  system::CollectiveRequest request;
  request.kind = form->kind;
  request.sizing = form->sizing;
  request.bytes = a.comm_size;
  request.priority = a.comm_priority;
  if (a.has(OpAttrs::kInvolvedDim)) request.involved_dims = a.involved_dims;
  request.group = *group_of(g.string(a.pg_name));
  system_->start_collective(r, request, node);
}

void Executor::issue_point_to_point(NpuId r, std::uint32_t node) {
  const chakra::Graph& g = *npus_[r].graph;
  const OpAttrs& a = g.attrs(node);
  const bool send = g.type(node) == NodeType::kCommSend;
  const std::int64_t self =
      send ? (a.has(OpAttrs::kCommSrc) ? a.comm_src : r) : (a.has(OpAttrs::kCommDst) ? a.comm_dst : r);
  const std::int64_t peer = send ? a.comm_dst : a.comm_src;
  if (self != static_cast<std::int64_t>(r) || peer < 0 || peer >= static_cast<std::int64_t>(npus_.size()) ||
      peer == static_cast<std::int64_t>(r)) {
    fail("{}: node {} (\"{}\") on NPU {}: {} {} -> {} is invalid; expected {} to be this NPU and "
         "the peer another NPU from 0 to {}",
         g.source(), g.id(node), g.name(node), r, send ? "send" : "receive", send ? self : peer, send ? peer : self,
         send ? "comm_src" : "comm_dst", npus_.size() - 1);
  }
  if (send) {
    system_->send(r, static_cast<NpuId>(peer), a.comm_size, a.comm_tag, node);
  } else {
    system_->receive(r, static_cast<NpuId>(peer), a.comm_size, a.comm_tag, node);
  }
}

void Executor::complete(NpuId r, std::uint32_t node) {
  Npu& npu = npus_[r];
  const chakra::Graph& g = *npu.graph;
  const Slot slot = slot_of(g, node);
  if (slot != kNoSlot) npu.busy[slot] = false;
  --npu.in_flight;
  ++npu.totals.nodes_done;
  if (observer_ != nullptr) observer_->on_node_end(r, node, queue_.now());
  npu.state[node] = NodeState::kDone;
  for (std::uint32_t child : g.children(node)) {
    if (--npu.waiting_parents[child] == 0) {
      npu.state[child] = NodeState::kReady;
      npu.ready[slot_of(g, child)].push(child);
    }
  }
  if (!npu.in_pass) issue_ready(r);
}

void Executor::handle_timer(const TimerEntry& entry) { complete(entry.npu, static_cast<std::uint32_t>(entry.arg)); }

void Executor::on_comm_done(NpuId npu, std::uint64_t token) { complete(npu, static_cast<std::uint32_t>(token)); }

// The process groups a METADATA node describes (chakra/process_groups.h). A group with a rank
// that is not an NPU of the run is not registered.
void Executor::register_process_groups(NpuId r, std::uint32_t node) {
  const chakra::Graph& g = *npus_[r].graph;
  const OpAttrs& a = g.attrs(node);
  if (!a.has(OpAttrs::kInputsValues)) return;
  for (const chakra::ProcessGroupDescription& pg : chakra::describe_process_groups(g.string(a.inputs_values))) {
    const auto key = group_of(pg.name);
    if (!key || *key == 0 || !pg.ranks_whole) continue;
    std::vector<NpuId> members;
    bool valid = true;
    for (const std::uint64_t rank : pg.ranks) {
      if (rank >= npus_.size()) valid = false;
      else members.push_back(static_cast<NpuId>(rank));
    }
    if (valid) system_->register_group(r, *key, std::move(members));
  }
}

}  // namespace chakrasim::workload
