#include "core/event_queue.h"

#include <algorithm>
#include <cassert>

namespace chakrasim {

void EventQueue::schedule(Tick time, EventTarget target, std::uint8_t kind, NpuId npu,
                          std::uint64_t arg) {
  assert(time >= now_);
  ++pending_;
  const Event e{time, next_seq_++, arg, npu, target, kind};
  if (time == now_) {
    // Bucket-0 events at now_ were all scheduled before the clock reached now_, so they have
    // smaller seq than anything in the lane: running bucket 0 first keeps FIFO.
    lane_.push_back(e);
    return;
  }
  put(bucket_of(time), e);
}

Event EventQueue::pop() {
  assert(pending_ > 0);
  ++popped_;
  --pending_;
  std::vector<Event>& now_bucket = buckets_[0];
  if (bucket0_head_ == now_bucket.size() && lane_head_ == lane_.size()) advance();
  if (bucket0_head_ < now_bucket.size()) {
    const Event e = now_bucket[bucket0_head_++];
    if (bucket0_head_ == now_bucket.size()) {
      now_bucket.clear();
      bucket0_head_ = 0;
    }
    return e;
  }
  const Event e = lane_[lane_head_++];
  if (lane_head_ == lane_.size()) {
    lane_.clear();
    lane_head_ = 0;
  }
  return e;
}

void EventQueue::advance() {
  std::size_t b = 1;
  while (buckets_[b].empty()) ++b;  // pending_ > 0 and bucket 0 and the lane are empty
  std::vector<Event>& source = buckets_[b];
  now_ = bucket_min_[b];
  // Every event of `source` lands in a lower bucket relative to the new time.
  for (const Event& e : source) put(bucket_of(e.time), e);
  source.clear();
  std::vector<Event>& now_bucket = buckets_[0];
  if (now_bucket.size() > 1) {
    std::sort(now_bucket.begin(), now_bucket.end(), [](const Event& x, const Event& y) { return x.seq < y.seq; });
  }
}

}  // namespace chakrasim
