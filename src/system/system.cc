#include "system/system.h"
#include "system/algorithms.h"
#include "system/tags.h"

#include <algorithm>

#include "core/error.h"
#include "core/resources.h"
#include "core/sim_time.h"

namespace chakrasim::system {

// What a phase algorithm may do, bound to one stream. Built on the stack per call; the
// algorithm is a template over it, so there is no virtual dispatch per step.
struct System::Io {
  System& sys;
  std::uint32_t stream;

  // E now, then P(bytes) if the step reduces (the reference's PacketBundle: a memory-bus hop,
  // then the reduction when its "processed" flag is set).
  void bundle(bool reduce, std::uint64_t bytes) {
    Stream& s = sys.streams_[stream];
    if (reduce) s.reduce_bytes = bytes;
    sys.timers_.schedule(s.npu, s.endpoint_ns, TimerOwner::kSystem, kEndpointDone, StepTimerArg{stream, reduce}.pack());
  }
  void send(NpuId dst, std::uint64_t bytes) {
    const Stream& s = sys.streams_[stream];
    // Collective sends complete unobserved: only receives drive the algorithm.
    sys.transport_.send(s.npu, dst, bytes, s.tag, Completion{});
  }
  void receive(NpuId src, std::uint64_t bytes) {
    const Stream& s = sys.streams_[stream];
    sys.transport_.receive(s.npu, src, bytes, s.tag, Completion{stream, kStreamReceive});
  }
  void finish() { sys.enter_next_phase(stream); }

