// A pipeline stage's trace, built once for every rank of the stage: the ranks of one stage run
// the same nodes and differ only in their communicator ids (pg_name) and their pipeline peers
// (comm_src, comm_dst). Those per-rank attributes are kept aside as "late" attributes, appended
// last to each node when a rank's file is written (llm_writer.h).
//
// StageBuilder emits the nodes. Compute ops run in program order on one GPU stream: each compute
// node depends on the one before. Consecutive compute ops that nothing else waits on between
// them are fused into one node (unless fusion is off): its num_ops and tensor_size are the sums,
// its duration the sum of the ops' roofline times. A collective depends on what it needs and on
// the previous collective of its group kind, as NCCL runs one communicator's work in order.
// No node carries is_cpu_op: every node is a GPU node, the attribute's default, and each
// attribute costs the simulator time to read.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "chakra/graph.h"
#include "chakra/trace_builder.h"
#include "generate/llm/llm_gpu.h"
#include "generate/llm/llm_layout.h"

namespace chakrasim::tools::llm {

enum class OpKind : std::uint8_t { kGemm, kAttention, kElementwise, kOptimizer };
inline constexpr std::size_t kOpKinds = 4;

// One kernel's work on one rank.
struct Op {
  const char* part = "";  // short name: "qkv", "fc1.dg", ...
  OpKind kind = OpKind::kElementwise;
  double matmul_flops = 0;  // matrix products, 2 per multiply-add (what MFU counts)
  double other_ops = 0;     // element-wise arithmetic
  double bytes = 0;         // HBM traffic
  // A GEMM's rows, columns and inner size as it runs (0 for other kinds), and which pass of its
  // layer it is: with --op-shapes the node gets the gemm and pass attributes.
  std::array<double, 3> gemm_mnk{};
  chakra::OpShape::Pass pass = chakra::OpShape::Pass::kForward;
};

// How compute ops become nodes.
struct NodeOptions {
  bool fuse = true;        // one node per run of compute ops (else one node per op)
  bool op_shapes = false;  // every GEMM a node of its own, with its gemm and pass attributes
};

enum class NodeRole : std::uint8_t { kCompute, kCollective, kSend, kRecv };

// What a node is, for the summary.
struct NodeStats {
  NodeRole role = NodeRole::kCompute;
  GroupKind group = GroupKind::kTp;  // collectives
  chakra::CommType comm = chakra::CommType::kAllReduce;
  std::uint64_t comm_bytes = 0;  // comm_size
  double matmul_flops = 0, other_ops = 0, bytes = 0;
  std::uint64_t duration_micros = 0;
  std::array<double, kOpKinds> ns_by_kind{};  // unrounded roofline time of its ops, by kind
};

enum class LateField : std::uint8_t { kPgName, kCommSrc, kCommDst };
// A per-rank attribute: pg_name of the rank's group of kind `code`, or comm_src / comm_dst the
// rank `code` stages away (0: the rank itself).
struct LateAttr {
  LateField field = LateField::kPgName;
  std::int32_t code = 0;
  bool operator==(const LateAttr&) const = default;
};

struct StageTemplate {
  std::uint64_t stage = 0;
  chakra::Trace trace;                      // nodes without their late attributes
  std::vector<std::vector<LateAttr>> late;  // per node
  std::vector<NodeStats> stats;             // per node
  std::uint64_t peak_in_flight = 0;         // chunk-microbatches of stored activations at the peak
};

class StageBuilder {
 public:
  using Ref = std::uint64_t;  // a node id
  static constexpr Ref kNone = std::numeric_limits<Ref>::max();

  StageBuilder(const GpuSpec& gpu, const Layout& layout, NodeOptions options);

  // Names of the nodes that follow start with `scope` (e.g. "F3.L12").
  void set_scope(std::string scope) { scope_ = std::move(scope); }

  // A compute op after every compute op before it and after `needs` (kNone entries ignored).
  void compute(const Op& op, std::initializer_list<Ref> needs = {});
  // The node holding the compute ops so far (kNone before the first); later ops start a new one.
  Ref last_compute();

  // A collective of `bytes` (comm_size) on the rank's group of `group`; a group of every rank
  // needs no pg_name. The group kind must be active (more than one member).
  Ref collective(GroupKind group, chakra::CommType type, std::uint64_t bytes, const char* part,
                 std::initializer_list<Ref> needs);
  // Point-to-point with the rank `stage_delta` stages away.
  Ref send(std::int64_t stage_delta, std::uint64_t tag, std::uint64_t bytes, const char* part,
           std::initializer_list<Ref> needs);
  Ref recv(std::int64_t stage_delta, std::uint64_t tag, std::uint64_t bytes, const char* part,
           std::initializer_list<Ref> needs);

  // The last collective of `group` so far (kNone if none).
  Ref last_collective(GroupKind group) const { return last_coll_[static_cast<std::size_t>(group)]; }

  StageTemplate finish(std::uint64_t stage);

 private:
  chakra::Node& add_node(chakra::NodeType type, const std::string& name, std::initializer_list<Ref> needs, Ref extra);
  void flush();
  static void add_shape(chakra::Node& node, const Op& op);

  const GpuSpec& gpu_;
  const Layout& layout_;
  NodeOptions options_;
  chakra::TraceBuilder builder_;
  StageTemplate out_;
  std::string scope_;
  Ref last_compute_ = kNone;
  std::array<Ref, kGroupKinds> last_coll_;

  // The compute ops not yet written as a node.
  bool pending_ = false;
  std::string pending_name_;
  std::vector<Ref> pending_needs_;
  NodeStats pending_stats_;
  double pending_ns_ = 0;
  std::uint32_t pending_ops_ = 0;
  std::optional<Op> pending_gemm_;  // with op_shapes: the GEMM the pending node is
};

}  // namespace chakrasim::tools::llm
