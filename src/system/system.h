// The system layer: turns each NPU's collectives into chunks ("streams"), runs every chunk
// through its per-dimension phases under the queue and concurrency rules of the reference
// (docs/astra-sim-model.md §4.1-4.3), drives the phase algorithms, charges the endpoint delay
// and reduction cost of every step, carries point-to-point sends and receives (with the
// optional rendezvous handshake), and matches messages coming back from the network.
//
// Upward, it reports a finished operation to a CommListener (the workload) in the same tick,
// as the reference does. Downward, it only calls network::Network::send.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>

#include "chakra/graph.h"
#include "core/id_pool.h"
#include "core/npu_timers.h"
#include "core/types.h"
#include "network/network.h"
#include "network/topology.h"
#include "system/collective_plan.h"
#include "system/comm.h"
#include "system/comm_groups.h"
#include "system/group_table.h"
#include "system/phase_algorithm.h"
#include "system/system_spec.h"
#include "system/transport.h"

namespace chakrasim::system {

class System final : public Comm, public network::ArrivalSink, private CompletionSink {
 public:
  // `folding`: a folded run (network/folding.h; nullptr: a full run). Only the class
  // representatives are simulated, and every message one sends to NPU b is taken as the message
  // b's representative receives (system/transport.h). A symmetric run (one class) keeps per-NPU
  // state for NPU 0 alone.
  System(const SystemSpec& spec, const network::Topology& topology, NpuTimers& timers, CommListener& listener,
         const network::Folding* folding = nullptr);

  void observe(CollectiveObserver* observer) { observer_ = observer; }

  // The network is built after the system (it needs the system as its sink).
  void attach(network::Network& network) { transport_.attach(network); }

  // Communicator groups from the group file, shared by every NPU (ids >= 1).
  void set_groups(const CommGroups& groups);
  // A group `npu` learns at run time (a PyTorch process-group METADATA node): key `key`, tag id
  // `key + 1`, as the reference registers them. An empty member list means every NPU.
  void register_group(NpuId npu, std::uint32_t key, std::vector<NpuId> members) override;

  // The per-position algorithm ETs of the custom implementation of `kind` (position p runs
  // algorithm[p]); needed for every kind whose SystemSpec::custom_prefixes entry is set.
  void set_custom_algorithm(CollectiveKind kind, std::vector<std::shared_ptr<const chakra::Graph>> algorithm);

  // Starts `npu`'s part of a collective now; the listener hears `token` when it is done.
  // Throws Error if the group is unknown or does not contain `npu`.
  void start_collective(NpuId npu, const CollectiveRequest& request, std::uint64_t token) override;

  // Point-to-point: a send completes when its message has arrived; a receive when a message
  // with the same (tag, src, dst, bytes) has arrived. Native sends pay no endpoint delay.
  void send(NpuId npu, NpuId dst, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) override;
  void receive(NpuId npu, NpuId src, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) override;
  void send_via(NpuId npu, NpuId relay, NpuId dst, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) override;

  // A timer this layer scheduled has expired.
  void handle_timer(const TimerEntry& entry);

  void on_arrival(std::uint64_t message) override;

  std::uint64_t messages_sent() const { return transport_.messages_sent(); }
  // Receives posted but never matched (non-zero only after a deadlock).
  std::size_t waiting_receives() const { return transport_.waiting_receives(); }

 private:
  enum TimerKind : std::uint8_t { kEndpointDone, kReduceDone, kCustomComputeDone };
  // Completions the transport hands back (1 to 254, system/transport.h).
  enum CompletionKind : std::uint8_t { kStreamReceive = 1, kOpDone, kCustomNodeDone };
  struct Io;

