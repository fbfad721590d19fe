// Building traces node by node, the way the Python ChakraNode + encode_message calls do:
// used by the built-in example, the generators and the tests.
//
//   TraceBuilder b("1.0.0");                         // GlobalMetadata.version
//   b.global_attr(make_string("schema", "..."));      // GlobalMetadata.attr
//   auto load = b.mem_load("load", 1024);             // MEM_LOAD_NODE, is_cpu_op, tensor_size
//   b.node(NodeType::kComp, "gemm")                   // any node type, then its fields
//       .data_deps({load.id()}).ctrl_deps({0}).duration_micros(5)
//       .inputs({"[1]", "[[2, 3]]", "['Tensor(float)']"})
//       .attr(make_double("scale", 0.5, "why"));
//   TraceBuilder rank1("1.0.0", b.ids());             // continues b's id counter
//   write_trace("t.0.et", b.trace());
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "chakra/graph.h"

namespace chakrasim::chakra {

// The next node id. Builders given the same counter number their nodes as one sequence, as
// the reference generator and text converter do across all rank files (docs/chakra-format.md §1.5).
struct IdCounter {
  std::uint64_t next = 0;
};

// The three free-form strings of Node.inputs / Node.outputs (IOInfo).
struct IoStrings {
  std::string values;
  std::string shapes;
  std::string types;
};

class TraceBuilder;

// A node being built: chained setters for the fields of the Python ChakraNode. It refers to the
// node by its position in the trace, so it stays valid while more nodes are added (a Node& does
// not: the node vector may grow), though not once the builder itself is moved.
class NodeRef {
 public:
  NodeRef(Trace& trace, std::size_t index) : trace_(&trace), index_(index) {}

  Node& node() const { return trace_->nodes[index_]; }
  // Implicit, so the typed makers below also serve callers that want the protobuf node.
  operator Node&() const { return node(); }  // NOLINT(google-explicit-constructor)
  std::uint64_t id() const { return node().id(); }

  // Appends parent ids, in the order given (duplicates are kept, as written).
  NodeRef& data_deps(std::initializer_list<std::uint64_t> ids);
  NodeRef& data_deps(const std::vector<std::uint64_t>& ids);
  NodeRef& ctrl_deps(std::initializer_list<std::uint64_t> ids);
  NodeRef& ctrl_deps(const std::vector<std::uint64_t>& ids);
  NodeRef& duration_micros(std::uint64_t micros);
  NodeRef& start_time_micros(std::uint64_t micros);
  NodeRef& inputs(const IoStrings& io);
  NodeRef& outputs(const IoStrings& io);
  // Appends an attribute (lookup is by first match, so a repeated name is shadowed).
  NodeRef& attr(Attribute attribute);
  NodeRef& is_cpu_op(bool cpu) { return attr(make_bool("is_cpu_op", cpu)); }

 private:
  Trace* trace_;
  std::size_t index_;
};

class TraceBuilder {
 public:
  explicit TraceBuilder(const std::string& version = "0.0.4") { trace_.metadata.set_version(version); }
  // A builder that takes its ids from `ids`, shared with other builders (see ids()).
  TraceBuilder(const std::string& version, std::shared_ptr<IdCounter> ids);

  // A node with the next id (ids start at 0, or where set_next_id says). Dependencies are data
  // deps.
  Node& add(NodeType type, const std::string& name, std::initializer_list<std::uint64_t> deps = {});

  // A GPU compute node replayed for `duration_micros`.
  Node& comp(const std::string& name, std::uint64_t duration_micros, std::initializer_list<std::uint64_t> deps = {});
  // A collective of `bytes` bytes per NPU (is_cpu_op false, comm_type, comm_size as int64).
  Node& collective(const std::string& name, CommType type, std::uint64_t bytes,
                   std::initializer_list<std::uint64_t> deps = {});

