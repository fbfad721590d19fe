// The text converter's layer shapes: each rank's compute nodes, named
// COMP_NODE_<layer>_<FWD|BWD_IG|BWD_WG|FWD_RECOMPUTE> by both writers, get their layer's shape
// and the pass their phase runs (chakra/op_shape.h).
#include <unordered_map>

#include "core/error.h"
#include "tools/text/text_workload.h"

namespace chakrasim::tools::text {

TextRankSink with_layer_shapes(const std::vector<Layer>& layers, const std::vector<chakra::OpShape>& shapes,
                               const std::string& source, const TextRankSink& sink) {
  if (shapes.size() != layers.size()) {
    fail("{}: {} layers, but the shapes give {}; expected one shape per layer, in the workload's order", source,
         layers.size(), shapes.size());
  }
  using Pass = chakra::OpShape::Pass;
  auto by_name = std::make_shared<std::unordered_map<std::string, chakra::OpShape>>();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    for (const auto& [phase, pass] :
         {std::pair{"FWD", Pass::kForward}, std::pair{"FWD_RECOMPUTE", Pass::kForward},
          std::pair{"BWD_IG", Pass::kInputGradient}, std::pair{"BWD_WG", Pass::kWeightGradient}}) {
      chakra::OpShape shape = shapes[i];
      shape.pass = pass;
      if (!by_name->emplace("COMP_NODE_" + layers[i].name + "_" + phase, shape).second) {
        fail("{}: line {}: layer \"{}\" has the name of an earlier layer; expected unique layer names to attach "
             "shapes to",
             source, layers[i].line, layers[i].name);
      }
    }
  }
  return [by_name, sink](std::size_t rank, const chakra::Trace& trace) {
    chakra::Trace shaped = trace;
    for (chakra::Node& node : shaped.nodes) {
      if (node.type() != ChakraProtoMsg::COMP_NODE) continue;
      const auto it = by_name->find(node.name());
      if (it != by_name->end()) chakra::add_shape_attributes(node, it->second);
    }
    sink(rank, shaped);
  };
}

}  // namespace chakrasim::tools::text
