#include "system/nccl/nccl_collectives.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/sim_time.h"

namespace chakrasim::system::nccl {
namespace {

constexpr std::uint8_t kCallDone = 0;  // cost: a call's time is over
constexpr std::uint8_t kRunStart = 1;  // traffic: a member's wait for NCCL's latency is over

// NCCL's collective and nccl-tests' size for a request of the system layer (comm.h): broadcast
// and reduce come as sized all-gathers and reduce-scatters; an all-gather's bytes are a member's
// shard, nccl-tests' size its output.
std::pair<Collective, std::uint64_t> nccl_call(const CollectiveRequest& r, std::size_t members) {
  switch (r.sizing) {
    case RequestSizing::kBroadcast: return {Collective::kBroadcast, r.bytes};
    case RequestSizing::kReduce: return {Collective::kReduce, r.bytes};
    case RequestSizing::kAsIs: break;
  }
  switch (r.kind) {
    case CollectiveKind::kAllReduce: return {Collective::kAllReduce, r.bytes};
    case CollectiveKind::kAllGather: return {Collective::kAllGather, r.bytes * members};
    case CollectiveKind::kReduceScatter: return {Collective::kReduceScatter, r.bytes};
    case CollectiveKind::kAllToAll: return {Collective::kAllToAll, r.bytes};
  }
  return {Collective::kAllReduce, r.bytes};
}

// Tags of this model's messages: bit 60 above any trace's, then the call, the channel, the step.
constexpr std::uint32_t kStepBits = 21, kChannelBits = 8;
// Pieces in flight per channel: NCCL pipelines a step's data in 8 slices (NCCL_STEPS), each
// moving on as soon as it arrives, so that the hops of a path overlap.
constexpr std::uint32_t kSlices = 8;
constexpr std::uint32_t kRingChannels = 32;  // x kSlices: the 256 streams the tag's channel field holds
// Trees: a channel per NIC (up to 16), two trees each, 4 chunks in flight per tree and direction:
// at most 256 streams, the tag's channel field.
constexpr std::uint32_t kTreeChannels = 16, kTreeWindows = 4;
std::int64_t traffic_tag(std::int64_t serial, std::uint32_t channel, std::uint32_t step) {
  return (std::int64_t{1} << 60) | (serial << (kStepBits + kChannelBits)) |
         (static_cast<std::int64_t>(channel) << kStepBits) | step;
}

}  // namespace

const char* choice_label(const TuningModel::Choice& choice) {
  static const auto labels = [] {
    std::array<std::array<std::string, kProtocols>, kAlgorithms + 1> out;
    for (std::size_t a = 0; a <= kAlgorithms; ++a) {
      for (std::size_t p = 0; p < kProtocols; ++p) {
        out[a][p] = fmt::format("NCCL {}/{}", a == kAlgorithms ? "P2P" : algorithm_name(static_cast<Algorithm>(a)),
                                protocol_name(static_cast<Protocol>(p)));
      }
    }
    return out;
  }();
  const std::size_t a = choice.point_to_point ? kAlgorithms : static_cast<std::size_t>(choice.algorithm);
  return labels[a][static_cast<std::size_t>(choice.protocol)].c_str();
}

RunMachine run_machine(const NcclSpec& spec, NpuId npus, std::uint32_t first_dimension) {
  RunMachine out;
  auto named = [](const char* key, auto&& body) {
    try {
      return body();
    } catch (const Error& e) {
      throw Error(fmt::format("system key \"{}\": {}", key, e.what()));
    }
  };
  out.machine.gpu = named("nccl-gpu", [&] { return &gpu_preset(spec.gpu); });
  const std::uint32_t domain = out.machine.gpu->domain;
  std::uint32_t g = spec.gpus_per_node;
  if (g == 0) g = std::clamp<std::uint32_t>(first_dimension, 1, domain);
  if (g > domain) {
    throw Error(fmt::format("system key \"nccl-gpus-per-node\": {} GPUs, but a {} scale-up domain holds {}; expected "
                            "at most {}",
                            g, out.machine.gpu->name, domain, domain));
  }
  if (npus % g != 0) {
    throw Error(fmt::format("system key \"nccl-gpus-per-node\": {} NPUs do not fill nodes of {} GPUs; expected a "
                            "divisor of {}",
                            npus, g, npus));
  }
  out.machine.gpus_per_node = g;
  out.machine.nodes = npus / g;
  out.machine.nic =
      named("nccl-nic", [&] { return &nic_preset(spec.nic.empty() ? out.machine.gpu->default_nic : spec.nic); });
  out.machine.nics_per_node = spec.nics_per_node == 0 ? g : spec.nics_per_node;
  out.machine.collnet = spec.collnet;
  out.enabled = Enabled::all();
  if (!spec.algo.empty()) apply_enable_list(out.enabled, spec.algo, true, "system key \"nccl-algo\"");
  if (!spec.proto.empty()) apply_enable_list(out.enabled, spec.proto, false, "system key \"nccl-proto\"");
  if (!spec.nvls) {
    for (auto& row : out.enabled.algorithms) {
      row[static_cast<std::size_t>(Algorithm::kNvls)] = row[static_cast<std::size_t>(Algorithm::kNvlsTree)] = false;
    }
  }
  return out;
}

NcclCollectives::NcclCollectives(const RunMachine& machine, NpuId npus, Comm& system, NpuTimers& timers,
                                 CommListener& listener, bool symmetric, bool traffic)
    : machine_(machine),
      system_(system),
      timers_(timers),
      listener_(listener),
      symmetric_(symmetric),
      traffic_(traffic) {
  everyone_.resize(npus);
  for (NpuId r = 0; r < npus; ++r) everyone_[r] = r;
}

void NcclCollectives::register_group(NpuId npu, std::uint32_t key, std::vector<NpuId> members) {
  if (!members.empty()) groups_[key] = members;
  system_.register_group(npu, key, std::move(members));
}

const std::vector<NpuId>& NcclCollectives::members_of(NpuId npu, std::uint32_t group) {
  if (group == 0) return everyone_;
  const auto it = groups_.find(group);
  if (it == groups_.end()) {
    fail("NPU {} runs a collective on communicator group {}, which no group file or process-group node defines", npu,
         group);
  }
  if (std::find(it->second.begin(), it->second.end(), npu) == it->second.end()) {
    fail("NPU {} runs a collective on communicator group {}, which does not include it", npu, group);
  }
  return it->second;
}

const AchievedModel& NcclCollectives::model_for(const std::vector<NpuId>& members) {
  // The nodes the members span, and the most of them one node holds.
  const std::uint32_t g = machine_.machine.gpus_per_node;
  std::map<NpuId, std::uint32_t> per_node;
  for (NpuId r : members) ++per_node[r / g];
  std::uint32_t most = 0;
  for (const auto& [node, count] : per_node) most = std::max(most, count);
  const auto nodes = static_cast<std::uint32_t>(per_node.size());
  auto& model = models_[{most, nodes}];
  if (!model) {
    Machine m = machine_.machine;
    m.gpus_per_node = most;
    m.nodes = nodes;
    m.nics_per_node = std::min(machine_.machine.nics_per_node, most);  // each member its own NIC
    Enabled enabled = machine_.enabled;
    if (traffic_) {  // the algorithms drawn as traffic: Ring, and NVLS inside one node
      for (auto& row : enabled.algorithms) {
        for (std::size_t a = 0; a < kAlgorithms; ++a) {
          const bool drawn = a == static_cast<std::size_t>(Algorithm::kRing) ||
                             a == static_cast<std::size_t>(Algorithm::kTree) ||
                             (a == static_cast<std::size_t>(Algorithm::kNvls) && nodes == 1);
          row[a] = row[a] && drawn;
        }
      }
    }
    model = std::make_unique<AchievedModel>(m, enabled);
  }
  return *model;
}

void NcclCollectives::start_collective(NpuId npu, const CollectiveRequest& request, std::uint64_t token) {
  const std::vector<NpuId>& members = members_of(npu, request.group);
  if (members.size() < 2 || request.bytes == 0) {
    listener_.on_comm_done(npu, token);
    return;
  }
  const std::uint64_t k = started_[(std::uint64_t{request.group} << 32) | npu]++;
  if (traffic_) {
    start_traffic(npu, request, token, members, k);
    return;
  }
  auto [it, fresh] = open_.try_emplace({request.group, k}, 0);
  if (fresh) {
    it->second = calls_.acquire();
    Call& call = calls_[it->second];
    call.members.clear();
    // In a symmetric run NPU 0 stands for every member, all starting at the same time.
    call.expected = symmetric_ ? 1 : members.size();
  }
  const std::uint32_t id = it->second;
  Call& call = calls_[id];
  call.members.push_back({npu, token});
  if (call.members.size() < call.expected) return;
  open_.erase(it);
  // The last member is here: the call runs now, on every member at once.
  // Named values, not a structured binding: the lambda below captures them.
  const std::pair<Collective, std::uint64_t> call_of = nccl_call(request, members.size());
  const Collective collective = call_of.first;
  const std::uint64_t bytes = call_of.second;
  const AchievedModel& model = model_for(members);
  const Timing t = model.time(collective, bytes);
  const Tick ns = ticks_from_ns(t.us * 1000, [&] {
    return fmt::format("an NCCL {} of {} bytes", collective_name(collective), bytes);
  });
  call.plan = PhasePlan{};
  call.plan.kind = request.kind;
  call.plan.ring_size = static_cast<std::uint32_t>(members.size());
  call.plan.flat = true;
  call.plan.bytes = request.bytes;
  call.plan.members = request.group == 0 ? nullptr : &members;
  call.plan.label = choice_label(t.choice);
  if (observer_ != nullptr) {
    for (const Member& m : call.members) observer_->on_phase_start(m.npu, m.token, 0, 0, call.plan, timers_.now());
  }
  timers_.schedule(npu, ns, TimerOwner::kCollectiveModel, kCallDone, id);
}

void NcclCollectives::handle_timer(const TimerEntry& entry) {
  if (entry.kind == kRunStart) {
    const auto run = static_cast<std::uint32_t>(entry.arg);
    const auto streams = static_cast<std::uint32_t>(runs_[run].step.size());
    for (std::uint32_t s = 0; s < streams; ++s) run_step(run, s);
    return;
  }
  if (entry.kind != kCallDone) fail("internal error: unknown NCCL-model timer kind {}", entry.kind);
  const Call call = calls_.take(static_cast<std::uint32_t>(entry.arg));
  for (const Member& m : call.members) {
    if (observer_ != nullptr) observer_->on_phase_end(m.npu, m.token, 0, 0, timers_.now());
    listener_.on_comm_done(m.npu, m.token);
  }
}

namespace {

// The members' indices node by node (NPU r in node r / gpus_per_node), in their order.
std::vector<std::vector<std::uint32_t>> members_by_node(const std::vector<NpuId>& members,
                                                        std::uint32_t gpus_per_node) {
  std::vector<std::vector<std::uint32_t>> by_node;
  std::map<NpuId, std::size_t> node_index;
  for (std::uint32_t i = 0; i < members.size(); ++i) {
    const auto [at, added] = node_index.try_emplace(members[i] / gpus_per_node, by_node.size());
    if (added) by_node.emplace_back();
    by_node[at->second].push_back(i);
  }
  return by_node;
}

// A ring per stream through the members node by node: channel c (streams c x kSlices on)
// starts each node at its c-th member.
void build_rings(std::vector<std::vector<NpuId>>& rings, std::vector<std::vector<std::uint32_t>>& place,
                 const std::vector<NpuId>& members, std::uint32_t streams, std::uint32_t gpus_per_node) {
  const std::vector<std::vector<std::uint32_t>> by_node = members_by_node(members, gpus_per_node);
  rings.assign(streams, {});
  place.assign(streams, std::vector<std::uint32_t>(members.size()));
  for (std::uint32_t s = 0; s < streams; ++s) {
    const std::uint32_t c = s / kSlices;
    for (const std::vector<std::uint32_t>& node : by_node) {
      for (std::size_t j = 0; j < node.size(); ++j) {
        const std::uint32_t i = node[(j + c) % node.size()];
        place[s][i] = static_cast<std::uint32_t>(rings[s].size());
        rings[s].push_back(members[i]);
      }
    }
  }
}

// NCCL's two trees over `members`: a chain through each node's members (in their order), its
// head joined to other nodes' heads by a binary tree; the second tree reads the nodes backwards,
// so that the nodes inner in one are leaves in the other.
void build_trees(std::vector<std::vector<std::int32_t>>& parent,
                 std::vector<std::vector<std::vector<std::uint32_t>>>& children, const std::vector<NpuId>& members,
                 std::uint32_t gpus_per_node, std::uint32_t channels) {
  const std::vector<std::vector<std::uint32_t>> by_node = members_by_node(members, gpus_per_node);
  const std::size_t nodes = by_node.size();
  parent.assign(2 * channels, std::vector<std::int32_t>(members.size(), -1));
  children.assign(2 * channels, std::vector<std::vector<std::uint32_t>>(members.size()));
  // Channel c's chains start at each node's c-th member, whose NIC then carries the channel.
  for (std::size_t k = 0; k < 2 * channels; ++k) {
    const std::size_t c = k / 2, t = k % 2;
    auto link = [&parent, &children, k](std::uint32_t up, std::uint32_t down) {
      parent[k][down] = static_cast<std::int32_t>(up);
      children[k][up].push_back(down);
    };
    auto member = [&by_node, c](std::size_t node, std::size_t j) {
      const std::vector<std::uint32_t>& chain = by_node[node];
      return chain[(j + c) % chain.size()];
    };
    for (std::size_t node = 0; node < nodes; ++node) {
      for (std::size_t j = 1; j < by_node[node].size(); ++j) link(member(node, j - 1), member(node, j));
    }
    // Heap order over the nodes: position p's parent is (p - 1) / 2.
    auto node_at = [nodes, t](std::size_t p) { return t == 0 ? p : nodes - 1 - p; };
    for (std::size_t p = 1; p < nodes; ++p) link(member(node_at((p - 1) / 2), 0), member(node_at(p), 0));
  }
}

}  // namespace

void NcclCollectives::start_traffic(NpuId npu, const CollectiveRequest& request, std::uint64_t token,
                                    const std::vector<NpuId>& members, std::uint64_t k) {
  auto [it, fresh] = open_.try_emplace({request.group, k}, 0);
  if (fresh) {  // the first member here: NCCL's choice for the call, and what its members do
    const auto [collective, bytes] = nccl_call(request, members.size());
    const AchievedModel& model = model_for(members);
    it->second = traffics_.acquire();
    Traffic& t = traffics_[it->second];
    t = Traffic{};
    t.collective = collective;
    t.choice = model.tuning().choose(collective, bytes);
    t.members = members;
    const auto n = static_cast<double>(members.size());
    const Efficiencies& e = model.efficiencies();
    const Machine& m = model.tuning().machine();
    t.net_share = m.nodes > 1 ? m.nic->efficiency : 1.0;
    t.node_share = e.ring;
    const auto b = static_cast<double>(bytes);
    if (t.choice.point_to_point) {  // all-to-all: a piece of the buffer to every other member
      t.steps = 1;
      t.piece_bytes = b / n;
      const double wire = t.choice.protocol == Protocol::kLL      ? 2.0
                          : t.choice.protocol == Protocol::kLL128 ? 128.0 / 120
                                                                  : 1.0;
      t.node_share /= wire;
      t.net_share /= wire;
    } else {
      const Algorithm a = t.choice.algorithm;
      // The protocol's own cost against Simple, as achieved.h has it.
      const double protocol = model.algorithm_gb_per_s(collective, a, t.choice.protocol) /
                              model.algorithm_gb_per_s(collective, a, Protocol::kSimple);
      t.node_share *= protocol;
      t.net_share *= protocol;
      if (a == Algorithm::kTree) {
        // Half the buffer a tree, in chunks of NCCL's 512 KiB (fewer for small calls); kTreeWindows
        // windows per tree keep as many chunks in flight, each going up and coming down on
        // streams of its own so that the two directions overlap.
        constexpr double kChunkBytes = 512 * 1024;
        const std::uint32_t channels = m.nodes > 1 ? std::min<std::uint32_t>(m.nics_per_node, kTreeChannels) : 1;
        const double per_window = std::max(1.0, std::ceil(b / 2 / channels / kChunkBytes / kTreeWindows));
        t.steps = static_cast<std::uint32_t>(2 * per_window);
        t.piece_bytes = b / 2 / channels / (per_window * kTreeWindows);
        build_trees(t.tree_parent, t.tree_children, members, machine_.machine.gpus_per_node, channels);
      } else if (a == Algorithm::kNvls) {  // each port carries the buffer (and a share, all-reduce)
        t.steps = 1;
        t.node_share = e.nvls * protocol;
        t.piece_bytes = (collective == Collective::kAllReduce ? b * (1 + 1 / n) : b) / (n - 1);
      } else {  // Ring
        const bool all_reduce = collective == Collective::kAllReduce;
        const bool rooted = collective == Collective::kBroadcast || collective == Collective::kReduce;
        t.steps = static_cast<std::uint32_t>(all_reduce ? 2 * (members.size() - 1) : members.size() - 1);
        const std::uint32_t channels = m.nodes > 1 ? std::min<std::uint32_t>(m.nics_per_node, kRingChannels) : 1;
        const std::uint32_t streams = channels * kSlices;  // each slice of a channel its own ring of steps
        t.piece_bytes = (rooted ? b / (n - 1) : b / n) / streams;
        build_rings(t.rings, t.place, members, streams, machine_.machine.gpus_per_node);
      }
    }
    if (t.steps >= (1u << kStepBits)) {
      fail("an NCCL {} on {} NPUs: {} ring steps, more than this model tags apart ({})", collective_name(collective),
           members.size(), t.steps, 1u << kStepBits);
    }
    t.serial = next_serial_++;
    t.members_left = members.size();
    t.plan.kind = request.kind;
    t.plan.ring_size = static_cast<std::uint32_t>(members.size());
    t.plan.flat = true;
    t.plan.bytes = request.bytes;
    t.plan.label = choice_label(t.choice);
    // Every member waits NCCL's latency for the call, then sends. It holds every step's cost
    // (synchronisation, a chunk's fence), of which the network's latency for a message is a part
    // that its messages then pay again: 7 us more on a 1 MiB all-reduce of 8 GPUs (a quarter),
    // nothing that shows on large calls; the conservative direction.
    const double latency_us = t.choice.point_to_point
                                  ? model.tuning().p2p_latency_us(t.choice.protocol)
                                  : model.tuning().latency_us(collective, t.choice.algorithm, t.choice.protocol);
    t.latency_ns = ticks_from_ns(latency_us * 1000, [&] { return fmt::format("NCCL's latency for {}", t.plan.label); });
  }
  const std::uint32_t traffic = it->second;
  Traffic& t = traffics_[traffic];
  const auto position = std::find(t.members.begin(), t.members.end(), npu) - t.members.begin();
  if (++t.arrived == t.members.size()) open_.erase(it);  // the call's later members are all here
  const std::uint32_t run = runs_.acquire();
  Run& r = runs_[run];
  // Streams: a tree's up and down per window and tree; a ring per channel and slice; else one.
  const std::size_t streams =
      !t.tree_parent.empty() ? t.tree_parent.size() * kTreeWindows * 2 : std::max<std::size_t>(1, t.rings.size());
  r = Run{traffic,
          static_cast<std::uint32_t>(position),
          npu,
          token,
          static_cast<std::uint32_t>(streams),
          std::vector<std::uint32_t>(streams, 0),
          std::vector<std::uint32_t>(streams, 0)};
  if (observer_ != nullptr) observer_->on_phase_start(npu, token, 0, 0, t.plan, timers_.now());
  timers_.schedule(npu, t.latency_ns, TimerOwner::kCollectiveModel, kRunStart, run);
}

std::uint64_t NcclCollectives::message_bytes(const Traffic& t, NpuId from, NpuId to) const {
  const std::uint32_t g = machine_.machine.gpus_per_node;
  const double share = from / g == to / g ? t.node_share : t.net_share;
  return static_cast<std::uint64_t>(std::ceil(t.piece_bytes / share));
}

// Tokens of this model's sends and receives: the run, the ring, and which of the two.
std::uint64_t NcclCollectives::traffic_token(std::uint32_t run, std::uint32_t stream, bool receive) {
  return kTrafficToken | (std::uint64_t{run} << (kChannelBits + 1)) | (std::uint64_t{stream} << 1) | (receive ? 1 : 0);
}

void NcclCollectives::run_step(std::uint32_t id, std::uint32_t stream) {
  if (!traffics_[runs_[id].traffic].tree_parent.empty()) {
    run_tree_step(id, stream);
    return;
  }
  Run& r = runs_[id];
  const Traffic& t = traffics_[r.traffic];
  const std::uint64_t send = traffic_token(id, stream, false), receive = traffic_token(id, stream, true);
  const NpuId npu = r.npu;
  const std::uint32_t index = r.index, step = r.step[stream];
  const std::size_t n = t.members.size();
  const std::int64_t tag = traffic_tag(t.serial, stream, step);
  if (t.rings.empty()) {  // NVLS or all-to-all: one exchange with every other member
    r.pending[stream] = static_cast<std::uint32_t>(2 * (n - 1));
    for (std::size_t j = 0; j < n; ++j) {
      if (j == index) continue;
      const NpuId peer = t.members[j];
      system_.receive(npu, peer, message_bytes(t, peer, npu), tag, receive);
      system_.send(npu, peer, message_bytes(t, npu, peer), tag, send);
    }
    return;
  }
  // A ring's step: a piece to the next member, one from the previous.
  r.pending[stream] = 2;
  const std::vector<NpuId>& ring = t.rings[stream];
  const std::uint32_t at = t.place[stream][index];
  const NpuId next = ring[(at + 1) % n], prev = ring[(at + n - 1) % n];
  system_.receive(npu, prev, message_bytes(t, prev, npu), tag, receive);
  system_.send(npu, next, message_bytes(t, npu, next), tag, send);
}

void NcclCollectives::run_tree_step(std::uint32_t id, std::uint32_t stream) {
  // Stream = (tree x kTreeWindows + window) x 2 + direction, a tree for each channel's two. Up:
  // each chunk from the children, then
  // to the parent; down: from the parent, then to the children. The root has no parent: its up
  // stream sends each chunk back down to its children, and its down stream has nothing to do.
  Run& r = runs_[id];
  const Traffic& t = traffics_[r.traffic];
  const std::uint32_t lane = stream / 2, tree = lane / kTreeWindows, step = r.step[stream];
  const bool up = stream % 2 == 0, second = step % 2 == 1;
  const std::int32_t parent = t.tree_parent[tree][r.index];
  const std::vector<std::uint32_t>& children = t.tree_children[tree][r.index];
  const NpuId npu = r.npu;
  const std::uint64_t send = traffic_token(id, stream, false), receive = traffic_token(id, stream, true);
  // Both ends tag a chunk by its lane, its number and its direction.
  const std::uint32_t chunk = step / 2;
  const std::int64_t up_tag = traffic_tag(t.serial, lane, 2 * chunk),
                     down_tag = traffic_tag(t.serial, lane, 2 * chunk + 1);
  std::vector<std::pair<NpuId, bool>> moves;  // (peer, is a send)
  if (up && !second) {
    for (std::uint32_t c : children) moves.emplace_back(t.members[c], false);
  } else if (up && second) {
    if (parent >= 0) {
      moves.emplace_back(t.members[static_cast<std::uint32_t>(parent)], true);
    } else {
      for (std::uint32_t c : children) moves.emplace_back(t.members[c], true);  // the root turns it round
    }
  } else if (parent >= 0 && !second) {
    moves.emplace_back(t.members[static_cast<std::uint32_t>(parent)], false);
  } else if (parent >= 0) {
    for (std::uint32_t c : children) moves.emplace_back(t.members[c], true);
  }
  r.pending[stream] = static_cast<std::uint32_t>(moves.size());
  if (moves.empty()) {
    advance(id, stream);
    return;
  }
  // Toward the root a chunk is tagged up; away from it (the root's turn included), down.
  const std::int64_t tag = up && (!second || parent >= 0) ? up_tag : down_tag;
  for (const auto& [peer, is_send] : moves) {
    if (is_send) {
      system_.send(npu, peer, message_bytes(t, npu, peer), tag, send);
    } else {
      system_.receive(npu, peer, message_bytes(t, peer, npu), tag, receive);
    }
  }
}

void NcclCollectives::on_traffic_done(NpuId, std::uint64_t token) {
  const auto id = static_cast<std::uint32_t>((token & ~kTrafficToken) >> (kChannelBits + 1));
  const auto stream = static_cast<std::uint32_t>((token >> 1) & ((1u << kChannelBits) - 1));
  if (--runs_[id].pending[stream] == 0) advance(id, stream);
}

void NcclCollectives::advance(std::uint32_t id, std::uint32_t stream) {
  Run& r = runs_[id];
  if (++r.step[stream] < traffics_[r.traffic].steps) {
    run_step(id, stream);
  } else if (--r.streams_left == 0) {
    finish_run(id);
  }
}

void NcclCollectives::finish_run(std::uint32_t id) {
  const Run done = runs_.take(id);
  Traffic& t = traffics_[done.traffic];
  if (--t.members_left == 0) traffics_.take(done.traffic);
  if (observer_ != nullptr) observer_->on_phase_end(done.npu, done.token, 0, 0, timers_.now());
  listener_.on_comm_done(done.npu, done.token);
}

}  // namespace chakrasim::system::nccl
