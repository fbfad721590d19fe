#include "system/nccl/msccl.h"

namespace chakrasim::system::nccl {
namespace {

// RCCL's constants for MI300X (its tuning model for gfx942, ring row), us: a call's fixed cost
// (LL 12, Simple 17) and a step's between two GPUs of a node (LL 0.8, Simple 2.1). Its own ring
// all-reduce of 8 GPUs at LL, 12 + 14 x 0.8 = 23.2, is what AMD's sweeps measure at 128-512 B.
double base_latency_us(Protocol p) { return p == Protocol::kSimple ? 17.0 : 12.0; }
double step_latency_us(Protocol p) { return p == Protocol::kSimple ? 2.1 : 0.8; }

constexpr double kAllPairsSimpleShare = 0.511;

}  // namespace

const MscclSchedule* find_msccl_schedule(std::span<const MscclSchedule> schedules, Collective c, std::uint32_t ranks,
                                         std::uint32_t nodes, std::uint64_t bytes, std::uint32_t element_bytes,
                                         bool in_place) {
  if (nodes != 1 || element_bytes == 0 || bytes % element_bytes != 0) return nullptr;
  const std::uint64_t count = bytes / element_bytes;
  for (const MscclSchedule& s : schedules) {
    if (s.collective == c && s.in_place == in_place && s.gpus == ranks && count > 0 && count % s.chunks_per_loop == 0 &&
        bytes >= s.min_bytes && bytes <= s.max_bytes) {
      return &s;
    }
  }
  return nullptr;
}

double msccl_latency_us(Protocol protocol) {
  constexpr double kAllPairsSteps = 2;
  return base_latency_us(protocol) + kAllPairsSteps * step_latency_us(protocol);
}

double msccl_link_share(Protocol protocol) { return kAllPairsSimpleShare * (protocol == Protocol::kLL ? 0.5 : 1.0); }

}  // namespace chakrasim::system::nccl
