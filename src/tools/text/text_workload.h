// What text_parser.cc (reading the file), text_converter.cc (the reference converter's modes) and
// text_hybrid.cc (the ASTRA-sim 1.0 kinds the reference rejects) share: the parsed workload and
// layer lines, the comm-type keywords, and the entry point of the hybrid kinds. Internal to the
// tools layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/et_file.h"
#include "chakra/graph.h"
#include "tools/text/text_converter.h"

namespace chakrasim::tools::text {

// One of a layer's three phases: forward, input gradient, weight gradient.
struct Phase {
  std::uint64_t compute_micros = 0;
  std::string comm_type;  // as written; checked with check_comm_type where the mode uses it
  std::int64_t comm_bytes = 0;
};

struct Layer {
  std::string name;
  std::size_t line = 0;
  Phase fwd, ig, wg;
  std::string policy;  // field 13, "" if absent: HYBRID_CUSTOMIZED's per-layer parallelism
};

// kHybrid: one of text::is_hybrid_parallelism's kinds, converted by text::convert_hybrid.
enum class Parallelism { kMicro, kData, kModel, kHybridDataModel, kHybridModelData, kHybridDlrm, kHybrid };

// A parsed text workload.
struct Workload {
  Parallelism kind = Parallelism::kData;
  std::size_t last_bottom_layer = 0;   // HYBRID_DLRM only
  std::vector<std::string_view> head;  // line 1's words, for the hybrid kinds' settings
  std::vector<Layer> layers;
};

// The text with CRLF and lone CR turned into LF (Python's universal newlines, as the reference
// reads it); the converters store this text in the traces.
std::string with_universal_newlines(std::string_view raw);
// Parses `text` (already through with_universal_newlines; a leading byte-order mark is skipped),
// throwing Error naming `source`, the line and the field on anything the converter cannot take.
Workload parse_workload(const std::string& text, const std::string& source);

// The collective a comm-type keyword names; NONE and unknown words give nullopt.
std::optional<chakra::CommType> comm_type_of(std::string_view keyword);

// Throws, naming the file, line, layer and field, unless `phase`'s comm type is ALLREDUCE,
// ALLGATHER, REDUCESCATTER, ALLTOALL or NONE. `field` is the 1-based column of the type.
void check_comm_type(const std::string& source, const Layer& layer, const Phase& phase, int field, const char* what);

// A non-negative decimal integer (an optional '+' allowed), or nullopt.
std::optional<std::uint64_t> parse_count(std::string_view word);

// Throws unless `passes` traces of `nodes_per_pass` nodes fit in memory and every rank's ids fit
// in 64 bits.
void check_trace_size(const TextOptions& options, std::size_t layers, std::uint64_t nodes_per_pass);

// `sink`, with every compute node of a layer given the layer's shape and its phase's pass
// (text_shapes.cc). Throws unless there is one shape per layer and the layers' names differ.
TextRankSink with_layer_shapes(const std::vector<Layer>& layers, const std::vector<chakra::OpShape>& shapes,
                               const std::string& source, const TextRankSink& sink);

// HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD and HYBRID_CUSTOMIZED (text_hybrid.cc).
bool is_hybrid_parallelism(std::string_view keyword);
inline constexpr const char* kHybridList = "HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_CUSTOMIZED";

// Converts a workload of a hybrid kind: `head` is line 1's words, `layers` the parsed layer
// lines. Hands each rank's trace to `sink` and returns the communicator-group JSON.
std::string convert_hybrid(const std::vector<std::string_view>& head, const std::vector<Layer>& layers,
                           const std::string& source, const TextOptions& options,
                           const chakra::GlobalMetadata& metadata, const TextRankSink& sink);

}  // namespace chakrasim::tools::text
