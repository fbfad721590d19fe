#include "core/event_queue.h"

#include <bit>
#include <cassert>

#include "core/sim_time.h"

namespace chakrasim {

EventQueue::EventQueue() { current_ = &buckets_[digit(now_, 0)]; }

EventQueue::Block* EventQueue::new_block() {
  if (free_ == nullptr) {
    // Grow the pool by a batch; blocks are never returned to the system until the queue dies.
    constexpr std::size_t kBatch = 64;
    pool_.push_back(std::make_unique<Block[]>(kBatch));
    for (std::size_t i = 0; i < kBatch; ++i) free_block(&pool_.back()[i]);
  }
  Block* block = free_;
  free_ = block->next;
  block->next = nullptr;
  return block;
}

void EventQueue::append(Bucket& bucket, const Event& e) {
  if (bucket.tail == nullptr) {
    bucket.head = bucket.tail = new_block();
    bucket.head_index = bucket.tail_count = 0;
  } else if (bucket.tail_count == kBlockEvents) {
    bucket.tail->next = new_block();
    bucket.tail = bucket.tail->next;
    bucket.tail_count = 0;
  }
  bucket.tail->events[bucket.tail_count++] = e;
}

void EventQueue::schedule(Tick time, EventTarget target, std::uint8_t kind, NpuId npu, std::uint64_t arg) {
  assert(time >= now_);
  // The one check that holds for every event; callers that know what the time is for check first
  // with time_after, for a message that names it.
  if (time > kMaxSimulatedNs) {
    fail("an event at {} ns is beyond the simulated time a run can reach, {}", time, simulated_time_limit_text());
  }
  ++pending_;
  put(Event{time, arg, npu, target, kind});
}

void EventQueue::put(const Event& e) {
  const Tick differing = e.time ^ now_;
  const unsigned level = differing == 0 ? 0 : static_cast<unsigned>(63 - std::countl_zero(differing)) / kDigitBits;
  const unsigned d = digit(e.time, level);
  const unsigned index = level * kDigits + d;
  Bucket& bucket = buckets_[index];
  if (level != 0 && (bucket.empty() || e.time < bucket_min_[index])) bucket_min_[index] = e.time;
  append(bucket, e);
  set_occupied(level, d);
}

unsigned EventQueue::lowest_occupied(unsigned level) const {
  for (unsigned w = 0; w < kWords; ++w) {
    if (occupied_[level][w] != 0) return w * 64 + static_cast<unsigned>(std::countr_zero(occupied_[level][w]));
  }
  return kDigits;
}

Event EventQueue::pop() {
  assert(pending_ > 0);
  Bucket* b = current_;
  if (b->head == b->tail && b->head_index == b->tail_count) {
    // The current time is done: give back the block it kept (see below) and move on.
    if (b->head != nullptr) free_block(b->head);
    *b = Bucket{};
    clear_occupied(0, digit(now_, 0));
    advance();
    b = current_;
  }
  ++popped_;
  --pending_;
  const Event e = b->head->events[b->head_index++];
  if (b->head == b->tail) {
    // The last event so far. The bucket keeps its block, empty, while it is current: the
    // event's handler may schedule more at this time.
    if (b->head_index == b->tail_count) b->head_index = b->tail_count = 0;
  } else if (b->head_index == kBlockEvents) {
    Block* used = b->head;
    b->head = used->next;
    b->head_index = 0;
    free_block(used);
  }
  return e;
}

Tick EventQueue::next_time() const {
  if (pending_ == 0) return kNeverTick;
  const Bucket& b = *current_;
  if (b.head != b.tail || b.head_index != b.tail_count) return now_;
  // Level 0: the lowest occupied digit after the current one (which may still be marked while
  // its bucket keeps an empty block); its bucket holds exactly that time.
  const unsigned now_digit = digit(now_, 0);
  for (unsigned w = now_digit / 64; w < kWords; ++w) {
    std::uint64_t bits = occupied_[0][w];
    if (w == now_digit / 64) bits &= ~std::uint64_t{0} << (now_digit % 64) << 1;
    if (bits != 0) return (now_ & ~Tick{kDigits - 1}) | (w * 64 + static_cast<unsigned>(std::countr_zero(bits)));
  }
  // Otherwise the earliest time of the lowest occupied bucket of the lowest occupied level, as
  // advance() would take it.
  for (unsigned level = 1; level < kLevels; ++level) {
    const unsigned d = lowest_occupied(level);
    if (d != kDigits) return bucket_min_[level * kDigits + d];
  }
  return kNeverTick;  // unreachable while pending_ > 0
}

void EventQueue::advance_clock(Tick time) {
  assert(time >= now_ && time <= next_time());
  if (time == now_) return;
  // Nothing is pending at now_ any more: give back the current bucket's kept block, as pop() does.
  Bucket& current = *current_;
  if (current.head != nullptr) free_block(current.head);
  current = Bucket{};
  clear_occupied(0, digit(now_, 0));
  now_ = time;
  // An event sits at the level of the highest digit in which it differs from now_. Moving now_
  // forward, up to the earliest event, changes that only for the events that share the new
  // now_'s digit at their level, and they all sit in one bucket (L, digit L of `time`) for the
  // highest digit L in which the old and new now_ differ: every bucket below it is empty
  // (its events would be earlier than `time`), and above it that bucket is the old now_'s own,
  // never occupied. Re-filing it puts its events lower, relative to the new now_.
  for (unsigned level = 1; level < kLevels; ++level) {
    const unsigned d = digit(time, level);
    if ((occupied_[level][d / 64] >> (d % 64)) & 1) refile(level, d);
  }
  current_ = &buckets_[digit(now_, 0)];
}

void EventQueue::refile(unsigned level, unsigned d) {
  const unsigned index = level * kDigits + d;
  Bucket source = buckets_[index];
  buckets_[index] = Bucket{};
  clear_occupied(level, d);
  // Every event lands at a lower level than `level` (it shares now_'s digit there), so the
  // source is not appended to while it is read.
  for (Block* block = source.head; block != nullptr;) {
    const std::uint32_t end = block == source.tail ? source.tail_count : kBlockEvents;
    for (std::uint32_t i = source.head_index; i < end; ++i) put(block->events[i]);
    source.head_index = 0;
    Block* next = block->next;
    free_block(block);
    block = next;
  }
}

void EventQueue::advance() {
  unsigned d = lowest_occupied(0);
  if (d == kDigits) {
    unsigned level = 1;
    while ((d = lowest_occupied(level)) == kDigits) ++level;  // pending_ > 0: some level is occupied
    now_ = bucket_min_[level * kDigits + d];
    // Every lower level is empty, and each event lands in a lower one relative to the new now_.
    refile(level, d);
    d = digit(now_, 0);
  } else {
    now_ = (now_ & ~Tick{kDigits - 1}) | d;
  }
  current_ = &buckets_[d];
}

}  // namespace chakrasim