  // What a chunk's phase gets when the chunk is created, as the reference decides it then.
  struct PhaseQueue {
    std::int32_t queue = -1;
    bool clockwise = true;
    bool min_root_tree = false;  // doubleBinaryTree: this chunk's tree
  };
  struct Stream {
    NpuId npu = 0;
    std::uint32_t collective = 0;
    std::uint32_t chunk = 0;  // index within the collective
    std::uint32_t plan = 0;
    std::uint64_t tag = 0;
    std::int64_t priority = 0;
    std::uint32_t next_phase = 0;  // phases entered so far
    std::int32_t queue = -1;       // queue of the current phase; -1 before the first
    Tick endpoint_ns = 0;
    const Group* group = nullptr;
    // Size of the reducing steps now paying E: the reduction cost follows when E is over. Every
    // reducing step a stream has in flight at once has the same size (ring and direct steps
    // all do; halving-doubling and the tree have one in flight), so one field is enough.
    std::uint64_t reduce_bytes = 0;
    PhaseAlgorithm algorithm;
    std::vector<PhaseQueue> queues;  // chosen at creation, one per phase
  };
  struct Collective {
    NpuId npu = 0;
    std::uint64_t token = 0;
    std::uint64_t streams_left = 0;
  };
  struct PendingOp {  // a workload send or receive, or a custom algorithm's step, in flight
    NpuId npu = 0;
    std::uint64_t token = 0;
  };
  struct Allocators {
    std::uint32_t round_robin = 0;
    std::uint32_t first = 0;
    std::uint32_t last = 0;
  };

  std::uint32_t plan_for(const CollectiveRequest& request, const Group* group);
  PhaseQueue pick_queue(NpuId npu, const PhasePlan& phase);
  void enter_next_phase(std::uint32_t stream);
  void add_waiting(std::size_t queue_index, std::uint32_t stream);
  void start_waiting_streams(NpuId npu, std::int32_t queue);
  void configure_phase(Stream& s, const PhasePlan& phase, const PhaseQueue& pq);
  void init_stream(std::uint32_t stream);
  void step_ready(std::uint32_t stream);
  void stream_received(std::uint32_t stream);
  void collective_stream_done(std::uint32_t collective);
  void custom_node_done(std::uint32_t stream, std::uint32_t node);
  std::size_t queue_index(NpuId npu, std::int32_t queue) const {
    return static_cast<std::size_t>(npu) * queues_per_npu_ + static_cast<std::size_t>(queue);
  }
  Tick reduction_ns(std::uint64_t bytes) const;

  void complete(const Completion& completion) override;

  const SystemSpec& spec_;
  const network::Topology& topology_;
  NpuTimers& timers_;
  CommListener& listener_;
  CollectiveObserver* observer_ = nullptr;

  std::uint32_t queues_per_dim_;
  std::uint32_t queues_per_npu_;
  std::uint32_t queue_threshold_;  // streams running at once per queue

  IdPool<Stream> streams_;
  IdPool<Collective> collectives_;
  IdPool<PendingOp> ops_;
  std::unique_ptr<FoldedGroups> folded_groups_;  // in a folded run
  Transport transport_;
  GroupTable groups_;

  std::array<std::vector<std::shared_ptr<const chakra::Graph>>, kCollectiveKinds> custom_;

  std::vector<ChunkPlan> plans_;
  std::map<std::tuple<int, std::uint64_t, std::uint32_t, const Group*>, std::uint32_t> plan_ids_;

  // Per NPU.
  std::vector<std::int64_t> priority_counter_;
  std::vector<std::uint64_t> next_stream_tag_;                         // world collectives
  std::unordered_map<std::uint64_t, std::uint64_t> group_stream_tag_;  // by npu_group_key (tags.h)
  std::vector<Allocators> allocators_;                                 // per (NPU, logical dimension)
  // Per (NPU, collective kind, logical dimension): doubleBinaryTree phases created so far; even
  // ones use the max-root tree, odd ones the min-root tree.
  std::vector<std::uint64_t> tree_phases_;
  // A stream waiting for a place in its queue. The reference keeps one list per queue: running
  // streams first, then waiting ones by priority, a new one behind every waiting stream of its
  // priority or higher. Only the order of the waiting ones matters, so they are a heap (ordered
  // by priority, then by arrival): a collective of 1e5 chunks entering one queue costs n log n,
  // not n^2.
  struct WaitingStream {
    std::int64_t priority;
    std::uint64_t arrival;
    std::uint32_t stream;
  };
  std::vector<std::vector<WaitingStream>> waiting_;  // per (NPU, queue): a heap, next to start on top
  std::uint64_t arrivals_ = 0;
  std::vector<std::uint32_t> running_;  // per (NPU, queue)
};

}  // namespace chakrasim::system
