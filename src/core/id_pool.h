// A slab of values addressed by 32-bit ids, with a free-list of released ids: the one pool that
// streams, collectives, messages, pending operations, timer buckets, waiting receives and
// in-flight packets come from.
//
// Ids are reused last-released first. That order is part of the simulator's behaviour (ids
// travel in event payloads and decide nothing about order, but keeping reuse deterministic keeps
// reruns bit-identical), so it is the contract: acquire() returns the most recently released id,
// or a fresh one (size()) when none is free. A reused slot keeps its old value until the caller
// overwrites it, which lets a value that owns a buffer (a vector) keep its capacity.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace chakrasim {

template <typename T>
class IdPool {
 public:
  // An id whose slot the caller may overwrite; the slot holds whatever it held last.
  std::uint32_t acquire() {
    if (free_.empty()) {
      slots_.emplace_back();
      return static_cast<std::uint32_t>(slots_.size() - 1);
    }
    const std::uint32_t id = free_.back();
    free_.pop_back();
    return id;
  }
  // An id whose slot now holds `value`.
  std::uint32_t add(T value) {
    const std::uint32_t id = acquire();
    slots_[id] = std::move(value);
    return id;
  }
  // Gives `id` back; it must have come from acquire() or add() and not been released since.
  void release(std::uint32_t id) { free_.push_back(id); }
  // Reads the value of `id` and gives the id back.
  T take(std::uint32_t id) {
    T value = std::move(slots_[id]);
    release(id);
    return value;
  }

  T& operator[](std::uint32_t id) { return slots_[id]; }
  const T& operator[](std::uint32_t id) const { return slots_[id]; }
  // Ids handed out so far (live or free): the slab's length.
  std::size_t capacity() const { return slots_.size(); }
  // Ids in use now.
  std::size_t live() const { return slots_.size() - free_.size(); }

 private:
  std::vector<T> slots_;
  std::vector<std::uint32_t> free_;
};

}  // namespace chakrasim
