#include "generate/llm/llm_stage.h"

#include <cmath>

#include "chakra/attributes.h"
#include "chakra/op_shape.h"

namespace chakrasim::tools::llm {

StageBuilder::StageBuilder(const GpuSpec& gpu, const Layout& layout, NodeOptions options)
    : gpu_(gpu), layout_(layout), options_(options) {
  last_coll_.fill(kNone);
}

chakra::Node& StageBuilder::add_node(chakra::NodeType type, const std::string& name, std::initializer_list<Ref> needs,
                                     Ref extra) {
  chakra::Node& node = builder_.add(type, name);
  auto depend = [&](Ref r) {
    if (r == kNone) return;
    for (std::uint64_t d : node.data_deps()) {
      if (d == r) return;
    }
    node.add_data_deps(r);
  };
  for (Ref r : needs) depend(r);
  depend(extra);
  out_.late.emplace_back();
  out_.stats.emplace_back();
  return node;
}

void StageBuilder::compute(const Op& op, std::initializer_list<Ref> needs) {
  bool waits = false;
  for (Ref r : needs) waits = waits || r != kNone;
  const bool shaped = options_.op_shapes && op.kind == OpKind::kGemm;
  if (pending_ && (!options_.fuse || waits || shaped || pending_gemm_)) flush();
  if (!pending_) {
    pending_ = true;
    pending_name_ = scope_ + "." + op.part;
    pending_needs_.assign(needs.begin(), needs.end());
    pending_stats_ = NodeStats{};
    pending_ns_ = 0;
    pending_ops_ = 0;
    if (shaped) pending_gemm_ = op;
  }
  const double ns = op_time_ns(gpu_, op.matmul_flops + op.other_ops, op.bytes);
  pending_stats_.matmul_flops += op.matmul_flops;
  pending_stats_.other_ops += op.other_ops;
  pending_stats_.bytes += op.bytes;
  pending_stats_.ns_by_kind[static_cast<std::size_t>(op.kind)] += ns;
  pending_ns_ += ns;
  ++pending_ops_;
}

void StageBuilder::flush() {
  if (!pending_) return;
  pending_ = false;
  // A fused node is named after its first op, with "+" for the rest ("F3.L12.qkv+"): names of
  // up to 15 characters need no allocation of their own.
  std::string name = pending_name_;
  if (pending_ops_ > 1) name += "+";
  chakra::Node& node = builder_.add(chakra::NodeType::kComp, name);
  for (Ref r : pending_needs_) {
    if (r != kNone) node.add_data_deps(r);
  }
  if (last_compute_ != kNone) node.add_data_deps(last_compute_);
  // Whole microseconds, as the format stores them; at least 1 so that nothing is free.
  const auto micros = static_cast<std::uint64_t>(std::llround(pending_ns_ / 1000.0));
  pending_stats_.duration_micros = micros == 0 ? 1 : micros;
  node.set_duration_micros(pending_stats_.duration_micros);
  *node.add_attr() =
      chakra::make_int64("num_ops", std::llround(pending_stats_.matmul_flops + pending_stats_.other_ops));
  // At least one byte: the roofline skips a node whose tensor_size is 0.
  const auto bytes = static_cast<std::uint64_t>(std::llround(pending_stats_.bytes));
  *node.add_attr() = chakra::make_uint64("tensor_size", bytes == 0 ? 1 : bytes);
  if (pending_gemm_) {
    add_shape(node, *pending_gemm_);
    pending_gemm_.reset();
  }
  pending_stats_.role = NodeRole::kCompute;
  out_.late.emplace_back();
  out_.stats.push_back(pending_stats_);
  last_compute_ = node.id();
}

// The gemm attribute gives the forward layer: the input gradient ran M x K with inner N, the
// weight gradient K x N with inner M (chakra/op_shape.h).
void StageBuilder::add_shape(chakra::Node& node, const Op& op) {
  using Pass = chakra::OpShape::Pass;
  const auto [rows, cols, inner] = op.gemm_mnk;
  std::array<double, 3> forward{rows, cols, inner};  // M, N, K
  if (op.pass == Pass::kInputGradient) forward = {rows, inner, cols};
  if (op.pass == Pass::kWeightGradient) forward = {inner, cols, rows};
  chakra::OpShape shape;
  shape.pass = op.pass;
  for (std::size_t i = 0; i < 3; ++i) shape.dims[i] = static_cast<std::uint64_t>(std::max(1.0, std::round(forward[i])));
  shape.dims[3] = 1;
  chakra::add_shape_attributes(node, shape);
}

StageBuilder::Ref StageBuilder::last_compute() {
  flush();
  return last_compute_;
}

StageBuilder::Ref StageBuilder::collective(GroupKind group, chakra::CommType type, std::uint64_t bytes,
                                           const char* part, std::initializer_list<Ref> needs) {
  const auto g = static_cast<std::size_t>(group);
  chakra::Node& node = add_node(chakra::NodeType::kCommColl, scope_ + "." + part, needs, last_coll_[g]);
  *node.add_attr() = chakra::make_int64("comm_type", static_cast<std::int64_t>(type));
  *node.add_attr() = chakra::make_int64("comm_size", static_cast<std::int64_t>(bytes));
  if (layout_.group_size(group) != layout_.ranks()) {
    out_.late.back().push_back({LateField::kPgName, static_cast<std::int32_t>(group)});
  }
  NodeStats& s = out_.stats.back();
  s.role = NodeRole::kCollective;
  s.group = group;
  s.comm = type;
  s.comm_bytes = bytes;
  last_coll_[g] = node.id();
  return node.id();
}

StageBuilder::Ref StageBuilder::send(std::int64_t stage_delta, std::uint64_t tag, std::uint64_t bytes, const char* part,
                                     std::initializer_list<Ref> needs) {
  chakra::Node& node = add_node(chakra::NodeType::kCommSend, scope_ + "." + part, needs, kNone);
  *node.add_attr() = chakra::make_int32("comm_tag", static_cast<std::int32_t>(tag));
  *node.add_attr() = chakra::make_int64("comm_size", static_cast<std::int64_t>(bytes));
  out_.late.back() = {{LateField::kCommSrc, 0}, {LateField::kCommDst, static_cast<std::int32_t>(stage_delta)}};
  NodeStats& s = out_.stats.back();
  s.role = NodeRole::kSend;
  s.group = GroupKind::kPp;
  s.comm_bytes = bytes;
  return node.id();
}

StageBuilder::Ref StageBuilder::recv(std::int64_t stage_delta, std::uint64_t tag, std::uint64_t bytes, const char* part,
                                     std::initializer_list<Ref> needs) {
  chakra::Node& node = add_node(chakra::NodeType::kCommRecv, scope_ + "." + part, needs, kNone);
  *node.add_attr() = chakra::make_int32("comm_tag", static_cast<std::int32_t>(tag));
  *node.add_attr() = chakra::make_int64("comm_size", static_cast<std::int64_t>(bytes));
  out_.late.back() = {{LateField::kCommSrc, static_cast<std::int32_t>(stage_delta)}, {LateField::kCommDst, 0}};
  NodeStats& s = out_.stats.back();
  s.role = NodeRole::kRecv;
  s.group = GroupKind::kPp;
  s.comm_bytes = bytes;
  return node.id();
}

StageTemplate StageBuilder::finish(std::uint64_t stage) {
  flush();
  out_.stage = stage;
  out_.trace = std::move(builder_.trace());
  return std::move(out_);
}

}  // namespace chakrasim::tools::llm