  // Custom algorithms: steps are nodes of the algorithm ET; peers are positions (all NPUs here,
  // so a position is the NPU itself). The ET's channel keeps apart messages of one stream.
  std::uint64_t custom_tag(std::int64_t channel) const {
    return tags::custom_channel(sys.streams_[stream].tag, channel);
  }
  std::uint32_t custom_op(std::uint32_t node) {
    return sys.ops_.add({sys.streams_[stream].npu, CustomNodeRef{stream, node}.pack()});
  }
  // Peers are positions in range and not the NPU itself: set_custom_algorithm checked every node.
  void send(std::uint32_t node, std::int64_t dst, std::uint64_t bytes, std::int64_t channel) {
    const NpuId npu = sys.streams_[stream].npu;
    sys.transport_.send(npu, static_cast<NpuId>(dst), bytes, custom_tag(channel),
                        Completion{custom_op(node), kCustomNodeDone});
  }
  void receive(std::uint32_t node, std::int64_t src, std::uint64_t bytes, std::int64_t channel) {
    const NpuId npu = sys.streams_[stream].npu;
    sys.transport_.receive(npu, static_cast<NpuId>(src), bytes, custom_tag(channel),
                           Completion{custom_op(node), kCustomNodeDone});
  }
  void compute(std::uint32_t node, Tick ns) {
    sys.timers_.schedule(sys.streams_[stream].npu, ns, TimerOwner::kSystem, kCustomComputeDone,
                         CustomNodeRef{stream, node}.pack());
  }
};

System::System(const SystemSpec& spec, const network::Topology& topology, NpuTimers& timers, CommListener& listener,
               const network::Folding* folding)
    : spec_(spec),
      topology_(topology),
      timers_(timers),
      listener_(listener),
      folded_groups_(folding != nullptr ? std::make_unique<FoldedGroups>(*folding) : nullptr),
      transport_(spec.rendezvous, folding, folded_groups_.get(), *this),
      groups_(topology.npu_count()) {
  const NpuId npus = folding != nullptr && folding->class_count() == 1 ? 1 : topology.npu_count();
  const std::size_t dims = std::max<std::size_t>(1, topology.dims());
  queues_per_dim_ = std::max<std::uint32_t>(1, spec.num_queues_per_dim);
  queues_per_npu_ = static_cast<std::uint32_t>(dims) * queues_per_dim_;
  queue_threshold_ = static_cast<std::uint32_t>(
      (std::uint64_t{spec.active_chunks_per_dimension} + queues_per_dim_ - 1) / queues_per_dim_);  // no 32-bit wrap
  if (queue_threshold_ == 0) queue_threshold_ = 1;
  priority_counter_.assign(npus, 0);
  next_stream_tag_.assign(npus, 0);
  allocators_.assign(static_cast<std::size_t>(npus) * dims, Allocators{});
  tree_phases_.assign(static_cast<std::size_t>(npus) * kCollectiveKinds * dims, 0);
  const std::uint64_t queues = std::uint64_t{npus} * queues_per_npu_;
  require_memory(queues * (sizeof(std::vector<WaitingStream>) + sizeof(std::uint32_t)),
                 fmt::format("The scheduling queues ({} NPUs x {} dimensions x {} queues per dimension, "
                             "--num-queues-per-dim)",
                             npus, dims, queues_per_dim_));
  waiting_.resize(static_cast<std::size_t>(npus) * queues_per_npu_);
  running_.assign(static_cast<std::size_t>(npus) * queues_per_npu_, 0);
}

void System::set_groups(const CommGroups& groups) {
  groups_.set_shared(groups);
  if (folded_groups_) folded_groups_->set_groups(groups);
}

void System::register_group(NpuId npu, std::uint32_t key, std::vector<NpuId> members) {
  groups_.register_own(npu, key, std::move(members));
}

std::uint32_t System::plan_for(const CollectiveRequest& request, const Group* group) {
  auto key = std::make_tuple(static_cast<int>(request.kind), request.bytes, request.involved_dims, group);
  auto it = plan_ids_.find(key);
  if (it != plan_ids_.end()) return it->second;
  plans_.push_back(plan_collective(spec_, topology_, request.kind, request.bytes, request.involved_dims,
                                   group != nullptr ? &group->members : nullptr));
  auto id = static_cast<std::uint32_t>(plans_.size() - 1);
  plan_ids_.emplace(key, id);
  return id;
}

System::PhaseQueue System::pick_queue(NpuId npu, const PhasePlan& phase) {
  const std::uint32_t q = queues_per_dim_;
  const std::uint32_t base = phase.dim * q;
  Allocators& a = allocators_[static_cast<std::size_t>(npu) * (queues_per_npu_ / q) + phase.dim];
  switch (phase.pick) {
    case QueuePick::kRoundRobin: {
      std::uint32_t i = a.round_robin;
      a.round_robin = (i + 1) % q;
      // Queues in the second half of a dimension's list turn the ring anticlockwise.
      return {static_cast<std::int32_t>(base + i), !(q > 1 && i >= q / 2)};
    }
    case QueuePick::kFirstHalf: {
      std::uint32_t half = std::max<std::uint32_t>(1, q / 2);
      std::uint32_t i = a.first;
      a.first = (i + 1) % half;
      return {static_cast<std::int32_t>(base + i), true};
    }
    case QueuePick::kSecondHalf: {
      std::uint32_t i = q / 2 + a.last;
      a.last = (a.last + 1) % (q - q / 2);
      return {static_cast<std::int32_t>(base + i), false};
    }
  }
  return {static_cast<std::int32_t>(base), true};
}

void System::start_collective(NpuId npu, const CollectiveRequest& request, std::uint64_t token) {
  const Group* group = nullptr;
  if (request.group != 0) {
    group = groups_.find(npu, request.group);
    if (group == nullptr) {
      fail("NPU {} runs a {} on communicator group {}, which no group file or process-group node "
           "defines",
           npu, collective_name(request.kind), request.group);
    }
    if (!group->contains(npu)) {
      fail("NPU {} runs a {} on communicator group {}, which does not include it", npu, collective_name(request.kind),
           request.group);
    }
    // A group of the whole network runs the full multi-dimensional plan.
    if (group->members.size() == topology_.npu_count()) group = nullptr;
  }
  CollectiveRequest sized = request;
  sized.bytes = sized_bytes(request.sizing, request.bytes, group ? group->members.size() : topology_.npu_count());
  const std::uint32_t plan_id = plan_for(sized, group);
  const std::uint64_t chunks = plans_[plan_id].chunks;
  if (chunks == 0) {
    listener_.on_comm_done(npu, token);
    return;
  }
  const std::uint32_t collective = collectives_.add({npu, token, chunks});

  std::int64_t priority = 0;
  switch (spec_.scheduling_policy) {
    case SchedulingPolicy::kLifo: priority = priority_counter_[npu]++; break;
    case SchedulingPolicy::kFifo: priority = priority_counter_[npu]--; break;
    case SchedulingPolicy::kExplicit: priority = request.priority; break;
  }
  for (std::uint64_t k = 0; k < chunks; ++k) {
    const std::uint32_t id = streams_.acquire();  // a reused stream keeps its buffers
    Stream& s = streams_[id];
    s.npu = npu;
    s.collective = collective;
    s.chunk = static_cast<std::uint32_t>(k);
    s.plan = plan_id;
    if (group == nullptr) {
      s.tag = tags::world_stream(next_stream_tag_[npu]++);
    } else {
      s.tag = tags::group_stream(group->id, group_stream_tag_[npu_group_key(npu, group->id)]++);
    }
    s.group = group;
    s.endpoint_ns = group == nullptr ? spec_.endpoint_delay_ns : kGroupEndpointDelayNs;
    s.priority = priority;
    s.next_phase = 0;
    s.queue = -1;
    s.queues.clear();
    for (const PhasePlan& phase : plans_[plan_id].phases) {
      PhaseQueue pq = pick_queue(npu, phase);
      if (algorithm_info(phase.algorithm).alternating_trees) {
        // The reference asks the collective kind's logical topology for this dimension's tree
        // once per phase it creates, and the topology alternates its two trees.
        const std::size_t dims = queues_per_npu_ / queues_per_dim_;
        const std::size_t key =
            (static_cast<std::size_t>(npu) * kCollectiveKinds + static_cast<std::size_t>(request.kind)) * dims +
            phase.dim;
        pq.min_root_tree = tree_phases_[key]++ % 2 == 1;
      }
      s.queues.push_back(pq);
    }
    enter_next_phase(id);
  }
}

// Mirrors the reference's proceed_to_next_vnet_baseline, including the order of its steps: the
// collective is reported done before the finished stream leaves its queue, so a collective the
// workload starts in response queues behind it and starts in the same tick.
void System::enter_next_phase(std::uint32_t id) {
  const NpuId npu = streams_[id].npu;
  const std::int32_t previous = streams_[id].queue;
  const ChunkPlan& plan = plans_[streams_[id].plan];
  const bool done = streams_[id].next_phase == plan.phases.size();
  if (observer_ != nullptr && previous >= 0) {
    const Stream& s = streams_[id];
    observer_->on_phase_end(npu, collectives_[s.collective].token, s.chunk, s.next_phase - 1, timers_.now());
  }
  if (done) collective_stream_done(streams_[id].collective);

  if (done) {
    streams_.release(id);
    if (previous >= 0) {
      --running_[queue_index(npu, previous)];
      start_waiting_streams(npu, previous);
    }
    return;
  }

  Stream& s = streams_[id];
  const PhasePlan& phase = plans_[s.plan].phases[s.next_phase];
  const PhaseQueue pq = s.queues[s.next_phase];
  ++s.next_phase;
  s.queue = pq.queue;

  configure_phase(s, phase, pq);

  add_waiting(queue_index(npu, s.queue), id);
  const std::int32_t queue = s.queue;
  if (previous >= 0) {
    --running_[queue_index(npu, previous)];
    start_waiting_streams(npu, previous);
  }
  start_waiting_streams(npu, queue);
}

// Sets up the state machine of the stream's new phase on this NPU's place in the phase's ring.
void System::configure_phase(Stream& s, const PhasePlan& phase, const PhaseQueue& pq) {
  RingLayout ring;
  ring.size = phase.ring_size;
  if (phase.members != nullptr) {
    ring.index = s.group->position_of(s.npu);
    ring.members = phase.members;
  } else {
    // Position 0 is the NPU whose coordinate in this dimension is 0 (the reference computes a
    // tree's first NPU from the lower dimensions only, which is the same whenever the token list
    // covers every network dimension).
    ring.index = phase.flat ? s.npu : topology_.coordinate(s.npu, phase.dim);
    ring.stride = phase.stride;
    ring.base = s.npu - ring.index * phase.stride;
  }
  PhaseSetup setup{&phase, ring, pq.clockwise, pq.min_root_tree, nullptr};
  if (phase.algorithm == AlgorithmKind::kCustom) {
    const auto& algorithm = custom_[static_cast<std::size_t>(phase.kind)];
    if (s.npu >= algorithm.size() || algorithm[s.npu] == nullptr) {
      fail("NPU {} runs a custom {} but no algorithm ET was loaded for position {}", s.npu, collective_name(phase.kind),
           s.npu);
    }
    setup.custom_algorithm = algorithm[s.npu].get();
  }
  configure_phase_state(s.algorithm, setup);
}

void System::set_custom_algorithm(CollectiveKind kind, std::vector<std::shared_ptr<const chakra::Graph>> algorithm) {
  // Every send and receive names its peer, checked here where the file and node are known:
  // found only when the step ran, a missing comm_dst read as peer 0 with neither.
  for (std::size_t position = 0; position < algorithm.size(); ++position) {
    if (algorithm[position] == nullptr) continue;
    const chakra::Graph& g = *algorithm[position];
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      const bool send = g.type(i) == chakra::NodeType::kCommSend;
      if (!send && g.type(i) != chakra::NodeType::kCommRecv) continue;
      const chakra::OpAttrs& a = g.attrs(i);
      const char* key = send ? "comm_dst" : "comm_src";
      const std::string what =
          fmt::format("{}: node {} (\"{}\"), a {} of the custom {} for position {}", g.source(), g.id(i), g.name(i),
                      send ? "send" : "receive", collective_name(kind), position);
      if (!a.has(send ? chakra::OpAttrs::kCommDst : chakra::OpAttrs::kCommSrc))
        fail("{}, has no {}; expected the peer's position, 0 to {}", what, key, topology_.npu_count() - 1);
      const std::int64_t peer = send ? a.comm_dst : a.comm_src;
      if (peer < 0 || peer >= static_cast<std::int64_t>(topology_.npu_count()) ||
          static_cast<std::size_t>(peer) == position) {
        fail("{}, has {} {}; expected another position, 0 to {}", what, key, peer, topology_.npu_count() - 1);
      }
    }
  }
  custom_[static_cast<std::size_t>(kind)] = std::move(algorithm);
}

