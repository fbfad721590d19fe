// The NCCL model over a whole run. Sends, receives and groups go to the system layer underneath,
// whose messages cross the network as ever; collectives are NCCL's choice of algorithm and
// protocol for their size and communicator (tuning.h), in one of two ways:
//
//  * `--collectives nccl`: the cost alone. A collective takes the time achieved.h gives the
//    choice, counted from the moment its last member starts it, as an NCCL kernel waits for its
//    peers. Its bytes do not cross the network: the fast path for the analytical backends.
//  * `--collectives nccl-traffic`: the choice runs as its messages through the system layer and
//    the network, so that it meets congestion and other traffic on the fabric backends. Each
//    member waits NCCL's latency for the call, then moves its bytes as the algorithm does
//    (traffic_shape.h: rings, PAT, NCCL's trees, NVLS's exchange in a node, and NVLS-tree,
//    CollNet and NVLS across nodes as a pipeline of stages), stream by stream, each stream's
//    steps in order. A message carries its bytes over what NCCL reaches of the links it uses
//    (achieved.h's efficiencies: NVLink's ring or NVLS share, the NIC's across nodes, and the
//    protocol's own ratio), so that on an idle network a call takes what achieved.h says, and
//    loads a busy one as NCCL would.
//
// A communicator is read as NCCL reads its ranks: NPU r sits in node r / G (G GPUs a node);
// the members of a group in each node and the nodes they span make the machine NCCL tunes for
// (the most members any node holds, and each member's own NIC, up to the node's NICs).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/id_pool.h"
#include "core/npu_timers.h"
#include "system/collective_plan.h"
#include "system/comm.h"
#include "system/comm_groups.h"
#include "system/nccl/achieved.h"
#include "system/nccl/call_types.h"
#include "system/nccl/traffic_shape.h"
#include "system/system_spec.h"

namespace chakrasim::system::nccl {

// The machine and choices of `spec` for `npus` NPUs whose network's first dimension holds
// `first_dimension` of them; throws Error naming the system file's keys for what does not fit.
struct RunMachine {
  Machine machine;                   // one node's worth; nodes and GPUs are set per communicator
  Enabled enabled;                   // by NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE; per communicator also by:
  DataType type = DataType::kFloat;  // the collectives' element type and reduction (call_types.h)
  ReduceOp op = ReduceOp::kSum;
  Efficiencies efficiencies;
};
// The model's constants with the ones `spec` sets in their place.
Efficiencies efficiencies_of(const NcclSpec& spec);
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
  // A send to another node goes, with PXN, through the GPU of the sender's node on the
  // destination's rail (the same place in its node), as NCCL's send/receive does.
  void send(NpuId npu, NpuId dst, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) override {
    const NpuId relay = pxn_relay(npu, dst);
    if (relay == npu) {
      system_.send(npu, dst, bytes, tag, token);
    } else {
      system_.send_via(npu, relay, dst, bytes, tag, token);
    }
  }
  void send_via(NpuId npu, NpuId relay, NpuId dst, std::uint64_t bytes, std::int64_t tag,
                std::uint64_t token) override {
    system_.send_via(npu, relay, dst, bytes, tag, token);
  }
  // The GPU a send from `npu` to `dst` goes through: `npu` itself where PXN does not apply (off,
  // the same node, the same rail).
  NpuId pxn_relay(NpuId npu, NpuId dst) const;
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
    TuningModel::Choice choice;
    std::vector<NpuId> members;
    TrafficShape shape;
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
    std::uint32_t window = 1;  // the shape's: steps a stream keeps in flight
    // Per stream of the shape, which goes at its own pace (or a pipeline's): the next step it
    // starts, and how many in a row it has done.
    std::vector<std::uint32_t> next, done;
    // Per stream and window slot (step % window): the step's sends and receives not done, and
    // whether it is done but not yet counted (a later step may end before an earlier one).
    std::vector<std::uint32_t> pending;
    std::vector<std::uint8_t> finished;
  };
  const AchievedModel& model_for(const std::vector<NpuId>& members);
  const std::vector<NpuId>& members_of(NpuId npu, std::uint32_t group);
  void start_traffic(NpuId npu, const CollectiveRequest& request, std::uint64_t token,
                     const std::vector<NpuId>& members, std::uint64_t k);
  void start_steps(std::uint32_t run, std::uint32_t stream);  // those its window and pipeline let start
  void run_step(std::uint32_t run, std::uint32_t stream, std::uint32_t step);
  void step_done(std::uint32_t run, std::uint32_t stream, std::uint32_t slot);  // queues it for advance()
  void advance_done_steps();
  void advance(std::uint32_t run, std::uint32_t stream, std::uint32_t slot);
  void finish_run(std::uint32_t run);
  std::uint64_t message_bytes(const Traffic& t, double bytes, NpuId from, NpuId to) const;
  static std::uint64_t traffic_token(std::uint32_t run, std::uint32_t stream, std::uint32_t slot, bool receive);

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
  // Steps done, advanced in order one at a time: a receive whose message is already here
  // completes inside the call that posts it, and must not run the next step from within it.
  struct DoneStep {
    std::uint32_t run, stream, slot;
  };
  std::vector<DoneStep> steps_done_;
  bool advancing_ = false;
  std::vector<Move> moves_;  // a step's, as its shape gives them
  // By (G, nodes, the ring ranked last).
  std::map<std::tuple<std::uint32_t, std::uint32_t, bool>, std::unique_ptr<AchievedModel>> models_;
};

}  // namespace chakrasim::system::nccl
