#include "system/mailbox.h"

namespace chakrasim::system {

bool Mailbox::arrive(const MessageKey& key, Completion& receive) {
  auto it = slots_.find(key);
  if (it != slots_.end() && !it->second.receives.empty()) {
    receive = it->second.receives.front();
    it->second.receives.pop_front();
    if (it->second.receives.empty() && it->second.arrived == 0) slots_.erase(it);
    return true;
  }
  ++slots_[key].arrived;
  return false;
}

bool Mailbox::post_receive(const MessageKey& key, Completion receive) {
  auto it = slots_.find(key);
  if (it != slots_.end() && it->second.arrived > 0) {
    if (--it->second.arrived == 0 && it->second.receives.empty()) slots_.erase(it);
    return true;
  }
  slots_[key].receives.push_back(receive);
  return false;
}

std::size_t Mailbox::waiting_receives() const {
  std::size_t n = 0;
  for (const auto& [key, slot] : slots_) n += slot.receives.size();
  return n;
}

std::size_t Mailbox::unclaimed_arrivals() const {
  std::size_t n = 0;
  for (const auto& [key, slot] : slots_) n += slot.arrived;
  return n;
}

}  // namespace chakrasim::system
