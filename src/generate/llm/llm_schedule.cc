#include "generate/llm/llm_schedule.h"

#include <algorithm>

namespace chakrasim::tools::llm {

std::vector<Task> stage_tasks(Schedule schedule, std::uint64_t stages, std::uint64_t stage, std::uint64_t microbatches,
                              std::uint64_t chunks) {
  std::vector<Task> tasks;
  const std::uint64_t m = microbatches;
  if (schedule == Schedule::kGpipe) {
    for (std::uint64_t i = 0; i < m; ++i) tasks.push_back({false, i, 0});
    for (std::uint64_t i = 0; i < m; ++i) tasks.push_back({true, i, 0});
    return tasks;
  }
  if (schedule == Schedule::kOneFOneB) {
    const std::uint64_t warmup = std::min(stages - stage - 1, m);
    for (std::uint64_t i = 0; i < warmup; ++i) tasks.push_back({false, i, 0});
    for (std::uint64_t i = 0; i + warmup < m; ++i) {
      tasks.push_back({false, warmup + i, 0});
      tasks.push_back({true, i, 0});
    }
    for (std::uint64_t i = m - warmup; i < m; ++i) tasks.push_back({true, i, 0});
    return tasks;
  }
  // Interleaved: virtual microbatch k of the m x v.
  const std::uint64_t group = stages * chunks;
  const std::uint64_t total = m * chunks;
  auto task = [&](std::uint64_t k, bool backward) {
    std::uint64_t chunk = (k % group) / stages;
    if (backward) chunk = chunks - 1 - chunk;
    return Task{backward, (k / group) * stages + k % stages, chunk};
  };
  const std::uint64_t warmup = std::min((stages - stage - 1) * 2 + (chunks - 1) * stages, total);
  for (std::uint64_t k = 0; k < warmup; ++k) tasks.push_back(task(k, false));
  for (std::uint64_t i = 0; i + warmup < total; ++i) {
    tasks.push_back(task(warmup + i, false));
    tasks.push_back(task(i, true));
  }
  for (std::uint64_t k = total - warmup; k < total; ++k) tasks.push_back(task(k, true));
  return tasks;
}

std::uint64_t peak_in_flight(const std::vector<Task>& tasks) {
  std::uint64_t now = 0, peak = 0;
  for (const Task& t : tasks) {
    if (t.backward) {
      --now;
    } else {
      peak = std::max(peak, ++now);
    }
  }
  return peak;
}

const char* schedule_name(Schedule s) {
  switch (s) {
    case Schedule::kGpipe: return "gpipe";
    case Schedule::kOneFOneB: return "1f1b";
    case Schedule::kInterleaved: return "interleaved";
  }
  return "?";
}

}  // namespace chakrasim::tools::llm
