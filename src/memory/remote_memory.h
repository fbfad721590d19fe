// The analytical remote (disaggregated) memory (docs/astra-sim-model.md §1.4): an access of
// `bytes` takes latency + floor(bytes / bandwidth) ns. PER_NPU memory serves every access at
// once; PER_NODE has one first-come-first-served server per node of NPUs; MEMORY_POOL one for
// all NPUs. It models no caching, no bank conflicts and no difference between loads and stores.
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.h"
#include "memory/remote_memory_spec.h"

namespace chakrasim::memory {

class RemoteMemory {
 public:
  RemoteMemory(const RemoteMemorySpec& spec, NpuId npus);

  // An access of `bytes` by `npu` arriving at `now`: the tick it completes. Throws Error for
  // NO_MEMORY_EXPANSION, where remote memory does not exist.
  Tick access(NpuId npu, std::uint64_t bytes, Tick now);

  // The service time of one access, without queueing.
  Tick service_ns(std::uint64_t bytes) const;

 private:
  RemoteMemorySpec spec_;
  std::vector<Tick> server_free_at_;  // per server (node or pool)
};

}  // namespace chakrasim::memory
