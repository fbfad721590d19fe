#include "memory/remote_memory.h"

#include <algorithm>

#include "core/error.h"
#include "core/sim_time.h"

namespace chakrasim::memory {

RemoteMemory::RemoteMemory(const RemoteMemorySpec& spec, NpuId npus) : spec_(spec) {
  switch (spec.kind) {
    case RemoteMemoryKind::kPool: server_free_at_.assign(1, 0); break;
    case RemoteMemoryKind::kPerNode: {
      const std::uint32_t per_node = std::max<std::uint32_t>(1, spec.npus_per_node);
      server_free_at_.assign((npus + per_node - 1) / per_node, 0);
      break;
    }
    default: break;
  }
}

Tick RemoteMemory::service_ns(std::uint64_t bytes) const {
  // The reference reads the bandwidth as an integer number of GB/s (= bytes per ns).
  return spec_.latency_ns + (spec_.bandwidth_gb_per_s == 0 ? 0 : bytes / spec_.bandwidth_gb_per_s);
}

Tick RemoteMemory::access(NpuId npu, std::uint64_t bytes, Tick now) {
  switch (spec_.kind) {
    case RemoteMemoryKind::kNone:
      fail("NPU {} loads or stores remote memory, but the memory configuration is "
           "NO_MEMORY_EXPANSION; expected PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION or "
           "MEMORY_POOL (--memory)",
           npu);
    case RemoteMemoryKind::kPerNpu:
      return time_after(now, service_ns(bytes),
                        [&] { return fmt::format("NPU {}'s remote-memory access of {} bytes", npu, bytes); });
    case RemoteMemoryKind::kPerNode:
    case RemoteMemoryKind::kPool: {
      const std::size_t server =
          spec_.kind == RemoteMemoryKind::kPool ? 0 : npu / std::max<std::uint32_t>(1, spec_.npus_per_node);
      Tick& free_at = server_free_at_[server];
      free_at = time_after(std::max(free_at, now), service_ns(bytes), [&] {
        return fmt::format("NPU {}'s remote-memory access of {} bytes (behind the server's queue)", npu, bytes);
      });
      return free_at;
    }
  }
  return now;
}

}  // namespace chakrasim::memory
