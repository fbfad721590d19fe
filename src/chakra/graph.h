// A rank's trace as the simulator walks it: nodes sorted by id in flat arrays, dependencies in
// compressed (CSR) child lists, and the attributes the models read decoded once into a small
// fixed record. Built from a Trace; the protobuf messages are not kept.
//
// Dependencies are the union of data_deps and ctrl_deps with duplicates collapsed, as the
// current Chakra feeder resolves them (docs/chakra-format.md §2). Building rejects, with an error
// naming the file and the node: duplicate ids, a dependency on an id not in the file, and
// dependency cycles.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "chakra/et_file.h"
#include "chakra/op_shape.h"

namespace chakrasim::chakra {

enum class NodeType : std::uint8_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
};
const char* node_type_name(std::uint32_t raw_type);

// The attributes the simulator reads from a node (the first of each name counts); any other is
// carried along by the tools and ignored.
std::span<const std::string_view> read_attribute_names();

// Collective types as stored in the `comm_type` attribute.
enum class CommType : std::int32_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
const char* comm_type_name(std::int64_t raw_type);
// The collective a person names, in any of the spellings in use: case, '_', '-' and spaces do
// not matter, so all_reduce, all-reduce, allreduce and ALL_REDUCE are one (nullopt if none).
std::optional<CommType> comm_type_from_name(std::string_view name);
// Every collective's snake_case name, "all_reduce" to "barrier", for help and error texts.
const char* comm_type_file_name(CommType type);

// A dependency cycle for a message, given its members in dependency order (each a parent of the
// next, the last a parent of the first) as id and name: "of 3 nodes: 2 \"a\" -> 4 \"b\" -> 3 \"c\" ->
// 2 \"a\"". A long cycle shows its first and last three members and how many lie between, so
// that a 1e6-node cycle is one readable line.
std::string describe_cycle(std::size_t length,
                           const std::function<std::pair<std::uint64_t, std::string_view>(std::size_t)>& member);

// Attributes the models read, decoded with the feeder's conversions. A `has_` bit says whether
// the attribute was present; absent values are 0.
struct OpAttrs {
  enum Present : std::uint16_t {
    kCommType = 1 << 0,
    kCommSize = 1 << 1,
    kCommSrc = 1 << 2,
    kCommDst = 1 << 3,
    kCommTag = 1 << 4,
    kNumOps = 1 << 5,
    kTensorSize = 1 << 6,
    kInvolvedDim = 1 << 7,
    kPgName = 1 << 8,
    kInputsValues = 1 << 9,
    kShape = 1 << 10,  // gemm or conv (and pass): shape indexes Graph::shape()
  };
  std::uint64_t comm_size = 0;
  std::uint64_t num_ops = 0;
  std::uint64_t tensor_size = 0;
  std::int64_t comm_type = 0;
  std::int64_t comm_src = 0;
  std::int64_t comm_dst = 0;
  std::int64_t comm_tag = 0;
  std::int32_t comm_priority = 0;
  std::uint32_t pg_name = 0;        // index into Graph::strings(); 0 is ""
  std::uint32_t involved_dims = 0;  // bit d set = dimension d involved (when present)
  std::uint32_t inputs_values = 0;  // METADATA nodes: index of inputs.values in Graph::strings()
  std::uint32_t shape = 0;          // index into Graph::shape() (when present)
  std::uint16_t present = 0;

  bool has(Present bit) const { return (present & bit) != 0; }
  bool operator==(const OpAttrs&) const = default;
};

class Graph {
 public:
  static constexpr std::uint32_t kNoAttrs = 0xffffffffu;

  // Decodes and validates `trace`; `source` names the file in errors.
  static Graph build(const Trace& trace, const std::string& source);
  // The same straight from a .et file's bytes (parse_trace's framing and errors), one Node
  // message at a time into one reused message: no trace is held. What loading a workload uses.
  static Graph parse(std::string_view bytes, const std::string& source);

  const std::string& source() const { return source_; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(s_->ids.size()); }

  std::uint64_t id(std::uint32_t i) const { return s_->ids[i]; }
  // The raw NodeType value (it may be outside the enum for traces from newer tools).
  std::uint32_t raw_type(std::uint32_t i) const { return s_->types[i]; }
  NodeType type(std::uint32_t i) const { return static_cast<NodeType>(s_->types[i]); }
  bool is_cpu_op(std::uint32_t i) const { return s_->cpu_op[i] != 0; }
  std::uint64_t duration_micros(std::uint32_t i) const { return s_->duration_micros[i]; }
  const std::string& name(std::uint32_t i) const { return s_->names[i]; }

