// `chakrasim chakra obfuscate`: per-rank traces that simulate as the originals do on any system
// but reveal no model (docs/chakra-tools.md). Every node keeps only what the simulator reads:
// its type, dependencies, duration and the attributes is_cpu_op, comm_type, comm_size,
// comm_src, comm_dst, comm_tag, comm_priority, num_ops, tensor_size, involved_dim and pg_name.
// Names become the node's type, inputs and outputs go (but a METADATA node's inputs.values, which
// describe its process groups), shapes and every other attribute go, and so do the
// GlobalMetadata's attributes. Runs of compute nodes that nothing else waits on (each the only
// child of the one before, which is its only parent, both on the GPU or both on the CPU, both
// with a recorded time) become one node, their durations, num_ops and tensor_size summed, so
// that layer boundaries do not show. Ids are renumbered in dependency order. Durations,
// num_ops, tensor_size and comm_size can be perturbed within +-PCT percent: each distinct value
// always by the same factor (from the seed), so that every rank's copy of a collective, and both
// ends of a message, stay equal.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "chakra/et_file.h"

namespace chakrasim::tools {

struct ObfuscateOptions {
  std::uint64_t seed = 1;
  double perturb_pct = 0;  // 0 to 50: the largest change of a duration or size, in percent
};

// What was removed and changed, summed over the ranks.
struct ObfuscateReport {
  std::size_t ranks = 0;
  std::uint64_t nodes_in = 0, nodes_out = 0;
  std::uint64_t fused_nodes = 0;  // nodes merged into the one before them
  std::uint64_t names = 0;        // node names replaced
  std::uint64_t inputs_outputs = 0;
  std::map<std::string, std::uint64_t> attributes;  // removed, by name
  std::uint64_t metadata_attributes = 0;
  std::uint64_t perturbed_values = 0;
  std::string groups_path;  // the group file written beside the traces, if any
};

// One rank's trace. Throws Error for a trace that is not a DAG (what Graph::build refuses).
chakra::Trace obfuscate_trace(const chakra::Trace& trace, const std::string& source, const ObfuscateOptions& options,
                              ObfuscateReport& report);

// Every rank of IN_PREFIX (IN_PREFIX.0.et, ...) to OUT_PREFIX.<rank>.et, and IN_PREFIX.groups.json
// (or `groups_path`, when given) copied to OUT_PREFIX.groups.json with its group names file.
ObfuscateReport obfuscate_files(const std::string& in_prefix, const std::string& out_prefix,
                                const std::string& groups_path, const ObfuscateOptions& options);

// The report as the command prints it: what was removed, fused, renumbered and perturbed.
std::string describe(const ObfuscateReport& report, const ObfuscateOptions& options);

}  // namespace chakrasim::tools
