#include "chakra/trace_builder.h"

#include <utility>

#include "chakra/attributes.h"

namespace chakrasim::chakra {

namespace {

void set_io(ChakraProtoMsg::IOInfo& out, const IoStrings& io) {
  out.set_values(io.values);
  out.set_shapes(io.shapes);
  out.set_types(io.types);
}

// An attribute whose value a setter fills; doc_string only when given, as the reference
// generator writes it for some members and not others.
template <typename Setter>
Attribute scalar(const std::string& name, const std::string& doc, Setter&& set) {
  Attribute a;
  a.set_name(name);
  if (!doc.empty()) a.set_doc_string(doc);
  set(a);
  return a;
}

// A list attribute: `mutable_list` selects the oneof member, which is set even when `values`
// is empty (so the attribute still says which type it holds).
template <typename ListMessage, typename T>
Attribute list(const std::string& name, ListMessage* (Attribute::*mutable_list)(), const std::vector<T>& values) {
  Attribute a;
  a.set_name(name);
  ListMessage* out = (a.*mutable_list)();
  for (const T& v : values) out->add_values(v);
  return a;
}

}  // namespace

NodeRef& NodeRef::data_deps(std::initializer_list<std::uint64_t> ids) {
  for (std::uint64_t id : ids) node().add_data_deps(id);
  return *this;
}

NodeRef& NodeRef::data_deps(const std::vector<std::uint64_t>& ids) {
  for (std::uint64_t id : ids) node().add_data_deps(id);
  return *this;
}

NodeRef& NodeRef::ctrl_deps(std::initializer_list<std::uint64_t> ids) {
  for (std::uint64_t id : ids) node().add_ctrl_deps(id);
  return *this;
}

NodeRef& NodeRef::ctrl_deps(const std::vector<std::uint64_t>& ids) {
  for (std::uint64_t id : ids) node().add_ctrl_deps(id);
  return *this;
}

NodeRef& NodeRef::duration_micros(std::uint64_t micros) {
  node().set_duration_micros(micros);
  return *this;
}

NodeRef& NodeRef::start_time_micros(std::uint64_t micros) {
  node().set_start_time_micros(micros);
  return *this;
}

NodeRef& NodeRef::inputs(const IoStrings& io) {
  set_io(*node().mutable_inputs(), io);
  return *this;
}

NodeRef& NodeRef::outputs(const IoStrings& io) {
  set_io(*node().mutable_outputs(), io);
  return *this;
}

NodeRef& NodeRef::attr(Attribute attribute) {
  *node().add_attr() = std::move(attribute);
  return *this;
}

TraceBuilder::TraceBuilder(const std::string& version, std::shared_ptr<IdCounter> ids) : ids_(std::move(ids)) {
  trace_.metadata.set_version(version);
  if (!ids_) ids_ = std::make_shared<IdCounter>();
}

Node& TraceBuilder::add(NodeType type, const std::string& name, std::initializer_list<std::uint64_t> deps) {
  return node(type, name).data_deps(deps).node();
}

Node& TraceBuilder::comp(const std::string& name, std::uint64_t duration_micros,
                         std::initializer_list<std::uint64_t> deps) {
  return node(NodeType::kComp, name).data_deps(deps).duration_micros(duration_micros).is_cpu_op(false).node();
}

Node& TraceBuilder::collective(const std::string& name, CommType type, std::uint64_t bytes,
                               std::initializer_list<std::uint64_t> deps) {
  return node(NodeType::kCommColl, name)
      .data_deps(deps)
      .is_cpu_op(false)
      .attr(make_int64("comm_type", static_cast<std::int64_t>(type)))
      .attr(make_int64("comm_size", static_cast<std::int64_t>(bytes)))
      .node();
}

NodeRef TraceBuilder::node(NodeType type, const std::string& name) {
  return node_of_raw_type(static_cast<std::uint32_t>(type), name);
}

NodeRef TraceBuilder::node_of_raw_type(std::uint32_t raw_type, const std::string& name) {
  Node& n = trace_.nodes.emplace_back();
  n.set_id(ids_->next++);
  n.set_name(name);
  n.set_type(static_cast<ChakraProtoMsg::NodeType>(raw_type));
  return NodeRef(trace_, trace_.nodes.size() - 1);
}

NodeRef TraceBuilder::metadata_node(const std::string& name) { return node(NodeType::kMetadata, name); }

NodeRef TraceBuilder::mem_load(const std::string& name, std::uint64_t tensor_bytes) {
  return node(NodeType::kMemLoad, name).is_cpu_op(false).attr(make_uint64("tensor_size", tensor_bytes));
}

NodeRef TraceBuilder::mem_store(const std::string& name, std::uint64_t tensor_bytes) {
  return node(NodeType::kMemStore, name).is_cpu_op(false).attr(make_uint64("tensor_size", tensor_bytes));
}

NodeRef TraceBuilder::send(const std::string& name, std::int32_t dst, std::int32_t tag, std::uint64_t bytes) {
  return node(NodeType::kCommSend, name)
      .is_cpu_op(false)
      .attr(make_int32("comm_dst", dst))
      .attr(make_int32("comm_tag", tag))
      .attr(make_int64("comm_size", static_cast<std::int64_t>(bytes)));
}

NodeRef TraceBuilder::recv(const std::string& name, std::int32_t src, std::int32_t tag, std::uint64_t bytes) {
  return node(NodeType::kCommRecv, name)
      .is_cpu_op(false)
      .attr(make_int32("comm_src", src))
      .attr(make_int32("comm_tag", tag))
      .attr(make_int64("comm_size", static_cast<std::int64_t>(bytes)));
}

Attribute make_double(const std::string& name, double value, const std::string& doc) {
  return scalar(name, doc, [&](Attribute& a) { a.set_double_val(value); });
}
Attribute make_float(const std::string& name, float value, const std::string& doc) {
  return scalar(name, doc, [&](Attribute& a) { a.set_float_val(value); });
}
Attribute make_uint32(const std::string& name, std::uint32_t value, const std::string& doc) {
  return scalar(name, doc, [&](Attribute& a) { a.set_uint32_val(value); });
}
Attribute make_sint32(const std::string& name, std::int32_t value, const std::string& doc) {
  return scalar(name, doc, [&](Attribute& a) { a.set_sint32_val(value); });
}
Attribute make_sint64(const std::string& name, std::int64_t value, const std::string& doc) {
  return scalar(name, doc, [&](Attribute& a) { a.set_sint64_val(value); });
}
Attribute make_fixed32(const std::string& name, std::uint32_t value, const std::string& doc) {
  return scalar(name, doc, [&](Attribute& a) { a.set_fixed32_val(value); });
}
Attribute make_fixed64(const std::string& name, std::uint64_t value, const std::string& doc) {
  return scalar(name, doc, [&](Attribute& a) { a.set_fixed64_val(value); });
}
Attribute make_sfixed32(const std::string& name, std::int32_t value, const std::string& doc) {
  return scalar(name, doc, [&](Attribute& a) { a.set_sfixed32_val(value); });
}
Attribute make_sfixed64(const std::string& name, std::int64_t value, const std::string& doc) {
  return scalar(name, doc, [&](Attribute& a) { a.set_sfixed64_val(value); });
}
Attribute make_bytes(const std::string& name, const std::string& value, const std::string& doc) {
  return scalar(name, doc, [&](Attribute& a) { a.set_bytes_val(value); });
}

Attribute make_double_list(const std::string& name, const std::vector<double>& values) {
  return list(name, &Attribute::mutable_double_list, values);
}
Attribute make_float_list(const std::string& name, const std::vector<float>& values) {
  return list(name, &Attribute::mutable_float_list, values);
}
Attribute make_int32_list(const std::string& name, const std::vector<std::int32_t>& values) {
  return list(name, &Attribute::mutable_int32_list, values);
}
Attribute make_int64_list(const std::string& name, const std::vector<std::int64_t>& values) {
  return list(name, &Attribute::mutable_int64_list, values);
}
Attribute make_uint32_list(const std::string& name, const std::vector<std::uint32_t>& values) {
  return list(name, &Attribute::mutable_uint32_list, values);
}
Attribute make_uint64_list(const std::string& name, const std::vector<std::uint64_t>& values) {
  return list(name, &Attribute::mutable_uint64_list, values);
}
Attribute make_sint32_list(const std::string& name, const std::vector<std::int32_t>& values) {
  return list(name, &Attribute::mutable_sint32_list, values);
}
Attribute make_sint64_list(const std::string& name, const std::vector<std::int64_t>& values) {
  return list(name, &Attribute::mutable_sint64_list, values);
}
Attribute make_fixed32_list(const std::string& name, const std::vector<std::uint32_t>& values) {
  return list(name, &Attribute::mutable_fixed32_list, values);
}
Attribute make_fixed64_list(const std::string& name, const std::vector<std::uint64_t>& values) {
  return list(name, &Attribute::mutable_fixed64_list, values);
}
Attribute make_sfixed32_list(const std::string& name, const std::vector<std::int32_t>& values) {
  return list(name, &Attribute::mutable_sfixed32_list, values);
}
Attribute make_sfixed64_list(const std::string& name, const std::vector<std::int64_t>& values) {
  return list(name, &Attribute::mutable_sfixed64_list, values);
}
Attribute make_string_list(const std::string& name, const std::vector<std::string>& values) {
  return list(name, &Attribute::mutable_string_list, values);
}
Attribute make_bytes_list(const std::string& name, const std::vector<std::string>& values) {
  return list(name, &Attribute::mutable_bytes_list, values);
}

Attribute with_doc(Attribute attribute, const std::string& doc) {
  attribute.set_doc_string(doc);
  return attribute;
}

}  // namespace chakrasim::chakra
