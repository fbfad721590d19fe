#include "system/nccl/nccl_collectives.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/sim_time.h"
#include "system/nccl/call_types.h"
#include "system/nccl/msccl.h"

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

// Tags of this model's messages: bit 60 above any trace's, then the call, then the message's
// label in the call (traffic_shape.h).
// Across nodes a channel per NIC: rings up to 32 (x 8 slices: the 256 streams a member keeps),
// trees up to 16 (x 2 trees x 4 windows x 2 directions: 256 too).
constexpr std::uint32_t kRingChannels = 32, kTreeChannels = 16;
std::int64_t traffic_tag(std::int64_t serial, std::uint32_t label) {
  return (std::int64_t{1} << 60) | (serial << kLabelBits) | label;
}
// Tokens of this model's sends and receives carry the stream in 8 bits, its window slot in 8.
constexpr std::uint32_t kStreamBits = 8, kSlotBits = 8;
static_assert(kMaxTrafficStreams == 1u << kStreamBits && kPipelineDepth <= 1u << kSlotBits);

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

Efficiencies efficiencies_of(const NcclSpec& spec) {
  Efficiencies e;
  e.ring = spec.ring_efficiency;
  e.nvls = spec.nvls_efficiency;
  e.nvls_tree = spec.nvls_tree_efficiency.value_or(e.nvls_tree);
  e.nvls_chunk_us = spec.nvls_chunk_us;
  e.tree_message_us = spec.tree_message_us;
  e.ll_channel = spec.ll_channel_efficiency.value_or(e.ll_channel);
  e.ll_proxy_scan_ns = spec.ll_proxy_scan_ns.value_or(e.ll_proxy_scan_ns);
  e.nic = spec.nic_efficiency;
  e.nic_p2p = spec.nic_p2p_efficiency;
  e.p2p_channel_gb_per_s = spec.p2p_channel_gb_per_s.value_or(e.p2p_channel_gb_per_s);
  e.all_to_all = spec.all_to_all_efficiency;
  return e;
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
  if (g < first_dimension && first_dimension <= domain) {
    // The network joins more NPUs on its scale-up switch than the node holds, and a GPU's domain
    // holds them all: NCCL's nodes would cross by NICs what the network carries over NVLink.
    throw Error(fmt::format("system key \"nccl-gpus-per-node\": nodes of {} GPUs, but the network's first dimension "
                            "joins {} (a {} domain holds up to {}); expected {}",
                            g, first_dimension, out.machine.gpu->name, domain, first_dimension));
  }
  if (g > first_dimension) {
    // NCCL's node is its NVLink domain; a network that joins fewer NPUs in its first dimension
    // carries the rest of that node's traffic on its second, and the cost and the traffic disagree.
    throw Error(fmt::format("system key \"nccl-gpus-per-node\": nodes of {} GPUs, but the network's first dimension "
                            "joins {}; expected at most {}",
                            g, first_dimension, first_dimension));
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
  out.machine.pxn = spec.pxn;
  out.machine.platform_latency_us = spec.platform_latency_us;
  out.efficiencies = efficiencies_of(spec);
  out.enabled = Enabled::all();
  if (!spec.algo.empty()) apply_enable_list(out.enabled, spec.algo, true, "system key \"nccl-algo\"");
  if (!spec.proto.empty()) apply_enable_list(out.enabled, spec.proto, false, "system key \"nccl-proto\"");
  if (!spec.nvls) {
    for (auto& row : out.enabled.algorithms) {
      row[static_cast<std::size_t>(Algorithm::kNvls)] = row[static_cast<std::size_t>(Algorithm::kNvlsTree)] = false;
    }
  }
  // One element type and reduction for every collective of the run (a trace does not say).
  if (!spec.datatype.empty()) out.type = *parse_data_type(spec.datatype);
  if (!spec.reduce_op.empty()) out.op = *parse_reduce_op(spec.reduce_op);
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

NpuId NcclCollectives::pxn_relay(NpuId npu, NpuId dst) const {
  const Machine& m = machine_.machine;
  const NpuId g = m.gpus_per_node;
  if (!m.pxn || g < 2 || npu / g == dst / g || npu % g == dst % g) return npu;
  return npu / g * g + dst % g;
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
  // NCCL ranks the ring last for 8-bit floats over more than 8 ranks: the members, not the
  // machine's most x nodes, count.
  const bool ring_last = is_float8(machine_.type) && members.size() > 8;
  auto& model = models_[{most, nodes, ring_last}];
  if (!model) {
    Machine m = machine_.machine;
    m.gpus_per_node = most;
    m.nodes = nodes;
    m.nics_per_node = std::min(machine_.machine.nics_per_node, most);  // each member its own NIC
    Enabled enabled = machine_.enabled;
    if (traffic_) {
      // Drawn as traffic: every algorithm, but the staged forms (NVLS across nodes, NVLS-tree,
      // CollNet) only for all-reduces over nodes holding as many members each.
      bool uniform = true;
      for (const auto& [node, count] : per_node) uniform = uniform && count == most;
      for (std::size_t c = 0; c < kCollectives; ++c) {
        const bool staged_fits = uniform && static_cast<Collective>(c) == Collective::kAllReduce;
        auto& row = enabled.algorithms[c];
        for (const Algorithm a : {Algorithm::kNvlsTree, Algorithm::kCollNetDirect, Algorithm::kCollNetChain}) {
          row[static_cast<std::size_t>(a)] = row[static_cast<std::size_t>(a)] && staged_fits;
        }
        if (nodes > 1) {
          auto& nvls = row[static_cast<std::size_t>(Algorithm::kNvls)];
          nvls = nvls && staged_fits;
        }
      }
    }
    for (std::size_t c = 0; c < kCollectives; ++c) {
      restrict_to_call(enabled, static_cast<Collective>(c), machine_.type, machine_.op, m);
    }
    enabled.ring_last = ring_last;
    // A trace does not say whether a call's output is its input. PyTorch's all-reduce always is
    // (RCCL's MSCCL keeps schedules apart for such calls); an all-gather is when the caller puts
    // its shard inside the output, as FSDP2 and Megatron's distributed optimizer do, which spares
    // the ring the copy of its own shard (achieved.h). The flag is the run's, for every
    // collective: anything else would need the trace to say.
    enabled.in_place = true;
    model = std::make_unique<AchievedModel>(m, enabled, machine_.efficiencies);
  }
  return *model;
}

void NcclCollectives::start_collective(NpuId npu, const CollectiveRequest& request, std::uint64_t token) {
  const std::vector<NpuId>& members = members_of(npu, request.group);
  if (members.size() < 2 || request.bytes == 0) {
    listener_.on_comm_done(npu, token);
    return;
  }
  try {
    check_call(nccl_call(request, members.size()).first, machine_.type, machine_.machine);  // NCCL refuses some
  } catch (const Error& e) {
    throw Error(fmt::format("system key \"nccl-datatype\": {}", e.what()));
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
    const auto streams = static_cast<std::uint32_t>(runs_[run].next.size());
    advancing_ = true;  // the streams' first steps are posted before any is advanced
    for (std::uint32_t s = 0; s < streams; ++s) start_steps(run, s);
    advancing_ = false;
    advance_done_steps();
    return;
  }
  if (entry.kind != kCallDone) fail("internal error: unknown NCCL-model timer kind {}", entry.kind);
  const Call call = calls_.take(static_cast<std::uint32_t>(entry.arg));
  for (const Member& m : call.members) {
    if (observer_ != nullptr) observer_->on_phase_end(m.npu, m.token, 0, 0, timers_.now());
    listener_.on_comm_done(m.npu, m.token);
  }
}

void NcclCollectives::start_traffic(NpuId npu, const CollectiveRequest& request, std::uint64_t token,
                                    const std::vector<NpuId>& members, std::uint64_t k) {
  auto [it, fresh] = open_.try_emplace({request.group, k}, 0);
  if (fresh) {  // the first member here: NCCL's choice for the call, and what its members do
    const auto [collective, bytes] = nccl_call(request, members.size());
    const AchievedModel& model = model_for(members);
    it->second = traffics_.acquire();
    Traffic& t = traffics_[it->second];
    t = Traffic{};
    t.choice = model.tuning().choose(collective, bytes);
    t.members = members;
    const auto n = static_cast<std::uint32_t>(members.size());
    const Machine& m = model.tuning().machine();
    const std::uint32_t g = machine_.machine.gpus_per_node;
    t.net_share = m.nodes > 1 ? model.nic_share() : 1.0;
    t.node_share = model.ring_share();
    const auto b = static_cast<double>(bytes);
    double beyond_latency_us = 0;   // NCCL's own costs beyond its latency, waited out with it
    if (t.choice.point_to_point) {  // all-to-all: a piece of the buffer to every other member
      t.node_share = model.all_to_all_share(bytes);
      if (m.nodes > 1) t.net_share = model.nic_p2p_share();
      // Across nodes of equal membership, PXN relays each piece through the GPU on its
      // destination's rail; else each goes straight.
      const bool uniform = m.gpus_per_node * m.nodes == n;
      if (m.pxn && m.nodes > 1 && m.gpus_per_node > 1 && uniform) {
        t.shape = TrafficShape::relayed_all_to_all(b, members, g);
      } else {
        t.shape = TrafficShape::exchange(b / n, n);
      }
      const double wire = t.choice.protocol == Protocol::kLL      ? 2.0
                          : t.choice.protocol == Protocol::kLL128 ? 128.0 / 120
                                                                  : 1.0;
      t.node_share /= wire;
      t.net_share /= wire;
      // Where NCCL's few channels a peer carry the pieces slower than the links would, the
      // difference is waited out with the latency, as for LL's channels (below); so is the first
      // step.
      beyond_latency_us = std::max(0.0, model.p2p_channels_us(collective, t.choice.protocol, bytes) -
                                            b / (1000 * model.p2p_gb_per_s(collective, t.choice.protocol, bytes))) +
                          model.all_to_all_first_step_us(t.choice.protocol, bytes);
    } else {
      const Algorithm a = t.choice.algorithm;
      // The protocol's own cost against Simple, as achieved.h has it.
      const double chosen_gb_per_s = model.algorithm_gb_per_s(collective, a, t.choice.protocol);
      const double protocol = chosen_gb_per_s / model.algorithm_gb_per_s(collective, a, Protocol::kSimple);
      t.node_share *= protocol;
      t.net_share *= protocol;
      // A small LL call's few channels carry it slower than its links would: the difference is
      // waited out with the latency, so that on idle links the call takes the model's time.
      beyond_latency_us =
          std::max(0.0, model.ll_channels_us(collective, a, t.choice.protocol, bytes) - b / (1000 * chosen_gb_per_s));
      const bool nvls = a == Algorithm::kNvls || a == Algorithm::kNvlsTree;
      if (nvls) {
        // The switch's links at NVLS's share, less each of NCCL's loops' fixed cost at this size;
        // the loops' pipeline fills while the members wait out the latency.
        const NvlsTime pipeline = model.nvls_time(collective, a, bytes);
        t.node_share = model.nvls_link_share(a) * protocol * pipeline.nvlink_share;
        beyond_latency_us = pipeline.fill_us;
      }
      switch (a) {
        case Algorithm::kRing:
          t.shape =
              TrafficShape::ring(collective, b, members, g, m.nodes > 1 ? std::min(m.nics_per_node, kRingChannels) : 1);
          break;
        case Algorithm::kPat: t.shape = TrafficShape::pat(collective, b, n); break;
        case Algorithm::kMsccl:
          // All-pairs: every member sends each other member its share of the buffer, then its
          // reduced share: 2 x bytes / n to each, at the schedule's share of the links.
          t.shape = TrafficShape::exchange(2 * b / n, n);
          t.node_share = msccl_link_share(t.choice.protocol);
          break;
        case Algorithm::kTree:
          t.shape = TrafficShape::tree(b, members, g, m.nodes > 1 ? std::min(m.nics_per_node, kTreeChannels) : 1);
          // The proxies post each network message while the members wait (tree_messages.h).
          beyond_latency_us += model.tree_messages_us(t.choice.protocol, bytes);
          break;
        case Algorithm::kNvls:
          if (m.nodes == 1) {  // each port carries the buffer (and a share, all-reduce), one exchange
            t.shape =
                TrafficShape::exchange((collective == Collective::kAllReduce ? b * (1 + 1.0 / n) : b) / (n - 1), n);
            break;
          }
          [[fallthrough]];  // across nodes (an all-reduce), the network reduces the shares
        case Algorithm::kNvlsTree:
        case Algorithm::kCollNetDirect:
        case Algorithm::kCollNetChain:
          t.shape = TrafficShape::staged(b, members, g, nvls, a == Algorithm::kNvlsTree);
          break;
      }
    }
    if (t.shape.steps() >= (1u << kLabelIndexBits)) {
      fail("an NCCL {} on {} NPUs: {} steps, more than this model tags apart ({})", collective_name(collective),
           members.size(), t.shape.steps(), 1u << kLabelIndexBits);
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
    // 19-20 us across 4 nodes of 8 on 1.5 us links; the conservative direction (docs/nccl.md).
    const double latency_us =
        m.added_latency_us(t.choice.point_to_point, m.p2p_ops(true)) + beyond_latency_us +
        (t.choice.point_to_point ? model.tuning().p2p_latency_us(t.choice.protocol)
                                 : model.latency_us(collective, t.choice.algorithm, t.choice.protocol));
    t.latency_ns = ticks_from_ns(latency_us * 1000, [&] { return fmt::format("NCCL's latency for {}", t.plan.label); });
  }
  const std::uint32_t traffic = it->second;
  Traffic& t = traffics_[traffic];
  const auto position = std::find(t.members.begin(), t.members.end(), npu) - t.members.begin();
  if (++t.arrived == t.members.size()) open_.erase(it);  // the call's later members are all here
  const std::uint32_t run = runs_.acquire();
  Run& r = runs_[run];
  const std::uint32_t streams = t.shape.streams(), window = t.shape.window();
  r = Run{traffic,
          static_cast<std::uint32_t>(position),
          npu,
          token,
          streams,
          window,
          std::vector<std::uint32_t>(streams, 0),
          std::vector<std::uint32_t>(streams, 0),
          std::vector<std::uint32_t>(std::size_t{streams} * window, 0),
          std::vector<std::uint8_t>(std::size_t{streams} * window, 0)};
  if (observer_ != nullptr) observer_->on_phase_start(npu, token, 0, 0, t.plan, timers_.now());
  timers_.schedule(npu, t.latency_ns, TimerOwner::kCollectiveModel, kRunStart, run);
}

std::uint64_t NcclCollectives::message_bytes(const Traffic& t, double bytes, NpuId from, NpuId to) const {
  const std::uint32_t g = machine_.machine.gpus_per_node;
  const double share = from / g == to / g ? t.node_share : t.net_share;
  return static_cast<std::uint64_t>(std::ceil(bytes / share));
}

// Tokens of this model's sends and receives: the run, the stream, the step's window slot, and
// which of the two.
std::uint64_t NcclCollectives::traffic_token(std::uint32_t run, std::uint32_t stream, std::uint32_t slot,
                                             bool receive) {
  return kTrafficToken | (std::uint64_t{run} << (kStreamBits + kSlotBits + 1)) |
         (std::uint64_t{stream} << (kSlotBits + 1)) | (std::uint64_t{slot} << 1) | (receive ? 1 : 0);
}

void NcclCollectives::start_steps(std::uint32_t id, std::uint32_t stream) {
  Run& r = runs_[id];
  const TrafficShape& shape = traffics_[r.traffic].shape;
  const std::int32_t before = shape.before(stream), after = shape.after(stream);
  const std::uint32_t steps = shape.steps();
  for (std::uint32_t& k = r.next[stream]; k < steps && k < r.done[stream] + r.window; ++k) {
    // In a pipeline, step k waits for the stage before to have done it, and for the stage after
    // to be fewer than kPipelineDepth steps behind.
    if (before >= 0 && r.done[static_cast<std::uint32_t>(before)] <= k) return;
    if (after >= 0 && r.done[static_cast<std::uint32_t>(after)] + kPipelineDepth <= k) return;
    run_step(id, stream, k);
  }
}

void NcclCollectives::run_step(std::uint32_t id, std::uint32_t stream, std::uint32_t step) {
  Run& r = runs_[id];
  const Traffic& t = traffics_[r.traffic];
  const std::uint32_t slot = step % r.window;
  moves_.clear();
  t.shape.moves(r.index, stream, step, moves_);
  r.pending[std::size_t{stream} * r.window + slot] = static_cast<std::uint32_t>(moves_.size());
  if (moves_.empty()) {
    step_done(id, stream, slot);
    return;
  }
  const NpuId npu = r.npu;
  const std::uint64_t send = traffic_token(id, stream, slot, false), receive = traffic_token(id, stream, slot, true);
  for (const Move& move : moves_) {
    const NpuId peer = t.members[move.peer];
    const std::int64_t tag = traffic_tag(t.serial, move.label);
    if (move.send) {
      system_.send(npu, peer, message_bytes(t, move.bytes, npu, peer), tag, send);
    } else {
      system_.receive(npu, peer, message_bytes(t, move.bytes, peer, npu), tag, receive);
    }
  }
}

void NcclCollectives::on_traffic_done(NpuId, std::uint64_t token) {
  const auto id = static_cast<std::uint32_t>((token & ~kTrafficToken) >> (kStreamBits + kSlotBits + 1));
  const auto stream = static_cast<std::uint32_t>((token >> (kSlotBits + 1)) & ((1u << kStreamBits) - 1));
  const auto slot = static_cast<std::uint32_t>((token >> 1) & ((1u << kSlotBits) - 1));
  Run& r = runs_[id];
  if (--r.pending[std::size_t{stream} * r.window + slot] == 0) step_done(id, stream, slot);
}

void NcclCollectives::step_done(std::uint32_t id, std::uint32_t stream, std::uint32_t slot) {
  steps_done_.push_back({id, stream, slot});
  advance_done_steps();
}

void NcclCollectives::advance_done_steps() {
  if (advancing_) return;
  advancing_ = true;
  for (std::size_t i = 0; i < steps_done_.size(); ++i) {
    const DoneStep d = steps_done_[i];
    advance(d.run, d.stream, d.slot);
  }
  steps_done_.clear();
  advancing_ = false;
}

void NcclCollectives::advance(std::uint32_t id, std::uint32_t stream, std::uint32_t slot) {
  Run& r = runs_[id];
  const TrafficShape& shape = traffics_[r.traffic].shape;
  const std::uint32_t steps = shape.steps(), done_before = r.done[stream];
  r.finished[std::size_t{stream} * r.window + slot] = 1;
  std::uint32_t& done = r.done[stream];
  while (done < r.next[stream] && r.finished[std::size_t{stream} * r.window + done % r.window] != 0) {
    r.finished[std::size_t{stream} * r.window + done % r.window] = 0;
    ++done;
  }
  if (done == done_before) return;  // a later step ended before an earlier one
  if (done == steps) --r.streams_left;
  start_steps(id, stream);
  // Its neighbours in a pipeline may wait for these steps.
  for (const std::int32_t neighbour : {shape.before(stream), shape.after(stream)}) {
    if (neighbour >= 0) start_steps(id, static_cast<std::uint32_t>(neighbour));
  }
  if (r.streams_left == 0) finish_run(id);
}

void NcclCollectives::finish_run(std::uint32_t id) {
  const Run done = runs_.take(id);
  Traffic& t = traffics_[done.traffic];
  if (--t.members_left == 0) traffics_.take(done.traffic);
  if (observer_ != nullptr) observer_->on_phase_end(done.npu, done.token, 0, 0, timers_.now());
  listener_.on_comm_done(done.npu, done.token);
}

}  // namespace chakrasim::system::nccl
