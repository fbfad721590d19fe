// Building traces node by node, the way the Python ChakraNode + encode_message calls do:
// used by the built-in example, the generators and the tests.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "chakra/et_file.h"
#include "chakra/graph.h"

namespace chakrasim::chakra {

class TraceBuilder {
 public:
  explicit TraceBuilder(const std::string& version = "0.0.4") { trace_.metadata.set_version(version); }

  // A node with the next id (ids start at `first_id`, default 0). Dependencies are data deps.
  Node& add(NodeType type, const std::string& name, std::initializer_list<std::uint64_t> deps = {});

  // A GPU compute node replayed for `duration_micros`.
  Node& comp(const std::string& name, std::uint64_t duration_micros,
             std::initializer_list<std::uint64_t> deps = {});
  // A collective of `bytes` bytes per NPU (is_cpu_op false, comm_type, comm_size as int64).
  Node& collective(const std::string& name, CommType type, std::uint64_t bytes,
                   std::initializer_list<std::uint64_t> deps = {});

  void set_next_id(std::uint64_t id) { next_id_ = id; }
  std::uint64_t next_id() const { return next_id_; }
  const Trace& trace() const { return trace_; }
  Trace& trace() { return trace_; }

 private:
  Trace trace_;
  std::uint64_t next_id_ = 0;
};

}  // namespace chakrasim::chakra
