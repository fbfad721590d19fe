// The NCCL model over a whole run (`--collectives nccl`, system JSON "collectives": "nccl"):
// every collective of the traces takes the time of NCCL's choice of algorithm and protocol for
// its size and communicator (tuning.h, timed by achieved.h), counted from the moment its last
// member starts it, as an NCCL kernel waits for its peers. Sends, receives and groups go to the
// system layer underneath, whose messages cross the network as ever.
//
// The cost alone, without traffic: the fast path the analytical backends take. A collective's
// bytes do not cross the network, so they meet no congestion and no other job's traffic there.
//
// A communicator is read as NCCL reads its ranks: NPU r sits in node r / G (G GPUs a node);
// the members of a group in each node and the nodes they span make the machine NCCL tunes for
// (the most members any node holds, and each member's own NIC, up to the node's NICs).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/id_pool.h"
#include "core/npu_timers.h"
#include "system/collective_plan.h"
#include "system/comm.h"
#include "system/comm_groups.h"
#include "system/nccl/achieved.h"
#include "system/system_spec.h"

namespace chakrasim::system::nccl {

// The machine and choices of `spec` for `npus` NPUs whose network's first dimension holds
// `first_dimension` of them; throws Error naming the system file's keys for what does not fit.
struct RunMachine {
  Machine machine;  // one node's worth; nodes and GPUs are set per communicator
  Enabled enabled;
};
RunMachine run_machine(const NcclSpec& spec, NpuId npus, std::uint32_t first_dimension);

// "NCCL Ring/LL", "NCCL P2P/Simple": static text naming a choice.
const char* choice_label(const TuningModel::Choice& choice);

class NcclCollectives final : public Comm {
 public:
  NcclCollectives(const RunMachine& machine, NpuId npus, Comm& system, NpuTimers& timers, CommListener& listener,
                  bool symmetric);

  void observe(CollectiveObserver* observer) { observer_ = observer; }
  void set_groups(const CommGroups& groups) { groups_ = groups; }

  void start_collective(NpuId npu, const CollectiveRequest& request, std::uint64_t token) override;
  void send(NpuId npu, NpuId dst, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) override {
    system_.send(npu, dst, bytes, tag, token);
  }
  void receive(NpuId npu, NpuId src, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) override {
    system_.receive(npu, src, bytes, tag, token);
  }
  void register_group(NpuId npu, std::uint32_t key, std::vector<NpuId> members) override;

  // A timer this model scheduled has expired: its collective is done on every member.
  void handle_timer(const TimerEntry& entry);

 private:
  struct Member {
    NpuId npu;
    std::uint64_t token;
  };
  struct Call {  // one collective of one communicator, gathering its members
    std::size_t expected = 0;
    std::vector<Member> members;
    PhasePlan plan;  // what reports see: the kind, the members, the label naming NCCL's choice
  };
  const AchievedModel& model_for(const std::vector<NpuId>& members);
  const std::vector<NpuId>& members_of(NpuId npu, std::uint32_t group);

  RunMachine machine_;
  Comm& system_;
  NpuTimers& timers_;
  CommListener& listener_;
  CollectiveObserver* observer_ = nullptr;
  bool symmetric_;
  CommGroups groups_;
  std::vector<NpuId> everyone_;
  // Per (group, NPU): the collectives it has started on that group; its k-th meets the others' k-th.
  std::unordered_map<std::uint64_t, std::uint64_t> started_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint32_t> open_;  // (group, k) -> call
  IdPool<Call> calls_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::unique_ptr<AchievedModel>> models_;  // by (G, nodes)
};

}  // namespace chakrasim::system::nccl
