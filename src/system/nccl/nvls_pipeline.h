// How an NVLS call runs in time: NCCL cuts it into loops of chunks, and a loop's chunks go
// through the switch's reduction and multicast as a pipeline. NCCL's tuning model charges a
// fixed latency plus bytes at a rate; the real call's middle sizes run slower, because NCCL
// shrinks the chunk as the call shrinks (so each loop's fixed cost weighs more), and the
// pipeline must fill before it runs at its rate.
//
// The chunking is NCCL's own (its enqueue code, 2.30: NVLS channels per GPU generation, a chunk
// of 128 KiB shrunk to 64, 32 and 16 KiB when the call holds fewer than 64, 8 and 2 loops of the
// larger one; NVLS-tree's shrunk to 64 and 32 KiB at 4 and 1 loops, and capped at 64 KiB from
// 4 nodes). On it this model puts two measured costs, constants of achieved.h:
//
//   a loop's time = max(loop bytes / NVLink-side rate + per-loop cost, loop bytes / network rate)
//   time = NCCL's latency + (bytes / loop bytes) x a loop's time + (stages - 1) x the first loop's
//
// The per-loop cost (each chunk's fences and the switch's barrier: a fixed time per chunk a
// channel takes in the loop, one per head) is paid on the GPUs' side only: where the NICs are slower it hides under
// their time. `stages` is the pipeline's depth in loops: a reduce-scatter then an all-gather in
// the node (2), plus a level per tree level across nodes. docs/nccl.md has how the constants
// were measured, and the error on each sweep.
#pragma once

#include <cstdint>

#include "system/nccl/nccl_types.h"

namespace chakrasim::system::nccl {

struct Machine;

// The loops NCCL's enqueue makes of one NVLS or NVLS-tree call of `bytes` (nccl-tests' size).
struct NvlsChunking {
  std::uint32_t channels = 0;  // NVLS channels (CTAs) per GPU
  std::uint32_t heads = 0;     // chunks a channel takes per loop: a GPU's share each
  std::uint32_t chunk_bytes = 0;
  std::uint64_t loop_bytes() const { return std::uint64_t{channels} * heads * chunk_bytes; }
};
// `heads`: the NVLS graph's channel count (graph_search.h), a head per GPU of the node (across
// nodes, no more than its NICs);
// `nccl_nvls_gb_per_s`: NCCL's own NVLS all-reduce bandwidth (its tuning table), under 150 of
// which NVLS across nodes keeps 32 KiB chunks.
NvlsChunking nvls_chunking(const Machine& machine, Algorithm a, std::uint32_t heads, std::uint64_t bytes,
                           double nccl_nvls_gb_per_s);

// The pipeline's depth in loops: an all-reduce reduces then gathers in the node (2), a gather or a
// scatter alone is 1; NVLS-tree adds two per level of NCCL's tree across the nodes, a loop up and a
// loop down (what NCCL's model gives those levels as a fixed latency: achieved.h).
double nvls_stages(Collective c, Algorithm a, std::uint32_t nodes);

struct NvlsTime {
  double transfer_us = 0;  // the loops at the rate of their slower side
  double fill_us = 0;      // the pipeline's fill: (stages - 1) x the first loop
  // The NVLink side's rate as a share of what it would be without the per-loop cost.
  double nvlink_share = 1;
};
// `nvlink_gb_per_s` and `network_gb_per_s` are algorithm bandwidths (GB/s of the call's bytes).
NvlsTime nvls_time(const NvlsChunking& chunking, double stages, std::uint64_t bytes, double nvlink_gb_per_s,
                   double network_gb_per_s, double loop_cost_us);

}  // namespace chakrasim::system::nccl
