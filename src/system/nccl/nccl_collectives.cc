#include "system/nccl/nccl_collectives.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/sim_time.h"

namespace chakrasim::system::nccl {
namespace {

constexpr std::uint8_t kCallDone = 0;

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
                                 CommListener& listener, bool symmetric)
    : machine_(machine), system_(system), timers_(timers), listener_(listener), symmetric_(symmetric) {
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
    model = std::make_unique<AchievedModel>(m, machine_.enabled);
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
  if (entry.kind != kCallDone) fail("internal error: unknown NCCL-model timer kind {}", entry.kind);
  const Call call = calls_.take(static_cast<std::uint32_t>(entry.arg));
  for (const Member& m : call.members) {
    if (observer_ != nullptr) observer_->on_phase_end(m.npu, m.token, 0, 0, timers_.now());
    listener_.on_comm_done(m.npu, m.token);
  }
}

}  // namespace chakrasim::system::nccl
