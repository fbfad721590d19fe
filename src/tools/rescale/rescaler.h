// `chakrasim chakra rescale`: a trace set of N ranks rewritten for another data-parallel size
// (docs/chakra-tools.md). The layout comes from the communicator groups: the groups labelled
// "DP" in the group names file must be the sets {low + stride x (d + D x high) : d < D} of a
// Megatron-style numbering (rank = low + stride x (d + D x high), the data-parallel index d in
// the middle), as `generate llm` and Megatron-LM number ranks. Rank (low, d', high) of the new set
// runs old rank (low, d' mod D, high)'s trace: the same compute and messages (weak scaling: each
// replica keeps its microbatches, the global batch grows by M / D), its collectives re-grouped:
// a DP group becomes the new replicas' group, every other group (all of whose members share one
// d) is copied for each new d', and point-to-point peers move with their replica. ZeRO's sharded
// step (a compute node fed by a DP reduce-scatter and feeding a DP all-gather) works on 1 / DP of
// the state: its duration, num_ops and tensor_size scale by old DP / new DP.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chakrasim::tools {

struct RescaleOptions {
  std::uint64_t dp = 0;  // the new data-parallel size, at least 1
};

struct RescaleReport {
  std::uint64_t ranks_in = 0, ranks_out = 0;
  std::uint64_t dp_in = 0, dp_out = 0;
  std::uint64_t groups_in = 0, groups_out = 0;
  std::uint64_t sharded_steps = 0;   // compute nodes scaled by old DP / new DP (over every written rank)
  std::vector<std::string> caveats;  // what the re-scaled traces do not model faithfully
};

// Reads IN_PREFIX.<rank>.et, the groups (`groups_path`) and their names (beside them), writes
// OUT_PREFIX.<rank>.et, OUT_PREFIX.groups.json and OUT_PREFIX.group-names.json. Throws Error
// naming the file and what was expected when the layout is not as above.
RescaleReport rescale_files(const std::string& in_prefix, const std::string& groups_path, const std::string& out_prefix,
                            const RescaleOptions& options);

std::string describe(const RescaleReport& report);

}  // namespace chakrasim::tools