  // A node of any type (the raw value is written as is: it may be outside the enum) with the
  // next id and nothing else set.
  NodeRef node(NodeType type, const std::string& name);
  NodeRef node_of_raw_type(std::uint32_t raw_type, const std::string& name);
  // A METADATA_NODE with no attributes.
  NodeRef metadata_node(const std::string& name);
  // A remote-memory access of `tensor_bytes` (is_cpu_op false, tensor_size as uint64, as the
  // reference generator writes them).
  NodeRef mem_load(const std::string& name, std::uint64_t tensor_bytes);
  NodeRef mem_store(const std::string& name, std::uint64_t tensor_bytes);
  // Point-to-point messages with the attributes the simulator needs (is_cpu_op false, comm_dst
  // or comm_src and comm_tag as int32 like the MSCCL converter, comm_size as int64).
  NodeRef send(const std::string& name, std::int32_t dst, std::int32_t tag, std::uint64_t bytes);
  NodeRef recv(const std::string& name, std::int32_t src, std::int32_t tag, std::uint64_t bytes);
  // The node at `index` in writing order (0 = first added).
  NodeRef at(std::size_t index) { return NodeRef(trace_, index); }

  void set_version(const std::string& version) { trace_.metadata.set_version(version); }
  // Appends an attribute to the GlobalMetadata.
  void global_attr(Attribute attribute) { *trace_.metadata.add_attr() = std::move(attribute); }

  void set_next_id(std::uint64_t id) { ids_->next = id; }
  std::uint64_t next_id() const { return ids_->next; }
  // The id counter, to hand to another builder that continues the same sequence.
  std::shared_ptr<IdCounter> ids() const { return ids_; }

  const Trace& trace() const { return trace_; }
  Trace& trace() { return trace_; }

 private:
  NodeRef comm_node(NodeType type, const std::string& name);

  Trace trace_;
  std::shared_ptr<IdCounter> ids_ = std::make_shared<IdCounter>();
};

// Attribute builders for the oneof members chakra/attributes.h has no builder for, so every
// member can be written. A non-empty `doc` fills doc_string.
Attribute make_double(const std::string& name, double value, const std::string& doc = "");
Attribute make_float(const std::string& name, float value, const std::string& doc = "");
Attribute make_uint32(const std::string& name, std::uint32_t value, const std::string& doc = "");
Attribute make_sint32(const std::string& name, std::int32_t value, const std::string& doc = "");
Attribute make_sint64(const std::string& name, std::int64_t value, const std::string& doc = "");
Attribute make_fixed32(const std::string& name, std::uint32_t value, const std::string& doc = "");
Attribute make_fixed64(const std::string& name, std::uint64_t value, const std::string& doc = "");
Attribute make_sfixed32(const std::string& name, std::int32_t value, const std::string& doc = "");
Attribute make_sfixed64(const std::string& name, std::int64_t value, const std::string& doc = "");
Attribute make_bytes(const std::string& name, const std::string& value, const std::string& doc = "");

Attribute make_double_list(const std::string& name, const std::vector<double>& values);
Attribute make_float_list(const std::string& name, const std::vector<float>& values);
Attribute make_int32_list(const std::string& name, const std::vector<std::int32_t>& values);
Attribute make_int64_list(const std::string& name, const std::vector<std::int64_t>& values);
Attribute make_uint32_list(const std::string& name, const std::vector<std::uint32_t>& values);
Attribute make_uint64_list(const std::string& name, const std::vector<std::uint64_t>& values);
Attribute make_sint32_list(const std::string& name, const std::vector<std::int32_t>& values);
Attribute make_sint64_list(const std::string& name, const std::vector<std::int64_t>& values);
Attribute make_fixed32_list(const std::string& name, const std::vector<std::uint32_t>& values);
Attribute make_fixed64_list(const std::string& name, const std::vector<std::uint64_t>& values);
Attribute make_sfixed32_list(const std::string& name, const std::vector<std::int32_t>& values);
Attribute make_sfixed64_list(const std::string& name, const std::vector<std::int64_t>& values);
Attribute make_string_list(const std::string& name, const std::vector<std::string>& values);
Attribute make_bytes_list(const std::string& name, const std::vector<std::string>& values);

// The same attribute with doc_string set (for the members whose builders take no `doc`).
Attribute with_doc(Attribute attribute, const std::string& doc);

}  // namespace chakrasim::chakra