void System::custom_node_done(std::uint32_t stream, std::uint32_t node) {
  Io io{*this, stream};
  std::get<CustomState>(streams_[stream].algorithm).on_node_done(io, node);
}

namespace {
// Heap order: `a` starts after `b` when its priority is lower, or equal and it arrived later.
bool starts_after(const auto& a, const auto& b) {
  return a.priority != b.priority ? a.priority < b.priority : a.arrival > b.arrival;
}
}  // namespace

void System::add_waiting(std::size_t queue_index, std::uint32_t id) {
  auto& heap = waiting_[queue_index];
  heap.push_back({streams_[id].priority, arrivals_++, id});
  std::push_heap(heap.begin(), heap.end(),
                 [](const WaitingStream& a, const WaitingStream& b) { return starts_after(a, b); });
}

void System::start_waiting_streams(NpuId npu, std::int32_t queue) {
  const std::size_t qi = queue_index(npu, queue);
  auto& heap = waiting_[qi];
  while (running_[qi] < queue_threshold_ && !heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(),
                  [](const WaitingStream& a, const WaitingStream& b) { return starts_after(a, b); });
    const std::uint32_t id = heap.back().stream;
    heap.pop_back();
    ++running_[qi];
    init_stream(id);
  }
}

void System::init_stream(std::uint32_t id) {
  if (observer_ != nullptr) {
    const Stream& s = streams_[id];
    observer_->on_phase_start(s.npu, collectives_[s.collective].token, s.chunk, s.next_phase - 1,
                              plans_[s.plan].phases[s.next_phase - 1], timers_.now());
  }
  Io io{*this, id};
  std::visit([&io](auto& algorithm) { algorithm.start(io); }, streams_[id].algorithm);
}

