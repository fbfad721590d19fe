// The plan of a hybrid text workload (HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD,
// HYBRID_CUSTOMIZED; the rules are at the top of text_hybrid.cc): which ranks each collective
// runs among, where recomputation starts, and the communicator groups. Internal to tools/text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/text/text_workload.h"

namespace chakrasim::tools::text {

enum class Kind { kTransformer, kTransformerFwdInBwd, kCustomized };

// The ranks a collective runs among, as a partition of 0..N-1 into groups.
struct Span {
  enum class Shape {
    kNone,     // no collective: the phase has no parallelism, or the group is one NPU
    kAll,      // all NPUs: the default communicator, no pg_name
    kBlocks,   // groups of `width` consecutive ranks
    kStrided,  // groups of the ranks `width` apart (N/width ranks each)
  };
  Shape shape = Shape::kNone;
  std::size_t width = 0;

  friend bool operator==(const Span&, const Span&) = default;
};

struct LayerSpans {
  Span fwd, ig, wg;
};

// Everything a rank's graph needs.
struct Plan {
  Kind kind = Kind::kTransformer;
  std::size_t npus = 1;
  std::vector<LayerSpans> spans;                      // per layer
  std::vector<std::optional<std::size_t>> recompute;  // per layer: the checkpoint to recompute from
  bool first_layer_ig_comm = true;                    // whether IGCOMM(0) is written
  std::vector<Span> families;                         // the groups, in id order
  std::uint64_t nodes_per_pass = 0;                   // an upper bound, for the size check
};

// Reads line 1's settings and plans every layer; throws Error naming `source` on bad input.
Plan plan_hybrid(const std::vector<std::string_view>& head, const std::vector<Layer>& layers, const std::string& source,
                 const TextOptions& options);

// The pg_name of `span`'s group containing `rank` ("" for every NPU).
std::string pg_name_of(const std::vector<Span>& families, const Span& span, std::size_t npus, std::size_t rank);
// The communicator-group JSON of `families`.
std::string groups_json(const std::vector<Span>& families, std::size_t npus);

}  // namespace chakrasim::tools::text
