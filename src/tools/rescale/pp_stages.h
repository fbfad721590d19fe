// The pieces of `chakra rescale --pp` (rescale_pp.cc) that read a stage's trace as passes and
// merge neighbouring stages into one. Internal to src/tools/rescale.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "chakra/et_file.h"
#include "generate/llm/llm_schedule.h"
#include "tools/rescale/rescale_step.h"

namespace chakrasim::tools::rescale {

struct PassKey {
  bool backward = false;
  std::uint64_t microbatch = 0;
  bool operator==(const PassKey&) const = default;
};

// The pass a node belongs to, from its name; none for the step section. Throws on other names.
std::optional<PassKey> pass_of(const chakra::Node& node, const std::string& source);

// One old stage's trace cut into its passes.
struct StagePasses {
  chakra::Trace trace;
  std::string source;
  std::vector<PassKey> keys;                             // in the order the stage runs them
  std::vector<std::vector<std::size_t>> passes;          // node indices of each pass, in trace order
  std::vector<std::size_t> step;                         // node indices of the step section
  std::unordered_map<std::uint64_t, std::size_t> index;  // node id -> index
  std::map<std::tuple<bool, std::uint64_t, std::uint64_t>, std::size_t> by_task;  // (backward, mb, chunk) -> pass
  std::unordered_set<std::uint64_t> dropped;  // step collectives whose group the new set lacks
};

StagePasses cut(chakra::Trace trace, const std::string& source);

// Whether the stage runs its passes in the order of `tasks`.
bool follows(const StagePasses& s, const std::vector<llm::Task>& tasks);

struct PipelineShape {
  llm::Schedule schedule = llm::Schedule::kOneFOneB;
  std::uint64_t microbatches = 0, chunks = 1;
};

// rank = low + stride x p.
struct PpLayout {
  std::uint64_t stride = 0, stages = 0;
  std::uint64_t low(std::uint64_t r) const { return r % stride; }
  std::uint64_t stage(std::uint64_t r) const { return r / stride; }
  std::uint64_t rank(std::uint64_t low, std::uint64_t stage) const { return low + stride * stage; }
};

// One new stage's trace, from the old stages it merges (`parts`, in layer order): the new stage
// `stage` of the ranks with `low` (layout), in the set `out`.
chakra::Trace merge_stages(std::vector<StagePasses>& parts, const PipelineShape& shape, const PpLayout& layout,
                           std::uint64_t low, std::uint64_t stage, const TraceSet& out);

}  // namespace chakrasim::tools::rescale