void System::step_ready(std::uint32_t id) {
  Io io{*this, id};
  std::visit([&io](auto& algorithm) { algorithm.on_step_ready(io); }, streams_[id].algorithm);
}

void System::stream_received(std::uint32_t id) {
  Io io{*this, id};
  std::visit([&io](auto& algorithm) { algorithm.on_receive(io); }, streams_[id].algorithm);
}

void System::collective_stream_done(std::uint32_t collective) {
  Collective& c = collectives_[collective];
  if (--c.streams_left > 0) return;
  const NpuId npu = c.npu;
  const std::uint64_t token = c.token;
  collectives_.release(collective);
  listener_.on_comm_done(npu, token);
}

Tick System::reduction_ns(std::uint64_t bytes) const {
  // One write and two reads of the step's data at local memory bandwidth (GB/s = bytes/ns),
  // each truncated on its own. Without a bandwidth the reference charges nothing on x86.
  if (spec_.local_mem_bw_gb_per_s <= 0) return 0;
  auto describe = [&] {
    return fmt::format("reducing {} bytes at local-mem-bw {} GB/s", bytes, spec_.local_mem_bw_gb_per_s);
  };
  const Tick pass_ns = ticks_from_ns(static_cast<double>(bytes) / spec_.local_mem_bw_gb_per_s, describe);
  ticks_from_ns(3 * static_cast<double>(pass_ns), describe);  // the three passes together are in range too
  return 3 * pass_ns;
}

