// A readable summary of Chakra ETs and every problem in them: node counts, time by node type,
// communication volume by collective and by communicator group, the critical path, and what
// would stop the simulator or make a run hang. Unlike chakra::Graph::build, which stops at the
// first problem, it collects them all.
//
// Problems are errors (the simulator rejects the trace, or a run cannot finish) or warnings
// (legal, but likely a mistake or a trap for other tools). Checks, per file: unreadable file,
// duplicate ids, dependencies on ids not in the file or on the node itself, the same parent
// listed twice, cycles (each strongly connected set), unknown node types, INVALID nodes,
// attributes of a type the simulator cannot read (docs/chakra-format.md §1.6, chakra/attributes.h),
// attributes without a value or repeated, what each node type needs (comm_type, a supported
// collective, comm_size, pg_name a group id, comm_src/dst/tag, tensor_size), empty traces.
// Across the files of a prefix: missing rank files, peers outside 0..N-1 or the rank itself,
// ranks whose collectives (in id order, per group) differ, receives no rank sends and sends no
// rank receives (matched by source, destination, tag and size, as the simulator matches them).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "chakra/et_file.h"

namespace chakrasim::tools {

struct Problem {
  enum class Severity { kError, kWarning };
  Severity severity = Severity::kError;
  std::string file;  // "" for a problem across ranks
  std::optional<std::uint64_t> node;
  std::string message;
};

struct Volume {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  Volume& operator+=(const Volume& v) {
    count += v.count;
    bytes += v.bytes;
    return *this;
  }
};

// One collective as the cross-rank check compares them.
struct CollectiveCall {
  std::uint64_t node = 0;
  std::int64_t comm_type = 0;
  std::uint64_t bytes = 0;
  bool operator==(const CollectiveCall& o) const { return comm_type == o.comm_type && bytes == o.bytes; }
};

// One point-to-point operation: the key the simulator matches sends and receives by.
struct P2pOp {
  std::uint64_t node = 0;
  bool send = false;
  std::int64_t src = 0, dst = 0, tag = 0;
  std::uint64_t bytes = 0;
};

struct TraceSummary {
  std::string file;
  std::optional<std::size_t> rank;  // set for the files of a prefix
  bool readable = false;
  std::string version;
  std::uint64_t nodes = 0;
  std::map<std::string, std::uint64_t> nodes_by_type;   // NodeType name -> nodes
  std::map<std::string, std::uint64_t> micros_by_type;  // NodeType name -> sum of duration_micros
  std::uint64_t compute_micros = 0;                     // COMP nodes
  std::uint64_t gpu_compute_micros = 0;
  std::uint64_t cpu_compute_micros = 0;       // is_cpu_op COMP nodes
  std::map<std::string, Volume> collectives;  // comm_type name -> comm_size sum
  std::map<std::string, Volume> groups;       // pg_name ("" = all NPUs) -> comm_size sum
  Volume sends, recvs;
  std::optional<std::uint64_t> critical_path_micros;  // absent when the graph has a cycle
  std::uint64_t critical_path_nodes = 0;
  std::vector<Problem> problems;
  // For the checks across ranks: collectives per group in id order, point-to-point operations.
  std::map<std::string, std::vector<CollectiveCall>> collectives_by_group;
  std::vector<P2pOp> p2p;
};

struct Inspection {
  std::string input;  // the file or prefix given
  bool is_prefix = false;
  std::vector<TraceSummary> ranks;
  std::vector<Problem> problems;  // across ranks
  std::size_t errors() const;
  std::size_t warnings() const;
};

// Summarises one trace. `rank` and `npus`, when known, enable the peer checks.
TraceSummary summarize_trace(const chakra::Trace& trace, const std::string& file,
                             std::optional<std::size_t> rank = std::nullopt, std::size_t npus = 0);

// Adds the problems across ranks to `inspection` (its ranks are those of one prefix).
void check_across_ranks(Inspection& inspection);

// FILE.et, or PREFIX for PREFIX.0.et, PREFIX.1.et, ... Throws Error when `path` is neither a
// file nor the prefix of a PREFIX.0.et; a file that cannot be parsed is a problem, not a throw.
Inspection inspect(const std::string& path);

// The figures summed over ranks (critical path: the longest of any rank).
TraceSummary totals(const Inspection& inspection);
const char* severity_name(Problem::Severity severity);

}  // namespace chakrasim::tools
