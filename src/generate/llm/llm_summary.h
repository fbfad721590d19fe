// What `chakrasim generate llm` tells the user about the iteration it wrote: parameters, FLOPs
// and memory traffic per rank, communication volume per group kind, and memory per rank. Every
// figure is summed from the generated stage traces, except the closed-form FLOPs it is checked
// against and the memory estimate.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "generate/llm/llm_gpu.h"
#include "generate/llm/llm_layout.h"
#include "generate/llm/llm_model.h"
#include "generate/llm/llm_stage.h"

namespace chakrasim::tools::llm {

// One rank's traffic on one kind of group in one iteration.
struct GroupVolume {
  std::uint64_t operations = 0;  // collectives, or sends for PP
  double comm_size = 0;          // sum of the nodes' comm_size
  // Bytes the rank puts on the wire with bandwidth-optimal algorithms on n members: all-reduce
  // 2 (n-1)/n S, reduce-scatter and all-to-all (n-1)/n S, all-gather (n-1) S (S = comm_size, the
  // input slice), a send S.
  double sent = 0;
};

struct MemoryEstimate {
  double weights = 0, grads = 0, optimizer = 0, activations = 0;  // bytes
  double total() const { return weights + grads + optimizer + activations; }
};

struct StageSummary {
  std::uint64_t stage = 0;
  std::uint64_t nodes = 0;
  double matmul_flops = 0;  // per rank
  double other_ops = 0;
  double bytes = 0;       // HBM traffic of its compute
  double compute_us = 0;  // sum of compute-node durations
  std::array<double, kOpKinds> ns_by_kind{};
  std::array<GroupVolume, kGroupKinds> volume{};
  MemoryEstimate memory;
};

struct Summary {
  ModelSpec model;
  ParamCounts params;
  ParallelSpec parallel;
  GpuSpec gpu;
  std::uint64_t ranks = 0;
  std::uint64_t microbatches = 0;
  double tokens = 0;              // per iteration
  IterationFlops closed_form;     // of the whole iteration
  double trace_matmul_flops = 0;  // summed over every rank's trace
  double trace_other_ops = 0;
  std::vector<StageSummary> stages;
};

Summary summarize(const ModelSpec& model, const Layout& layout, const GpuSpec& gpu,
                  const std::vector<StageTemplate>& stages);

// Bytes one rank sends for a collective of `type` and comm_size `bytes` on `members` ranks.
double sent_bytes(chakra::CommType type, double bytes, std::uint64_t members);

// The memory one rank of `stage` needs (mixed-precision Adam: 16-bit weights and gradients,
// fp32 master weights and two moments; ZeRO slices them over the data-parallel group).
MemoryEstimate estimate_memory(const ModelSpec& model, const Layout& layout, std::uint64_t stage,
                               std::uint64_t peak_in_flight);

// The summary as text for a person, one figure per line where a script may want it.
std::string format_summary(const Summary& summary);

}  // namespace chakrasim::tools::llm
