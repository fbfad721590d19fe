#include "chakra/trace_builder.h"

#include "chakra/attributes.h"

namespace chakrasim::chakra {

Node& TraceBuilder::add(NodeType type, const std::string& name,
                        std::initializer_list<std::uint64_t> deps) {
  Node& node = trace_.nodes.emplace_back();
  node.set_id(next_id_++);
  node.set_name(name);
  node.set_type(static_cast<ChakraProtoMsg::NodeType>(type));
  for (std::uint64_t d : deps) node.add_data_deps(d);
  return node;
}

Node& TraceBuilder::comp(const std::string& name, std::uint64_t duration_micros,
                         std::initializer_list<std::uint64_t> deps) {
  Node& node = add(NodeType::kComp, name, deps);
  node.set_duration_micros(duration_micros);
  *node.add_attr() = make_bool("is_cpu_op", false);
  return node;
}

Node& TraceBuilder::collective(const std::string& name, CommType type, std::uint64_t bytes,
                               std::initializer_list<std::uint64_t> deps) {
  Node& node = add(NodeType::kCommColl, name, deps);
  *node.add_attr() = make_bool("is_cpu_op", false);
  *node.add_attr() = make_int64("comm_type", static_cast<std::int64_t>(type));
  *node.add_attr() = make_int64("comm_size", static_cast<std::int64_t>(bytes));
  return node;
}

}  // namespace chakrasim::chakra
