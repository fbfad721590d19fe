#include "core/npu_timers.h"

#include "core/sim_time.h"

namespace chakrasim {

void NpuTimers::schedule(NpuId npu, Tick delay, TimerOwner owner, std::uint8_t kind, std::uint64_t arg) {
  const Tick time = time_after(queue_.now(), delay, [&] { return fmt::format("a step of NPU {}", npu); });
  const TimerEntry entry{arg, npu, owner, kind};
  for (const OpenBucket& open : open_[npu]) {
    if (open.time == time) {
      buckets_[open.bucket].push_back(entry);
      return;
    }
  }
  const std::uint32_t bucket = buckets_.acquire();  // a reused bucket was left empty
  buckets_[bucket].push_back(entry);
  open_[npu].push_back({time, bucket});
  queue_.schedule(time, EventTarget::kTimers, 0, npu, bucket);
}

void NpuTimers::close(NpuId npu, std::uint32_t bucket) {
  auto& open = open_[npu];
  for (std::size_t i = 0; i < open.size(); ++i) {
    if (open[i].bucket == bucket) {
      open[i] = open.back();
      open.pop_back();
      break;
    }
  }
  buckets_[bucket].clear();
  buckets_.release(bucket);
}

}  // namespace chakrasim
