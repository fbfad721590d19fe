// The table of collective algorithms: one row per algorithm, serving the system-JSON parser
// (its tokens, errors and help), the planner (what a phase may run), the system layer (how a
// stream's phase state is set up) and symmetric runs (whether the algorithm may be folded).
//
// Adding an algorithm: a header with its state machine (a PluggedAlgorithm, system/
// phase_algorithm.h) and one row, either appended to the built-in rows in algorithms.cc or
// registered with register_algorithm() before the system file is read (tests do this).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "system/phase_algorithm.h"
#include "system/system_spec.h"

namespace chakrasim::system {

struct AlgorithmInfo {
  // In the system JSON's *-implementation lists, e.g. "halvingDoubling"; also the printed name.
  const char* token = "";
  bool in_lists = true;             // false: not a list token (custom, selected by its own key)
  bool flat_form = false;           // one<Token> (e.g. oneRing): one ring of every NPU
  bool takes_window = false;        // <token><W> (e.g. direct4): messages kept in flight
  bool needs_power_of_two = false;  // only on rings of 2^k NPUs
  bool runs_on_groups = true;       // may run a communicator group's ring
  bool keeps_size = false;          // runs an all-reduce whatever the phase's kind (its data keeps its size)
  bool alternating_trees = false;   // successive phases of a kind alternate two trees (double binary tree)
  // May a symmetric or folded run fold it (sim/symmetry.h, sim/rank_classes.h): every NPU's
  // steps are the same up to a shift of positions (p -> p + c mod n) ...
  bool symmetric_safe = false;
  // ... or up to flipping bits of positions (p -> p ^ c; halving-doubling's partners).
  bool flip_safe = false;
  std::vector<CollectiveKind> kinds = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                                       CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll};
  // What the reference does in the cases refused above, added to the errors.
  const char* no_kind_note = "";
  const char* power_of_two_note = "";
  const char* no_groups_note = "";
  const char* description = "";
  // Sets up `state` for the phase `setup` describes.
  void (*configure)(PhaseAlgorithm& state, const PhaseSetup& setup) = nullptr;
  // A plugged-in algorithm's factory (used when configure is null).
  std::unique_ptr<PluggedAlgorithm> (*make)(const PhaseSetup& setup) = nullptr;
};

// The rows, indexed by AlgorithmKind: the built-ins first, in the order help texts list them.
const std::vector<AlgorithmInfo>& algorithms();
const AlgorithmInfo& algorithm_info(AlgorithmKind kind);
// Appends a row and returns its kind. Rows are never removed; a token already in use is an error.
AlgorithmKind register_algorithm(AlgorithmInfo row);

// Whether `info` can run a phase of `kind`.
bool runs_kind(const AlgorithmInfo& info, CollectiveKind kind);
// The tokens a list may hold, for errors and help: "ring or oneRing, direct or oneDirect
// (optionally with a window of at least 1, e.g. direct4), ..., or doubleBinaryTree".
std::string list_tokens_text();
// The list tokens of the rows `pick` accepts, joined as "a, b or c".
std::string tokens_where(const std::function<bool(const AlgorithmInfo&)>& pick);

// Sets up a stream's state for a phase: the row's configure, or its plugged-in factory.
void configure_phase_state(PhaseAlgorithm& state, const PhaseSetup& setup);

}  // namespace chakrasim::system
