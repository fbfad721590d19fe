// Machines the NCCL model's tests run on: DGX-like nodes of a GPU preset.
#pragma once

#include <cstdint>

#include "system/nccl/tuning.h"

namespace chakrasim::system::nccl {

// `nodes` nodes of `gpus` GPUs, each node with `nics` of the GPU's default NIC.
inline Machine dgx(const char* gpu = "H100", std::uint32_t gpus = 8, std::uint32_t nodes = 1, std::uint32_t nics = 8) {
  Machine m;
  m.gpu = &gpu_preset(gpu);
  m.gpus_per_node = gpus;
  m.nodes = nodes;
  m.nic = &nic_preset(m.gpu->default_nic);
  m.nics_per_node = nics;
  return m;
}

// `enabled` for a call that writes its result over its input: nccl-tests' in-place column, and
// every call of a run (nccl_collectives.cc).
inline Enabled in_place(Enabled enabled) {
  enabled.in_place = true;
  return enabled;
}

}  // namespace chakrasim::system::nccl
