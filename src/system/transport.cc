#include "system/transport.h"

#include "system/system_spec.h"
#include "system/tags.h"

namespace chakrasim::system {

void Transport::send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t tag, Completion on_sent) {
  if (!rendezvous_) {
    raw_send(src, dst, bytes, tag, on_sent);
    return;
  }
  // Wait for the receiver's go-ahead, then send.
  const Completion go{waiting_sends_.add({src, dst, bytes, tag, on_sent}), kGoAheadArrived};
  if (mailbox_.post_receive(MessageKey{tag | tags::kGoAhead, kRendezvousBytes, dst, src}, go)) dispatch(go);
}

void Transport::receive(NpuId dst, NpuId src, std::uint64_t bytes, std::uint64_t tag, Completion on_received) {
  if (rendezvous_) raw_send(dst, src, kRendezvousBytes, tag | tags::kGoAhead, Completion{});
  if (mailbox_.post_receive(MessageKey{tag, bytes, src, dst}, on_received)) dispatch(on_received);
}

void Transport::raw_send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t tag, Completion on_sent) {
  const std::uint32_t id = messages_.acquire();
  if (folding_ == nullptr) {
    messages_[id] = {MessageKey{tag, bytes, src, dst}, on_sent};
  } else {
    const std::uint64_t seen_tag =
        folded_groups_ != nullptr ? folded_groups_->tag_seen_from_representative(dst, tag) : tag;
    messages_[id] = {MessageKey{seen_tag, bytes, folding_->seen_from_representative(dst, src),
                                folding_->representative_of(dst)},
                     on_sent};
  }
  ++messages_sent_;
  network_->send(src, dst, bytes, id);
}

void Transport::dispatch(const Completion& c) {
  switch (c.kind) {
    case kNoCompletion: return;
    case kGoAheadArrived: {
      const WaitingSend s = waiting_sends_.take(static_cast<std::uint32_t>(c.arg));
      raw_send(s.src, s.dst, s.bytes, s.tag, s.on_sent);
      return;
    }
    default: sink_.complete(c);
  }
}

// As the reference: the sender hears of the arrival first, then the matching receive.
void Transport::on_arrival(std::uint64_t message) {
  const Message m = messages_.take(static_cast<std::uint32_t>(message));
  dispatch(m.on_sent);
  Completion receive;
  if (mailbox_.arrive(m.key, receive)) dispatch(receive);
}

}  // namespace chakrasim::system
