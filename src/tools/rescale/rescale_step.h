// The steps of `chakra rescale` (rescaler.h) and what they share: a trace set passed from one
// step to the next, its traces made on demand from the set before, and helpers that resize and
// regroup nodes. Internal to src/tools/rescale.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "chakra/et_file.h"
#include "system/comm_groups.h"

namespace chakrasim::tools::rescale {

// A trace set as one step hands it to the next: its groups, their kinds and each rank's trace.
struct TraceSet {
  std::uint64_t ranks = 0;
  system::CommGroups groups;
  std::map<std::uint32_t, std::string> names;  // group id -> kind ("TP", "DP", ...)
  std::string groups_source, names_source;     // the files the groups and names came from, for messages
  std::function<chakra::Trace(std::uint64_t rank)> trace;
  std::function<std::string(std::uint64_t rank)> source;  // the input file rank's trace comes from
};
using TraceSetPtr = std::shared_ptr<const TraceSet>;

// What a step made: the new set, and what it did (read once every trace is written: counts
// accumulate while the traces are made) and cannot do faithfully.
struct Step {
  TraceSetPtr out;
  std::function<std::vector<std::string>()> changes;
  std::vector<std::string> caveats;
};

Step rescale_dp(TraceSetPtr in, std::uint64_t new_dp);
Step rescale_tp(TraceSetPtr in, std::uint64_t new_tp);
Step rescale_pp(TraceSetPtr in, std::uint64_t new_pp);

// The ids of the groups labelled `kind` (empty when none).
std::vector<std::uint32_t> groups_named(const TraceSet& set, std::string_view kind);

// `value` x `factor`, rounded, at least 1 unless `value` is 0.
std::uint64_t scaled(std::uint64_t value, double factor);
// Scales the integer attribute `name`, keeping the type it was written with.
void scale_attr(chakra::Node& node, std::string_view name, double factor);
// A compute node doing `factor` times the work: duration, num_ops and tensor_size.
void scale_compute(chakra::Node& node, double factor);
// Sets the integer attribute `name` (added as int64 when absent), keeping its written type.
void set_int_attr(chakra::Node& node, std::string_view name, std::int64_t value);
// The group a node's pg_name names; none for "" and "0" (every rank). Throws naming `source` and
// the node when the name is not a group of `set`.
std::optional<std::uint32_t> group_of(const chakra::Node& node, const TraceSet& set, const std::string& source);
void set_group(chakra::Node& node, std::uint32_t id);
// Removes the nodes `dropped` names. A node that waited on a dropped one waits on the nodes that
// one waited on instead (through further dropped ones, the nearest kept ones).
void drop_nodes(chakra::Trace& trace, const std::unordered_set<std::uint64_t>& dropped);

// Gradient buckets, as generate llm names them (".grad.ar", ".grad.rs"; ZeRO's ".param.ag" after
// the optimizer): a bucket closes once it holds --grad-bucket weights, so every bucket but the
// last of a round (one group, the microbatch whose backward made it ready) holds at least that.
// The smallest such bucket is the limit as the traces show it, in comm_size bytes per group.
using BucketLimits = std::map<std::string, std::uint64_t>;  // pg_name -> bytes
BucketLimits bucket_limits(const chakra::Trace& trace);
// Merges consecutive buckets of a round while the merged one holds less than its group's limit
// (none known, as when every round has one bucket: none merged), as Megatron fills them when a
// rank's buckets have shrunk (a larger TP) or a stage's last bucket meets the next stage's first
// (merged stages). The merged bucket is the last of its run, the one ready last; ZeRO's
// parameter all-gathers (one per bucket of the first round) merge alike. Returns the buckets
// merged away.
std::uint64_t merge_buckets(chakra::Trace& trace, const BucketLimits& limits);

// The groups of a new set, numbered as generate llm numbers them: kind by kind (in the order
// the old ids first name each kind), within a kind by lowest member. One old group may become
// several (a copy per new index) and several old groups one (the same kind and members).
class NewGroups {
 public:
  explicit NewGroups(const TraceSet& in);
  // Old group `old_id`'s copy `copy` has `members`; a group of fewer than two is no group.
  void add(std::uint32_t old_id, std::uint64_t copy, std::vector<NpuId> members);
  // Numbers the groups and stores them and their names in `out`.
  void finish(TraceSet& out);
  // The new id of old group `old_id`'s copy `copy`; none if it has fewer than two members.
  std::optional<std::uint32_t> id(std::uint32_t old_id, std::uint64_t copy) const;

 private:
  struct Made {
    std::uint32_t kind;  // the first old id of its kind's name (its own id without a name)
    std::uint32_t old_id;
    std::uint64_t copy;
    std::vector<NpuId> members;  // ascending
  };
  const TraceSet& in_;
  std::map<std::string, std::uint32_t> first_of_kind_;
  std::vector<Made> made_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint32_t> ids_;
};

}  // namespace chakrasim::tools::rescale
