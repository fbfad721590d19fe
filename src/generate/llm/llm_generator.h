// `chakrasim generate llm`: synthetic Chakra traces of one training iteration of a transformer
// under data, tensor (+ sequence), pipeline, context and expert parallelism, one file per rank,
// with the communicator-group file and, on request, a matching network and system file.
// docs/llm-generator.md explains the model of the iteration and its figures.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chakra/workload_files.h"
#include "generate/llm/llm_gpu.h"
#include "generate/llm/llm_layout.h"
#include "generate/llm/llm_model.h"
#include "generate/llm/llm_stage.h"
#include "generate/llm/llm_summary.h"
#include "generate/llm/llm_writer.h"

namespace chakrasim::tools::llm {

struct GenerateOptions {
  ModelSpec model;
  ParallelSpec parallel;
  std::string gpu = "H100";
  std::uint64_t gpus_per_node = 0;  // 0: the GPU preset's scale-up domain
  bool per_op_nodes = false;        // one node per kernel instead of one per run of kernels
  bool op_shapes = false;           // every GEMM a node of its own with its shape (gemm, pass)
  std::string systolic_preset;      // the system JSON's compute: this systolic preset ("": the GPU's)
  std::string out_prefix;           // PREFIX.<rank>.et and PREFIX.groups.json
  std::string network_out;          // optional
  std::string system_out;           // optional
  bool nccl_collectives = false;    // the system JSON times collectives by the NCCL model
};

// Checks the options and builds one template per pipeline stage (no files).
struct Generated {
  ModelSpec model;
  GpuSpec gpu;
  Layout layout;
  std::vector<StageTemplate> stages;
};
Generated build_iteration(const GenerateOptions& options);

// TP and EP collectives sit on every layer's critical path: a group that leaves its scale-up
// domain runs them over the scale-out network. One sentence per such kind, naming the flags.
std::vector<std::string> domain_warnings(const Layout& layout, const GpuSpec& gpu);

struct GenerateResult {
  Summary summary;
  WrittenFiles files;
  std::string groups_path;
  std::vector<std::string> warnings;  // for the user, printed before the summary
};
// Builds the iteration and writes every file; throws Error naming the flag on bad options.
GenerateResult generate_llm(const GenerateOptions& options);

// The iteration without files, to simulate at once (`generate llm --run`): every rank's graph,
// parsed from the bytes its file would hold (the ranks of a stage share one structure), the
// communicator groups and their kinds, and the network and system texts --network-out and
// --system-out would write. out_prefix, network_out and system_out are not used.
struct InMemoryIteration {
  std::vector<std::shared_ptr<const chakra::Graph>> graphs;
  std::string groups_json, group_names_json, network_yaml, system_json;
  Summary summary;
  std::vector<std::string> warnings;
};
InMemoryIteration generate_llm_in_memory(const GenerateOptions& options, const chakra::LoadProgress& on_rank = {});

}  // namespace chakrasim::tools::llm
