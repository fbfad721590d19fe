// ASTRA-sim 1.0 text workloads -> per-rank Chakra ETs (docs/chakra-format.md §3), as the Chakra
// `chakra_converter Text` writes them: byte-identical on every input the reference converts
// correctly, with its defects fixed where no golden depends on them (listed atop text_converter.cc).
//
// The text: line 1 names the parallelism (MICRO, DATA, MODEL, HYBRID_DATA_MODEL,
// HYBRID_MODEL_DATA, HYBRID_DLRM or HYBRID_DLRM_ENHANCED plus the last bottom layer), line 2 the
// number of layers, then one line per layer: name, reserved, and for the forward pass, the input
// gradient and the weight gradient each a compute time, a comm type and a comm size, then an
// update time. Every rank gets the same graph of `passes` training iterations; node ids run on
// from one rank file to the next, as the reference's do.
//
// Our extension (text_hybrid.cc): the three ASTRA-sim 1.0 kinds the reference rejects,
// HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD and HYBRID_CUSTOMIZED. Their collectives
// run over model-parallel and data-parallel communicator groups: a `pg_name` attribute on the
// comm node names the rank's group, and the groups go to PREFIX.groups.json, which
// `chakrasim run --comm-groups` reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "chakra/et_file.h"
#include "chakra/op_shape.h"

namespace chakrasim::tools {

// The `schema` metadata attribute upstream Chakra writes (the astra-sim fork writes
// "1.0.2-chakra.0.0.4"; the goldens are upstream's).
inline constexpr const char* kTextSchema = "1.0.2-chakra.1.0.0";

struct TextOptions {
  std::int64_t npus = 1;    // rank files to write: PREFIX.0.et .. PREFIX.<npus-1>.et; at least 1
  std::int64_t passes = 1;  // training iterations in each trace; at least 1
  // The hybrid kinds only: NPUs in a model-parallel group, where line 1 gives no
  // `model_parallel_NPU_group:` (if both do, they must agree). 0: line 1's; HYBRID_CUSTOMIZED
  // without one takes all NPUs.
  std::int64_t model_parallel_group = 0;
  // The layers' shapes, one per layer in the workload's order (empty: none). Each compute node
  // gets its layer's, with the pass of its phase (FWD, BWD_IG, BWD_WG).
  std::vector<chakra::OpShape> layer_shapes;
};

// Called once per rank, in rank order, with that rank's trace.
using TextRankSink = std::function<void(std::size_t rank, const chakra::Trace& trace)>;

// Converts the workload `text` (`source` names it in errors) and hands each rank's trace to
// `sink` as soon as it is built, so that only one rank is in memory at a time. Returns the
// communicator-group JSON the traces' pg_names refer to: {"<id>": [ranks...], ...} for the hybrid
// kinds, "" for the others. Throws Error, before any rank is handed on, for options < 1, an
// unsupported parallelism, a malformed line (naming the line and the field), or a trace too big
// for the memory available.
std::string convert_text_each(const std::string& text, const std::string& source, const TextOptions& options,
                              const TextRankSink& sink);

// All ranks' traces at once (for tests and small workloads).
std::vector<chakra::Trace> convert_text(const std::string& text, const std::string& source, const TextOptions& options);

// Where convert_text_file writes the communicator groups: PREFIX.groups.json.
std::string text_groups_path(const std::string& prefix);

struct TextFiles {
  std::size_t ranks = 0;    // PREFIX.0.et .. PREFIX.<ranks-1>.et
  std::string groups_path;  // text_groups_path(PREFIX) if the parallelism has groups, else ""
};

// Reads `text_path` and writes PREFIX.<rank>.et for every rank, and the groups file if any.
TextFiles convert_text_file(const std::string& text_path, const std::string& prefix, const TextOptions& options);

}  // namespace chakrasim::tools
