#include "system/mailbox.h"

namespace chakrasim::system {

bool Mailbox::arrive(const MessageKey& key, Completion& receive) {
  auto it = slots_.find(key);
  if (it != slots_.end() && it->second.waiting > 0) {
    Slot& slot = it->second;
    const std::uint32_t w = slot.head;
    const Waiting taken = pool_.take(w);
    receive = taken.receive;
    slot.head = taken.next;
    if (--slot.waiting == 0) slot.tail = kNone;
    if (slot.waiting == 0 && slot.arrived == 0) slots_.erase(it);
    return true;
  }
  ++slots_[key].arrived;
  return false;
}

bool Mailbox::post_receive(const MessageKey& key, Completion receive) {
  auto it = slots_.find(key);
  if (it != slots_.end() && it->second.arrived > 0) {
    if (--it->second.arrived == 0 && it->second.waiting == 0) slots_.erase(it);
    return true;
  }
  const std::uint32_t w = pool_.add({receive, kNone});
  Slot& slot = it != slots_.end() ? it->second : slots_[key];
  if (slot.waiting == 0) {
    slot.head = w;
  } else {
    pool_[slot.tail].next = w;
  }
  slot.tail = w;
  ++slot.waiting;
  return false;
}

std::size_t Mailbox::waiting_receives() const {
  std::size_t n = 0;
  for (const auto& [key, slot] : slots_) n += slot.waiting;
  return n;
}

std::size_t Mailbox::unclaimed_arrivals() const {
  std::size_t n = 0;
  for (const auto& [key, slot] : slots_) n += slot.arrived;
  return n;
}

}  // namespace chakrasim::system
