// The flow backend's pending ends: a binary min-heap of (exact end, flow) with each flow's
// position kept, so that a flow whose rate changes moves to its new place instead of leaving a
// stale entry behind. The heap holds exactly the flows that will end, and its top is the next.
#pragma once

#include <cstdint>
#include <vector>

namespace chakrasim::network {

class CompletionHeap {
 public:
  bool empty() const { return heap_.empty(); }
  std::uint32_t top() const { return heap_.front().flow; }
  double top_ns() const { return heap_.front().end_ns; }

  // Puts `flow` at `end_ns`, whether or not it was in the heap.
  void set(std::uint32_t flow, double end_ns) {
    if (flow >= position_.size()) position_.resize(flow + 1, kAbsent);
    std::size_t at = position_[flow];
    if (at == kAbsent) {
      at = heap_.size();
      heap_.push_back({end_ns, flow});
      position_[flow] = static_cast<std::uint32_t>(at);
    } else {
      heap_[at].end_ns = end_ns;
    }
    down(up(at));
  }
  // Takes `flow` out (nothing if absent).
  void erase(std::uint32_t flow) {
    if (flow >= position_.size() || position_[flow] == kAbsent) return;
    const std::size_t at = position_[flow];
    position_[flow] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (at == heap_.size()) return;
    heap_[at] = last;
    position_[last.flow] = static_cast<std::uint32_t>(at);
    down(up(at));
  }

 private:
  static constexpr std::uint32_t kAbsent = 0xffffffffu;
  struct Entry {
    double end_ns;
    std::uint32_t flow;
    // Ties by flow id: the same order on every run.
    bool before(const Entry& o) const { return end_ns != o.end_ns ? end_ns < o.end_ns : flow < o.flow; }
  };
  void place(std::size_t at, const Entry& e) {
    heap_[at] = e;
    position_[e.flow] = static_cast<std::uint32_t>(at);
  }
  std::size_t up(std::size_t at) {
    const Entry e = heap_[at];
    while (at > 0 && e.before(heap_[(at - 1) / 2])) {
      place(at, heap_[(at - 1) / 2]);
      at = (at - 1) / 2;
    }
    place(at, e);
    return at;
  }
  void down(std::size_t at) {
    const Entry e = heap_[at];
    for (;;) {
      std::size_t child = 2 * at + 1;
      if (child >= heap_.size()) break;
      if (child + 1 < heap_.size() && heap_[child + 1].before(heap_[child])) ++child;
      if (!heap_[child].before(e)) break;
      place(at, heap_[child]);
      at = child;
    }
    place(at, e);
  }

  std::vector<Entry> heap_;
  std::vector<std::uint32_t> position_;  // per flow id: its index in heap_, or kAbsent
};

}  // namespace chakrasim::network
