#include "core/event_queue.h"

#include <cassert>
#include <utility>

namespace chakrasim {

void EventQueue::schedule(Tick time, EventTarget target, std::uint8_t kind, NpuId npu,
                          std::uint64_t arg) {
  assert(time >= now_);
  Event e{time, next_seq_++, arg, npu, target, kind};
  if (time == now_) {
    // Heap events at now_ were all scheduled before the clock reached now_, so they have
    // smaller seq than anything in the lane: draining the heap's now_-events first keeps FIFO.
    lane_.push_back(e);
    return;
  }
  heap_.push_back(e);
  sift_up(heap_.size() - 1);
}

Event EventQueue::pop() {
  ++popped_;
  if (!heap_.empty() && heap_.front().time == now_) return pop_heap();
  if (lane_head_ < lane_.size()) {
    Event e = lane_[lane_head_++];
    if (lane_head_ == lane_.size()) {
      lane_.clear();
      lane_head_ = 0;
    }
    return e;
  }
  Event e = pop_heap();
  now_ = e.time;
  return e;
}

Event EventQueue::pop_heap() {
  Event top = heap_.front();
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
  return top;
}

void EventQueue::sift_up(std::size_t i) {
  Event e = heap_[i];
  while (i > 0) {
    std::size_t parent = (i - 1) / 4;
    if (!earlier(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::sift_down(std::size_t i) {
  const std::size_t n = heap_.size();
  Event e = heap_[i];
  for (;;) {
    std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    std::size_t last = first + 4 < n ? first + 4 : n;
    for (std::size_t c = first + 1; c < last; ++c) {
      if (earlier(heap_[c], heap_[best])) best = c;
    }
    if (!earlier(heap_[best], e)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

}  // namespace chakrasim
