// Send/receive matching, as the reference's analytical frontends do it (docs/astra-sim-model.md
// §6.1): a message is known by (tag, src, dst, bytes), and for each such key the k-th send
// pairs with the k-th receive. A receive posted after its message arrived completes at once.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/id_pool.h"
#include "core/types.h"

namespace chakrasim::system {

struct MessageKey {
  std::uint64_t tag = 0;
  std::uint64_t bytes = 0;
  NpuId src = 0;
  NpuId dst = 0;
  bool operator==(const MessageKey&) const = default;
};

struct MessageKeyHash {
  std::size_t operator()(const MessageKey& k) const {
    std::uint64_t h = k.tag * 0x9e3779b97f4a7c15ull;
    h ^= (k.bytes + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
    h ^= ((static_cast<std::uint64_t>(k.src) << 32) | k.dst) * 0x94d049bb133111ebull;
    return static_cast<std::size_t>(h ^ (h >> 31));
  }
};

// What to do when a receive completes: an owner-defined code and argument.
struct Completion {
  std::uint64_t arg = 0;
  std::uint8_t kind = 0;
};

class Mailbox {
 public:
  // A message with `key` has arrived. Returns true and the receive's completion if a receive
  // was waiting for it; otherwise remembers the arrival for a later receive.
  bool arrive(const MessageKey& key, Completion& receive);

  // A receive for `key` is posted. Returns true if its message had already arrived (the
  // receive completes now); otherwise the receive waits with `receive`.
  bool post_receive(const MessageKey& key, Completion receive);

  // Receives still waiting and arrivals no receive has claimed (for deadlock reports).
  std::size_t waiting_receives() const;
  std::size_t unclaimed_arrivals() const;

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  // Waiting receives of one key form a FIFO linked through a pooled array, so matching
  // allocates nothing once the pool has grown.
  struct Slot {
    std::uint32_t arrived = 0;   // arrivals not yet claimed
    std::uint32_t head = kNone;  // oldest waiting receive
    std::uint32_t tail = kNone;
    std::uint32_t waiting = 0;
  };
  struct Waiting {
    Completion receive;
    std::uint32_t next = kNone;
  };
  std::unordered_map<MessageKey, Slot, MessageKeyHash> slots_;
  IdPool<Waiting> pool_;
};

}  // namespace chakrasim::system
