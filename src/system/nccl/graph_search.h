// The topology graphs NCCL's search (src/graph/search.cc, 2.30; read to learn it, written here
// anew) would settle on for a DGX-like node: every GPU on the NVSwitches (or a mesh), one NIC per
// GPU or as many as given (each next to a GPU of its own), all on PCIe switches next to their
// GPUs, whose PCIe path does not bind a NIC (true of 400G NICs on PCIe Gen5, not of 800G ones).
// For each algorithm the channel count and per-channel speeds, found over NCCL's ladders of
// speeds for the GPU generation: what NCCL's tuning (tuning.h) rates each algorithm by.
// docs/nccl.md says where this differs from running NCCL's search on a real machine.
#pragma once

#include <array>
#include <cstdint>

#include "system/nccl/nccl_types.h"

namespace chakrasim::system::nccl {

struct Machine;

// NCCL's most heads for NVLS, and GPUs a node for CollNet direct (its arity + 1).
inline constexpr std::uint32_t kMaxNvlsArity = 32;
inline constexpr std::uint32_t kMaxDirectArity = 7;

// One of NCCL's topology graphs, as its search leaves it.
struct Graph {
  std::uint32_t channels = 0;  // 0: the algorithm has no graph here
  double bw_intra = 0;         // GB/s per channel, inside a node
  double bw_inter = 0;         // GB/s per channel, across nodes
  bool nvlink = true;          // the intra-node path is NVLink-class (every preset's; PCI would not be)
  // Every channel replays the first's order of GPUs (NCCL's search tries it first and keeps it
  // where it reaches the full bandwidth: one node on NVSwitches, not a mesh or NICs).
  bool same_channels = false;
};

// NCCL's index of a GPU generation: 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell.
int gpu_generation(int compute_capability);

// The graphs NCCL's search would find on `machine`. Throws Error where the machine does not hold
// together (check_machine).
std::array<Graph, kAlgorithms> nccl_graphs(const Machine& machine);

}  // namespace chakrasim::system::nccl
