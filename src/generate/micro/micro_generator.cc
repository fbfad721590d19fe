#include "generate/micro/micro_generator.h"

#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <system_error>

#include "chakra/trace_builder.h"
#include "core/error.h"
#include "core/resources.h"

namespace chakrasim::tools {

using chakra::CommType;
using chakra::NodeType;
using chakra::TraceBuilder;

namespace {

constexpr std::size_t kReferenceFamilies = 15;  // the 14 and send_recv_ring
constexpr std::uint64_t kMaxAttrBytes = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

// `families` families of one trace per NPU are built in memory before any is written.
void require_npus(std::size_t npus, std::size_t families) {
  if (npus == 0) fail("--npus is 0; expected at least 1 NPU");
  // send_recv_ring writes ranks as int32 peers (comm_src, comm_dst).
  if (npus > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    fail("--npus is {}; expected at most {}", npus, std::numeric_limits<std::int32_t>::max());
  }
  constexpr std::uint64_t kBytesPerRankTrace = 1024;  // a trace of a few small nodes, as built
  require_memory(std::uint64_t{npus} * families * kBytesPerRankTrace,
                 fmt::format("--npus {}: {} famil{} of {} traces", npus, families, families == 1 ? "y" : "ies", npus));
}

void require_fits(const char* flag, std::uint64_t bytes) {
  if (bytes > kMaxAttrBytes) {
    fail("{} is {}; expected at most {} (the attribute is an int64)", flag, bytes, kMaxAttrBytes);
  }
}

// A family whose ranks all take their node ids from `ids`, rank after rank.
TraceFamily family(const std::string& name, std::size_t npus, const std::string& version,
                   const std::shared_ptr<chakra::IdCounter>& ids,
                   const std::function<void(TraceBuilder&, std::size_t rank)>& fill) {
  TraceFamily out{name, {}};
  out.ranks.reserve(npus);
  for (std::size_t rank = 0; rank < npus; ++rank) {
    TraceBuilder b(version, ids);
    fill(b, rank);
    out.ranks.push_back(std::move(b.trace()));
  }
  return out;
}

// One attribute of every oneof member, with the values (and the doc_strings, present for some
// members only) of the reference generator: a test of every attribute codec.
void all_attribute_types(chakra::NodeRef node) {
  using namespace chakra;
  std::vector<std::string> strings;
  for (int v = 12345; v <= 12354; ++v) strings.push_back(std::to_string(v));
  std::vector<bool> bools;
  for (int i = 0; i < 10; ++i) bools.push_back(i % 2 == 0);
  node.attr(make_double("double", 1.2345, "double"))
      .attr(make_double_list("double_list", {1.2345, 2.3456}))
      .attr(make_float("float", 1.2345f, "float"))
      .attr(make_float_list("float_list", {1.2345f, 2.3456f}))
      .attr(with_doc(make_int32("int32", 12345), "int32"))
      .attr(make_int32_list("int32_list", {12345, 23456}))
      .attr(with_doc(make_int64("int64", 9876543210), "int64"))
      .attr(make_int64_list("int64_list", {9876543210, 1234567890}))
      .attr(make_uint32("uint32", 12345, "uint32"))
      .attr(make_uint32_list("uint32_list", {12345, 23456}))
      .attr(with_doc(make_uint64("uint64", 9876543210), "uint64"))
      .attr(make_uint64_list("uint64_list", {9876543210, 1234567890}))
      .attr(make_sint32("sint32", -12345, "sint32"))
      .attr(make_sint32_list("sint32_list", {12345, -23456}))
      .attr(make_sint64("sint64", -9876543210, "sint64"))
      .attr(make_sint64_list("sint64_list", {9876543210, -1234567890}))
      .attr(make_fixed32("fixed32", 12345))
      .attr(make_fixed32_list("fixed32_list", {12345, 23456}))
      .attr(make_fixed64("fixed64", 9876543210))
      .attr(make_fixed64_list("fixed64_list", {9876543210, 1234567890}))
      .attr(make_sfixed32("sfixed32", -12345))
      .attr(make_sfixed32_list("sfixed32_list", {12345, -23456}))
      .attr(make_sfixed64("sfixed64", -9876543210))
      .attr(make_sfixed64_list("sfixed64_list", {9876543210, -1234567890}))
      .attr(with_doc(make_bool("bool", true), "bool"))
      .attr(make_bool_list("bool_list", bools))
      .attr(with_doc(make_string("string", "12345"), "string"))
      .attr(make_string_list("string_list", strings))
      .attr(make_bytes("bytes", "12345"))
      .attr(make_bytes_list("bytes_list", strings));
}

// The reference's send and receive nodes: is_cpu_op and tensor_size only.
void tensor_only(TraceBuilder& b, NodeType type, const std::string& name, std::uint64_t tensor_bytes) {
  b.node(type, name).is_cpu_op(false).attr(chakra::make_uint64("tensor_size", tensor_bytes));
}

}  // namespace

std::vector<TraceFamily> reference_micro_families(const MicroOptions& o) {
  require_npus(o.npus, kReferenceFamilies);
  require_fits("--comm-size", o.comm_bytes);
  const auto ids = std::make_shared<chakra::IdCounter>();
  std::vector<TraceFamily> out;
  auto add = [&](const std::string& name, const std::function<void(TraceBuilder&, std::size_t)>& fill) {
    out.push_back(family(name, o.npus, o.version, ids, fill));
  };
  add("one_metadata_node_all_types",
      [](TraceBuilder& b, std::size_t) { all_attribute_types(b.metadata_node("METADATA_NODE")); });
  add("one_remote_mem_load_node", [&](TraceBuilder& b, std::size_t) { b.mem_load("MEM_LOAD_NODE", o.tensor_bytes); });
  add("one_remote_mem_store_node",
      [&](TraceBuilder& b, std::size_t) { b.mem_store("MEM_STORE_NODE", o.tensor_bytes); });
  add("one_comp_node", [&](TraceBuilder& b, std::size_t) { b.comp("COMP_NODE", o.runtime_micros); });
  add("two_comp_nodes_independent", [&](TraceBuilder& b, std::size_t) {
    b.comp("COMP_NODE", o.runtime_micros);
    b.comp("COMP_NODE", o.runtime_micros);
  });
  add("two_comp_nodes_dependent", [&](TraceBuilder& b, std::size_t) {
    const std::uint64_t first = b.comp("COMP_NODE", o.runtime_micros).id();
    b.comp("COMP_NODE", o.runtime_micros, {first});
  });
  // The reference's collective order; a barrier moves no data.
  const std::pair<const char*, CommType> collectives[] = {{"ALL_REDUCE", CommType::kAllReduce},
                                                          {"ALL_TO_ALL", CommType::kAllToAll},
                                                          {"ALL_GATHER", CommType::kAllGather},
                                                          {"REDUCE_SCATTER", CommType::kReduceScatter},
                                                          {"BROADCAST", CommType::kBroadcast},
                                                          {"BARRIER", CommType::kBarrier}};
  for (const auto& collective : collectives) {
    const std::uint64_t bytes = collective.second == CommType::kBarrier ? 0 : o.comm_bytes;
    add(collective.first,
        [&](TraceBuilder& b, std::size_t) { b.collective(collective.first, collective.second, bytes); });
  }
  add("one_comm_send_node",
      [&](TraceBuilder& b, std::size_t) { tensor_only(b, NodeType::kCommSend, "COMM_SEND_NODE", o.tensor_bytes); });
  add("one_comm_recv_node",
      [&](TraceBuilder& b, std::size_t) { tensor_only(b, NodeType::kCommRecv, "COMM_RECV_NODE", o.tensor_bytes); });
  if (o.npus > 1) {
    const auto n = static_cast<std::int32_t>(o.npus);
    add("send_recv_ring", [&](TraceBuilder& b, std::size_t rank) {
      const auto r = static_cast<std::int32_t>(rank);
      b.send("COMM_SEND_NODE", (r + 1) % n, 0, o.comm_bytes).attr(chakra::make_int32("comm_src", r));
      b.recv("COMM_RECV_NODE", (r + n - 1) % n, 0, o.comm_bytes).attr(chakra::make_int32("comm_dst", r));
    });
  }
  return out;
}

const std::vector<std::string>& benchmark_collectives() {
  static const std::vector<std::string> kNames = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
  return kNames;
}

TraceFamily collective_benchmark(const CollectiveBenchOptions& o) {
  const std::optional<CommType> type = chakra::comm_type_from_name(o.collective);
  if (!type) {
    fail("--collective is \"{}\"; expected a collective such as all_reduce, all_gather, reduce_scatter, "
         "all_to_all, broadcast, reduce, gather, scatter or barrier (all-reduce and allreduce are the same)",
         o.collective);
  }
  require_npus(o.npus, 1);
  if (o.size_bytes == 0 && o.size_mib > (kMaxAttrBytes >> 20)) {
    fail("--coll-size-mb is {}; expected at most {} (comm_size is an int64 of bytes)", o.size_mib, kMaxAttrBytes >> 20);
  }
  if (o.size_bytes > kMaxAttrBytes) {
    fail("--size is {} bytes; expected at most {} (comm_size is an int64 of bytes)", o.size_bytes, kMaxAttrBytes);
  }
  const std::uint64_t bytes = o.size_bytes != 0 ? o.size_bytes : o.size_mib << 20;
  const std::string name = chakra::comm_type_file_name(*type);
  const std::string size = bytes % (1u << 20) == 0 ? fmt::format("{}MB", bytes >> 20) : fmt::format("{}B", bytes);
  const std::string node_name = fmt::format("{}_{}npus_{}", name, o.npus, size);
  return family(name, o.npus, o.version, std::make_shared<chakra::IdCounter>(),
                [&](TraceBuilder& b, std::size_t) { b.collective(node_name, *type, bytes); });
}

std::size_t write_families(const std::vector<TraceFamily>& families, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("{}: cannot create the output directory: {}", dir, ec.message());
  std::uint64_t planned_files = 0;
  double planned_bytes = 0;
  for (const TraceFamily& f : families) {
    planned_files += f.ranks.size();
    for (const chakra::Trace& t : f.ranks) planned_bytes += static_cast<double>(chakra::serialized_size(t));
  }
  require_output_space(dir, planned_files, planned_bytes, fmt::format("generate micro ({} files)", planned_files));
  std::size_t files = 0;
  for (const TraceFamily& f : families) {
    const std::string prefix = (std::filesystem::path(dir) / f.name).string();
    for (std::size_t rank = 0; rank < f.ranks.size(); ++rank) {
      chakra::write_trace(chakra::rank_path(prefix, rank), f.ranks[rank]);
      ++files;
    }
  }
  return files;
}

}  // namespace chakrasim::tools
