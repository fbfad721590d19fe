// The NCCL model over a whole run. Sends, receives and groups go to the system layer underneath,
// whose messages cross the network as ever; collectives are NCCL's choice of algorithm and
// protocol for their size and communicator (tuning.h), in one of two ways:
//
//  * `--collectives nccl`: the cost alone. A collective takes the time achieved.h gives the
//    choice, counted from the moment its last member starts it, as an NCCL kernel waits for its
//    peers. Its bytes do not cross the network: the fast path for the analytical backends.
//  * `--collectives nccl-traffic`: the choice runs as its messages through the system layer and
//    the network, so that it meets congestion and other traffic on the fabric backends. Each
//    member waits NCCL's latency for the call, then a ring's steps (send a piece to the next
//    member, receive one from the previous; 2(n-1) steps for an all-reduce, n-1 for the others),
//    NCCL's two trees (chunks up from the children and to the parent, down from the parent and
//    to the children, the two directions on streams of their own), or, for NVLS and all-to-all,
//    one exchange with every other member. Across nodes rings and trees run a channel per NIC,
//    each starting a node's chain at another member. NVLS reduces in the
//    switch, which NPU-to-NPU messages cannot say: it is drawn as the exchange that loads each
//    GPU's ports as NVLS does (the buffer and a share of it each way for an all-reduce), and only
//    inside a node. The choice is NCCL's among Ring, Tree and NVLS (and the p2p path). A message
//    carries its bytes over what NCCL reaches of the links it uses (achieved.h's efficiencies:
//    NVLink's ring or NVLS share, the NIC's across nodes, and the protocol's own ratio), so that
//    on an idle network a call takes what achieved.h says, and loads a busy one as NCCL would.
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
  // The system layer's completions of this model's own sends and receives carry this bit.
  static constexpr std::uint64_t kTrafficToken = std::uint64_t{1} << 63;

  NcclCollectives(const RunMachine& machine, NpuId npus, Comm& system, NpuTimers& timers, CommListener& listener,
                  bool symmetric, bool traffic = false);

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

  // A timer this model scheduled has expired: a call's cost is paid (every member is done), or a
  // member's wait for NCCL's latency is over (its traffic starts).
  void handle_timer(const TimerEntry& entry);
  // A send or receive of this model's traffic is complete (its token has kTrafficToken).
  void on_traffic_done(NpuId npu, std::uint64_t token);

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
  // What every member of one call does in traffic mode.
  struct Traffic {
    Collective collective = Collective::kAllReduce;
    TuningModel::Choice choice;
    std::vector<NpuId> members;
    // A ring per channel: across nodes, one per NIC, channel c entering each node at its c-th
    // member, so that every NIC carries one ring's crossing (NCCL's channels on rails).
    std::vector<std::vector<NpuId>> rings;
    std::vector<std::vector<std::uint32_t>> place;  // per channel, per member: its place in the ring
    // Tree all-reduce: NCCL's two trees, each carrying half the buffer in chunks: a chain inside
    // each node, its head under a binary tree over the nodes, each node inner in one tree and a
    // leaf in the other. Per tree and member (by index): its parent (-1: the root), its children.
    std::vector<std::vector<std::int32_t>> tree_parent;
    std::vector<std::vector<std::vector<std::uint32_t>>> tree_children;
    std::uint32_t steps = 0;       // per stream: a ring's steps; 2 per chunk of a tree's; 1 for an exchange
    double piece_bytes = 0;        // to one peer in one step (a ring's: on one channel), before efficiencies
    double node_share = 1;         // per byte, what NCCL reaches of a link inside a node
    double net_share = 1;          // and of a NIC
    std::int64_t serial = 0;       // tags its messages apart from every other call's
    Tick latency_ns = 0;           // NCCL's for the call: each member waits it before sending
    std::size_t arrived = 0;       // members that started it
    std::size_t members_left = 0;  // members not done
    PhasePlan plan;
  };
  struct Run {  // one member's part of a traffic call
    std::uint32_t traffic = 0;
    std::uint32_t index = 0;  // its place among the members
    NpuId npu = 0;
    std::uint64_t token = 0;
    std::uint32_t streams_left = 0;
    // Per ring (channel and slice; one for an exchange), which goes at its own pace: its step,
    // and the sends and receives of that step not done.
    std::vector<std::uint32_t> step, pending;
  };
  const AchievedModel& model_for(const std::vector<NpuId>& members);
  const std::vector<NpuId>& members_of(NpuId npu, std::uint32_t group);
  void start_traffic(NpuId npu, const CollectiveRequest& request, std::uint64_t token,
                     const std::vector<NpuId>& members, std::uint64_t k);
  void run_step(std::uint32_t run, std::uint32_t stream);
  void run_tree_step(std::uint32_t run, std::uint32_t stream);
  void advance(std::uint32_t run, std::uint32_t stream);  // the stream's step is done
  void finish_run(std::uint32_t run);
  std::uint64_t message_bytes(const Traffic& t, NpuId from, NpuId to) const;
  static std::uint64_t traffic_token(std::uint32_t run, std::uint32_t stream, bool receive);

  RunMachine machine_;
  Comm& system_;
  NpuTimers& timers_;
  CommListener& listener_;
  CollectiveObserver* observer_ = nullptr;
  bool symmetric_;
  bool traffic_;
  CommGroups groups_;
  std::vector<NpuId> everyone_;
  // Per (group, NPU): the collectives it has started on that group; its k-th meets the others' k-th.
  std::unordered_map<std::uint64_t, std::uint64_t> started_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint32_t> open_;  // (group, k) -> call
  IdPool<Call> calls_;
  IdPool<Traffic> traffics_;
  IdPool<Run> runs_;
  std::int64_t next_serial_ = 0;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::unique_ptr<AchievedModel>> models_;  // by (G, nodes)
};

}  // namespace chakrasim::system::nccl
