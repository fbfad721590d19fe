// What the system layer is told by the user: the system JSON's collective keys and the
// scheduling flags (docs/astra-sim-model.md §1.3, §4.1-4.3). Parsed in config/.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chakrasim::system {

enum class CollectiveKind : std::uint8_t { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
inline constexpr std::size_t kCollectiveKinds = 4;
const char* collective_name(CollectiveKind kind);

// The native algorithms (§5): ring, direct (the reference's AllToAll class), halving-doubling
// and double binary tree.
// kCustom: a per-rank algorithm ET (`*-implementation-custom`), one phase over all NPUs.
enum class AlgorithmKind : std::uint8_t { kRing, kDirect, kHalvingDoubling, kDoubleBinaryTree, kCustom };
const char* algorithm_name(AlgorithmKind kind);

// One token of an `*-implementation` list, e.g. "ring", "oneRing", "direct4".
struct AlgorithmChoice {
  AlgorithmKind kind = AlgorithmKind::kRing;
  bool one_flat = false;  // the one* tokens: a single ring over all NPUs
  // direct<W>: messages a direct phase keeps in flight; 0 = the default, one per peer (n - 1).
  std::uint32_t window = 0;
};

// How collectives are timed: ASTRA-sim's chunked phases over the network (the default, exact to
// the reference); NCCL's choice of algorithm and protocol timed by the NCCL model (its cost
// alone); or NCCL's choice run as its traffic on the network (system/nccl/, docs/nccl.md).
enum class CollectiveModel : std::uint8_t { kAstraSim, kNccl, kNcclTraffic };

// The machine and NCCL settings of the NCCL model (system JSON keys nccl-*).
struct NcclSpec {
  std::string gpu = "H100";         // hardware preset
  std::uint32_t gpus_per_node = 0;  // 0: the network's first dimension, up to the GPU's domain
  std::string nic;                  // "": the GPU's usual NIC
  std::uint32_t nics_per_node = 0;  // 0: one per GPU
  std::string algo, proto;          // NCCL_ALGO, NCCL_PROTO
  bool nvls = true;                 // NCCL_NVLS_ENABLE
  bool collnet = false;             // NCCL_COLLNET_ENABLE
  bool pxn = true;                  // NCCL_PXN_DISABLE=0: all-to-all across nodes through the rail's GPU
  double platform_latency_us = 0;   // added to every call's time (nccl::Machine::platform_latency_us)
  // The run's collectives' element type and reduction, as nccl-tests names them (nccl/call_types.h);
  // "": float, sum.
  std::string datatype, reduce_op;
  // A machine's own calibration of the model's timing (nccl::Efficiencies); unset, its defaults.
  std::optional<double> ring_efficiency, nvls_efficiency, nvls_tree_efficiency, nvls_chunk_us, tree_message_us,
      ll_channel_efficiency, ll_proxy_scan_ns, nic_efficiency, nic_p2p_efficiency, p2p_channel_gb_per_s,
      all_to_all_efficiency;
};

enum class SchedulingPolicy : std::uint8_t { kLifo, kFifo, kExplicit };
enum class CollectiveOptimization : std::uint8_t { kBaseline, kLocalBwAware };

struct SystemSpec {
  SchedulingPolicy scheduling_policy = SchedulingPolicy::kLifo;
  CollectiveOptimization collective_optimization = CollectiveOptimization::kBaseline;
  std::uint64_t endpoint_delay_ns = 10;
  std::uint32_t active_chunks_per_dimension = 1;
  std::uint64_t preferred_dataset_splits = 1;
  double local_mem_bw_gb_per_s = 0;  // GB/s with GB = 10^9 bytes; 0 = no reduction cost
  // Per collective kind, one choice per logical dimension; empty = not configured.
  std::array<std::vector<AlgorithmChoice>, kCollectiveKinds> implementations;
  // Per collective kind, the path prefix of a custom algorithm's per-rank ETs (empty = none); it
  // takes precedence over `implementations`.
  std::array<std::string, kCollectiveKinds> custom_prefixes;
  std::uint32_t num_queues_per_dim = 1;
  // Every send first waits for an 8192-byte go-ahead from its receiver (--rendezvous-protocol).
  bool rendezvous = false;
  // BROADCAST nodes wait for their recorded duration, as in the reference (the default); false
  // runs them on the system layer like REDUCE, GATHER, SCATTER and BARRIER (§3.5).
  bool broadcast_by_duration = true;
  bool broadcast_by_duration_given = false;  // the system file's own "broadcast-by-duration"
  CollectiveModel collectives = CollectiveModel::kAstraSim;
  NcclSpec nccl;
};

// The endpoint delay of steps inside a communicator-group ring (the reference's "Fast" path).
inline constexpr std::uint64_t kGroupEndpointDelayNs = 10;
// Size of the rendezvous go-ahead message.
inline constexpr std::uint64_t kRendezvousBytes = 8192;

}  // namespace chakrasim::system
