// How long a compute node takes (ASTRA-SIM-BEHAVIOUR.md §2.8). Replay: duration_micros x 1000
// ns, and 1 ns for a zero duration. Roofline (GPU nodes with roofline enabled): time =
// floor(num_ops / min(local_mem_bw x num_ops/tensor_size, peak_perf) x 1e9) ns, and a node with
// tensor_size 0 takes no time at all. It models one roofline for every NPU; it ignores kernel
// overlap and data movement other than the roofline's.
#pragma once

#include <cstdint>
#include <optional>

#include "chakra/graph.h"
#include "core/types.h"

namespace chakrasim::compute {

struct ComputeSpec {
  bool roofline_enabled = false;
  double peak_perf_tflops = 0;   // 10^12 FLOP/s
  double local_mem_bw_gbps = 0;  // 10^9 B/s
};

class ComputeModel {
 public:
  explicit ComputeModel(const ComputeSpec& spec) : spec_(spec) {}

  // Duration of compute node `node`, or nullopt when the node is skipped (zero time).
  std::optional<Tick> duration(const chakra::Graph& graph, std::uint32_t node) const;

  // Replay duration of any node: duration_micros x 1000 ns, at least 1 ns.
  static Tick replay_ns(std::uint64_t duration_micros) {
    return duration_micros == 0 ? 1 : duration_micros * 1000;
  }

  bool uses_roofline(const chakra::Graph& graph, std::uint32_t node) const {
    return spec_.roofline_enabled && !graph.is_cpu_op(node);
  }

 private:
  ComputeSpec spec_;
};

}  // namespace chakrasim::compute
