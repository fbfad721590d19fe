// MSCCL's schedules: collectives written as programs (XML files) that RCCL loads at start-up and
// runs instead of its own algorithms for the sizes each program names. RCCL ships them for one
// node of 8 MI300X and uses them by default (RCCL_MSCCL_ENABLE); NCCL has none. As RCCL's source
// of the ROCm 6.3 era (2.21.5) ships them (tools/msccl-algorithms, read to learn them), the
// all-reduce's are "all-pairs": every GPU sends each other GPU that GPU's eighth of the buffer,
// reduces the eighths it receives, and sends its reduced eighth to every other GPU. Two steps
// where a ring takes 14, each GPU's links carrying 2 x 7/8 of the buffer, as a ring's do.
//
// A schedule runs where RCCL's scheduler would pick it: the collective, the number of ranks, the
// size in its range, and a whole number of elements in each of its chunks (RCCL checks
// count % chunks-per-loop). RCCL has no model of a schedule's time: here it is RCCL's ring
// constants for MI300X, borrowed for two steps, plus the bytes at the all-pairs' share of the
// links; docs/nccl.md has the anchors.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "system/nccl/nccl_types.h"

namespace chakrasim::system::nccl {

struct MscclSchedule {
  Collective collective = Collective::kAllReduce;
  Protocol protocol = Protocol::kSimple;
  std::uint32_t gpus = 8;               // the program's ranks: it runs on exactly that many
  std::uint32_t channels = 8;           // its thread blocks' channels
  std::uint32_t chunks_per_loop = 512;  // the buffer is cut into this many chunks a loop
  std::uint64_t min_bytes = 0;          // the sizes it takes, both ends included
  std::uint64_t max_bytes = 0;
  bool in_place = false;  // it takes calls whose output is their input, or else the others
};

// RCCL's all-reduce schedules for 8 MI300X, out of place and in place: the same programs and
// sizes, but in place RCCL ships none for 11-14 MiB (11534337-14680064 bytes), which it leaves
// to its ring.
inline constexpr std::array<MscclSchedule, 7> kRcclMi300xSchedules = {{
    {Collective::kAllReduce, Protocol::kLL, 8, 4, 256, 0, 65536, false},
    {Collective::kAllReduce, Protocol::kLL, 8, 8, 512, 65537, 524287, false},
    {Collective::kAllReduce, Protocol::kSimple, 8, 8, 512, 524288, 16777216, false},
    {Collective::kAllReduce, Protocol::kLL, 8, 4, 256, 0, 65536, true},
    {Collective::kAllReduce, Protocol::kLL, 8, 8, 512, 65537, 524287, true},
    {Collective::kAllReduce, Protocol::kSimple, 8, 8, 512, 524288, 11534336, true},
    {Collective::kAllReduce, Protocol::kSimple, 8, 8, 512, 14680065, 16777216, true},
}};

// The schedule RCCL runs for a call of `bytes` in elements of `element_bytes` on `ranks` GPUs in
// one node, in place or not, or nullptr (RCCL's own algorithms then).
const MscclSchedule* find_msccl_schedule(std::span<const MscclSchedule> schedules, Collective c, std::uint32_t ranks,
                                         std::uint32_t nodes, std::uint64_t bytes, std::uint32_t element_bytes,
                                         bool in_place);

// RCCL's latency for an all-pairs schedule in `protocol`, us: its fixed cost of a call and its
// cost of a step between two GPUs of a node (its MI300X tuning), for the all-pairs' two steps.
double msccl_latency_us(Protocol protocol);

// The share of a GPU's scale-up rate an all-pairs schedule reaches in `protocol`: 0.511 in
// Simple, from AMD's two 8x MI300X all-reduce sweeps (docs/nccl.md); LL half of that (half of
// each LL store is a flag).
double msccl_link_share(Protocol protocol);

}  // namespace chakrasim::system::nccl
