// Per-NPU timers batched by (NPU, tick): every delay an NPU's layers ask for at the same
// tick joins one bucket, and the bucket is a single event in the queue that drains in order.
//
// Why: this is how the reference system layer orders same-time work (ASTRA-sim's
// Sys::try_register_event keeps a per-NPU map tick -> callbacks and registers one backend event
// per distinct tick). Keeping the same grouping keeps tie order, and so link-queue order in the
// congestion-aware backend, identical to the reference. It is also cheaper: one heap entry per
// (NPU, tick) instead of one per delay.
#pragma once

#include <cstdint>
#include <vector>

#include "core/event_queue.h"
#include "core/id_pool.h"
#include "core/types.h"

namespace chakrasim {

// Layers that own timer entries; each interprets `kind` with its own enum.
enum class TimerOwner : std::uint8_t { kWorkload, kSystem, kCollectiveModel };

struct TimerEntry {
  std::uint64_t arg = 0;
  NpuId npu = 0;
  TimerOwner owner = TimerOwner::kWorkload;
  std::uint8_t kind = 0;
};

class NpuTimers {
 public:
  NpuTimers(EventQueue& queue, std::size_t npus) : queue_(queue), open_(npus) {}

  // Calls back (owner, kind, arg) on `npu` after `delay` ticks. A zero delay at a tick whose
  // bucket is draining runs in that same drain, after the entries already there.
  void schedule(NpuId npu, Tick delay, TimerOwner owner, std::uint8_t kind, std::uint64_t arg);

  Tick now() const { return queue_.now(); }

  // Runs every entry of the bucket behind a kTimers event, including entries added while it
  // drains. `dispatch` is called as dispatch(const TimerEntry&).
  template <typename Dispatch>
  void fire(const Event& event, Dispatch&& dispatch) {
    const auto bucket = static_cast<std::uint32_t>(event.arg);
    for (std::size_t i = 0; i < buckets_[bucket].size(); ++i) {
      TimerEntry entry = buckets_[bucket][i];  // copy: dispatch may grow buckets_
      dispatch(entry);
    }
    close(event.npu, bucket);
  }

 private:
  struct OpenBucket {
    Tick time;
    std::uint32_t bucket;
  };
  void close(NpuId npu, std::uint32_t bucket);

  EventQueue& queue_;
  std::vector<std::vector<OpenBucket>> open_;  // per NPU; a handful at a time
  IdPool<std::vector<TimerEntry>> buckets_;
};

}  // namespace chakrasim