  std::uint32_t parent_count(std::uint32_t i) const { return s_->parent_count[i]; }
  std::span<const std::uint32_t> children(std::uint32_t i) const {
    return {s_->children.data() + s_->child_begin[i], s_->children.data() + s_->child_begin[i + 1]};
  }

  bool has_attrs(std::uint32_t i) const { return s_->attr_index[i] != kNoAttrs; }
  // Decoded attributes; an all-absent record for nodes without any.
  const OpAttrs& attrs(std::uint32_t i) const {
    const std::uint32_t a = s_->attr_index[i];
    if (a == kNoAttrs) return empty_attrs_;
    return pool_ != nullptr ? pool_->records[refs_[a]] : attrs_[a];
  }
  const std::string& string(std::uint32_t index) const { return strings_[index]; }
  std::uint32_t string_count() const { return static_cast<std::uint32_t>(strings_.size()); }
  // The operation shapes the nodes name (OpAttrs::shape), each distinct one once.
  const OpShape& shape(std::uint32_t index) const { return shapes_[index]; }
  // A node's operation shape, or nullptr when it has none.
  const OpShape* op_shape(std::uint32_t node) const {
    const OpAttrs& a = attrs(node);
    return a.has(OpAttrs::kShape) ? &shapes_[a.shape] : nullptr;
  }
  // Whether `other` has this graph's structure (shared or equal): the same nodes, dependencies
  // and attribute places, whatever the attributes' values.
  bool same_structure(const Graph& other) const { return s_ == other.s_ || *s_ == *other.s_; }

  // Ranks of one job run traces that differ only in peers, tags and groups: everything but the
  // attributes' values and the strings (the structure) is the same. A hash of the structure,
  // and taking another graph's when equal (true then): such ranks keep one copy of it, and
  // walking them touches one copy's memory. Their attribute records, too, are mostly equal
  // (the same group at the same string index, the same sizes): a graph that takes a structure
  // also moves its records into a pool the structure's ranks share, each distinct record once,
  // and keeps an index per attribute place. Not thread-safe: callers sharing structures between
  // graphs serialise the calls.
  std::uint64_t structure_hash() const;
  bool share_structure(const Graph& other);
  // Equal for graphs sharing a structure (for counting them).
  const void* structure_id() const { return s_; }

 private:
  // What build() and parse() gather from each node, in the file's order (graph.cc).
  struct Collected;
  // Sorts the gathered nodes by id into the columns, turns the parent lists (data and control
  // dependencies, deduplicated) into the CSR children, and checks that no cycle remains.
  static Graph finish(Collected& collected);
  void check_acyclic(const std::vector<std::uint32_t>& parent_begin, const std::vector<std::uint32_t>& parents) const;

  struct AttrPool;
  struct Structure {
    std::vector<std::uint64_t> ids;
    std::vector<std::uint32_t> types;
    std::vector<std::uint8_t> cpu_op;
    std::vector<std::uint64_t> duration_micros;
    std::vector<std::string> names;
    std::vector<std::uint32_t> parent_count;
    std::vector<std::uint32_t> child_begin;
    std::vector<std::uint32_t> children;
    std::vector<std::uint32_t> attr_index;  // into attrs_: the same places in every rank sharing it
    // The attribute records of the ranks that took this structure from another (share_structure);
    // not part of what makes two structures equal.
    struct PoolSlot {
      std::shared_ptr<AttrPool> pool;
      bool operator==(const PoolSlot&) const { return true; }
    };
    mutable PoolSlot pool;
    bool operator==(const Structure&) const = default;
  };
  struct RecordHash {
    std::size_t operator()(const OpAttrs& a) const;
  };
  struct AttrPool {
    std::vector<OpAttrs> records;
    std::unordered_map<OpAttrs, std::uint32_t, RecordHash> index;  // records past the first sharer's
  };

  std::string source_;
  std::shared_ptr<const Structure> structure_ = std::make_shared<const Structure>();  // kept alive here
  const Structure* s_ = structure_.get();                                             // and read through here
  std::vector<OpAttrs> attrs_;  // this graph's records, unless they are in a pool:
  const AttrPool* pool_ = nullptr;
  std::vector<std::uint32_t> refs_;  // per attribute place, its record in pool_
  std::vector<std::string> strings_{""};
  std::vector<OpShape> shapes_;
  OpAttrs empty_attrs_;
};

}  // namespace chakrasim::chakra
