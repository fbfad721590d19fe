// `chakrasim chakra synthesize generate`: per-rank traces drawn from a SynthesisModel
// (docs/chakra-tools.md).
//
// Each rank class expands its program once per seed: every slot draws its values for all its
// repetitions at once (stratified, its learned total kept), ordered by the loop's rank
// correlations (Iman-Conover); so every rank of a class runs the same step, as the ranks the
// model was learned from did. What ranks must agree on is then made to agree: the k-th
// collective of a group has the size the first of its members drew, and the k-th message from one
// rank to another has one size and tag k on both sides.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "chakra/et_file.h"

#include "tools/synthesize/synthesis_model.h"

namespace chakrasim::tools {

struct GenerateOptions {
  std::uint64_t seed = 1;
  std::uint64_t npus = 0;        // 0: the model's
  std::uint64_t iterations = 1;  // steps per trace, each after the one before
  // Refused above this many nodes over all ranks, before any is written: a model is small, what
  // it expands to must not fill the disk by mistake.
  std::uint64_t max_total_nodes = 2'000'000'000;
};

struct GenerateReport {
  std::uint64_t ranks = 0, nodes = 0, groups = 0;
  std::string groups_path;
  std::string caveat;  // when re-sized: what the new job keeps as learned
};

// Every rank's trace, handed to `sink` in rank order. Throws Error naming `model_source` for a
// model the generator cannot expand (a dependency before the step's start, a rank in no group of a
// collective's shape, a peer outside the job, too many nodes).
using TraceSink = std::function<void(std::uint64_t rank, const chakra::Trace& trace)>;
GenerateReport generate(const SynthesisModel& model, const std::string& model_source, const GenerateOptions& options,
                        const TraceSink& sink, std::vector<std::vector<std::uint64_t>>* groups = nullptr);

// generate() into OUT_PREFIX.<rank>.et, and OUT_PREFIX.groups.json when the job has groups.
GenerateReport generate_traces(const SynthesisModel& model, const std::string& model_source,
                               const std::string& out_prefix, const GenerateOptions& options);

}  // namespace chakrasim::tools
