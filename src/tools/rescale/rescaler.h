// `chakrasim chakra rescale`: a trace set of N ranks rewritten for another data-parallel,
// tensor-parallel or pipeline-parallel size (docs/chakra-tools.md). The layout comes from the
// communicator groups and their kinds (PREFIX.group-names.json), in Megatron-LM's and
// `generate llm`'s numbering, rank = t + TP x (c + CP x (d + DP x p)). Each size is one step,
// applied in the order TP, PP, DP, each reading the layout of the set the step before wrote:
//  - DP: the groups labelled "DP" are the sets {low + stride x (d + D x high) : d < D}. Rank
//    (low, d', high) of the new set runs old rank (low, d' mod D, high)'s trace (weak scaling:
//    each replica keeps its microbatches); a DP group becomes the new replicas' group, every other
//    group is copied for each new d', point-to-point peers move with their replica. ZeRO's
//    sharded step (a compute node fed by a DP reduce-scatter and feeding a DP all-gather) and the
//    DP all-gathers' parts scale by old DP / new DP.
//  - TP: the groups labelled "TP" are runs of TP consecutive ranks (the innermost index t). New
//    rank (t', rest) runs old rank (t' mod TP, rest)'s trace with the compute re-split: every
//    compute node and every collective whose per-rank size Megatron divides by TP scales by old
//    TP / new TP; a new TP of 1 drops the TP collectives.
//  - PP: the groups labelled "PP" are the pipelines {low + S x p : p < P}. A new PP M dividing P
//    merges P / M neighbouring stages: each new stage runs their passes back to back and the
//    schedule (gpipe, 1f1b or interleaved, read from the passes' order) is rebuilt for M stages.
//    The passes are read from the node names generate llm writes (F<mb>., B<mb>., R<mb>., step.).
//    Splitting stages is refused: the traces do not keep layers apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chakrasim::tools {

struct RescaleOptions {
  std::optional<std::uint64_t> dp, tp, pp;  // the new sizes; unset: unchanged
};

struct RescaleReport {
  std::uint64_t ranks_in = 0, ranks_out = 0;
  std::uint64_t groups_in = 0, groups_out = 0;
  std::vector<std::string> changes;  // what each step did, one or more lines per step
  std::vector<std::string> caveats;  // what the re-scaled traces do not model faithfully
};

// Reads IN_PREFIX.<rank>.et, the groups (`groups_path`) and their names (beside them), writes
// OUT_PREFIX.<rank>.et, OUT_PREFIX.groups.json and OUT_PREFIX.group-names.json. Throws Error
// naming the file, the group or node and what was expected when the layout is not as above.
RescaleReport rescale_files(const std::string& in_prefix, const std::string& groups_path, const std::string& out_prefix,
                            const RescaleOptions& options);

std::string describe(const RescaleReport& report);

}  // namespace chakrasim::tools
