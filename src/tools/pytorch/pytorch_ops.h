// The ops of a PyTorch execution trace (a host ET or trace_link's ET+) as the PyTorch converter
// reads them: the metadata checked, each node's fields checked and decoded, and each op linked
// to its caller as the reference links them (pytorch_converter.cc turns them into Chakra nodes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chakra/et_file.h"

namespace chakrasim::tools::pytorch {

// Key order is kept, as Python's json.load keeps it, so objects print in the input's order.
using Json = nlohmann::ordered_json;

// The integer attributes every converted node carries, in the order they are written.
inline constexpr const char* kIntAttrs[] = {"rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid"};
inline constexpr std::size_t kIntAttrCount = std::size(kIntAttrs);
inline constexpr const char* kAttrList = "rf_id, fw_parent, seq_id, scope, tid, fw_tid and op_schema";

// An op of the input: a CPU op, a GPU kernel (it has "cat"), or a process-group record.
enum class OpKind { kCpu, kGpu, kMetadata };

struct Op {
  const Json* json = nullptr;
  std::uint64_t id = 0;
  std::string name;
  OpKind kind = OpKind::kCpu;
  bool gpu = false;                   // has "cat" (a process-group record can too)
  std::optional<std::size_t> parent;  // the caller (ctrl_deps), when it is in the trace
  std::uint64_t duration_micros = 0;
  std::optional<double> ts;
  std::uint64_t inter_thread_dep = 0;  // 0 is none, for the reference too
  std::vector<std::uint64_t> sync_deps;
  std::optional<std::int64_t> stream;
  std::optional<std::int64_t> int_attrs[kIntAttrCount];
  std::optional<std::string> op_schema;
  std::string pg_name;
  std::vector<std::size_t> children;              // every callee, ascending id
  std::vector<std::size_t> gpu_children;          // kernels it launched, in file order
  std::optional<std::size_t> record_param_comms;  // its last record_param_comms callee
};

bool contains(const std::string& text, const char* word);
std::optional<std::int64_t> as_int64(const Json& v);
std::optional<std::uint64_t> as_uint64(const Json& v);
Json parse_json(std::string_view text, const std::string& source);

// Throws Error "SOURCE: node ID ("NAME"): WHAT".
[[noreturn]] void fail_node(const std::string& source, const Op& op, const std::string& what);

// Checks the top level (an object with a supported schema, pid, time, start_ts, finish_ts) and
// writes those five as the GlobalMetadata's attributes, in that order.
void read_metadata(const Json& root, const std::string& source, chakra::GlobalMetadata& gm);

// The ops of "nodes", in file order, each linked to its caller when that is in the trace. The
// returned ops point into `root`, which must outlive them.
std::vector<Op> read_ops(const Json& root, const std::string& source);

}  // namespace chakrasim::tools::pytorch