void System::handle_timer(const TimerEntry& entry) {
  switch (entry.kind) {
    case kEndpointDone: {
      const StepTimerArg step = StepTimerArg::unpack(entry.arg);
      if (step.reduce) {
        timers_.schedule(entry.npu, reduction_ns(streams_[step.stream].reduce_bytes), TimerOwner::kSystem, kReduceDone,
                         step.stream);
      } else {
        step_ready(step.stream);
      }
      break;
    }
    case kReduceDone: step_ready(static_cast<std::uint32_t>(entry.arg)); break;
    case kCustomComputeDone: {
      const CustomNodeRef ref = CustomNodeRef::unpack(entry.arg);
      custom_node_done(ref.stream, ref.node);
      break;
    }
    default: fail("internal error: unknown system timer kind {}", entry.kind);
  }
}

void System::send(NpuId npu, NpuId dst, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) {
  const std::uint32_t op = ops_.add({npu, token});
  transport_.send(npu, dst, bytes, tags::p2p(tag), Completion{op, kOpDone});
}

void System::send_via(NpuId npu, NpuId relay, NpuId dst, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) {
  const std::uint32_t op = ops_.add({npu, token});
  transport_.send_via(npu, relay, dst, bytes, tags::p2p(tag), Completion{op, kOpDone});
}

void System::receive(NpuId npu, NpuId src, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) {
  const std::uint32_t op = ops_.add({npu, token});
  transport_.receive(npu, src, bytes, tags::p2p(tag), Completion{op, kOpDone});
}

void System::on_arrival(std::uint64_t message) { transport_.on_arrival(message); }

void System::complete(const Completion& c) {
  switch (c.kind) {
    case kStreamReceive: stream_received(static_cast<std::uint32_t>(c.arg)); return;
    case kCustomNodeDone: {
      const CustomNodeRef ref = CustomNodeRef::unpack(ops_.take(static_cast<std::uint32_t>(c.arg)).token);
      custom_node_done(ref.stream, ref.node);
      return;
    }
    case kOpDone: {
      const PendingOp op = ops_.take(static_cast<std::uint32_t>(c.arg));
      listener_.on_comm_done(op.npu, op.token);
      return;
    }
    default: fail("internal error: unknown system completion kind {}", c.kind);
  }
}

}  // namespace chakrasim::system
