// Pipeline schedules: the order in which one stage runs the forward and backward passes of its
// microbatches, as Megatron-LM orders them.
//  - gpipe: every forward, then every backward (Huang et al. 2019).
//  - 1f1b: min(P - s - 1, m) warm-up forwards, then one forward and one backward in turn, then
//    the remaining backwards (PipeDream-Flush; Narayanan et al. 2021).
//  - interleaved: each stage holds v model chunks; virtual microbatch k runs chunk
//    (k mod P v) / P (reversed for backwards) on microbatch (k / P v) P + k mod P; the warm-up is
//    2 (P - s - 1) + (v - 1) P forwards, then 1F1B over the m v virtual microbatches.
#pragma once

#include <cstdint>
#include <vector>

#include "generate/llm/llm_layout.h"

namespace chakrasim::tools::llm {

struct Task {
  bool backward = false;
  std::uint64_t microbatch = 0;
  std::uint64_t chunk = 0;  // model chunk on this stage (0 unless interleaved)

  bool operator==(const Task&) const = default;
};

// The tasks of `stage` in the order it runs them (2 x microbatches x chunks of them).
std::vector<Task> stage_tasks(Schedule schedule, std::uint64_t stages, std::uint64_t stage, std::uint64_t microbatches,
                              std::uint64_t chunks);

// The most chunk-microbatches whose forward has run and whose backward has not, at any point
// of `tasks`: how many sets of stored activations the stage holds at its peak.
std::uint64_t peak_in_flight(const std::vector<Task>& tasks);

// The schedule's name as the --schedule flag spells it.
const char* schedule_name(Schedule schedule);

}  // namespace chakrasim::tools::llm
