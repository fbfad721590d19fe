#include "system/transport.h"

#include <algorithm>

#include "system/system_spec.h"
#include "system/tags.h"

namespace chakrasim::system {

void Transport::send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t tag, Completion on_sent) {
  start_send({src, dst, bytes, tag, on_sent});
}

void Transport::send_via(NpuId src, NpuId relay, NpuId dst, std::uint64_t bytes, std::uint64_t tag,
                         Completion on_sent) {
  start_send({src, dst, bytes, tag, on_sent, relay, folding_ == nullptr});
}

void Transport::start_send(const WaitingSend& s) {
  if (!rendezvous_) {
    go(s);
    return;
  }
  // Wait for the receiver's go-ahead, then send.
  const Completion go_ahead{waiting_sends_.add(s), kGoAheadArrived};
  if (mailbox_.post_receive(MessageKey{s.tag | tags::kGoAhead, kRendezvousBytes, s.dst, s.src}, go_ahead)) {
    dispatch(go_ahead);
  }
}

void Transport::go(const WaitingSend& s) {
  if (s.relayed) {
    relayed_send(s.src, s.relay, s.dst, s.bytes, s.tag, s.on_sent);
  } else {
    raw_send(s.src, s.dst, s.bytes, s.tag, s.on_sent);
  }
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

void Transport::relayed_send(NpuId src, NpuId relay, NpuId dst, std::uint64_t bytes, std::uint64_t tag,
                             Completion on_sent) {
  const auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); };
  const std::uint64_t chunk = std::max(kRelayChunkBytes, ceil_div(bytes, kMaxRelayChunks));
  const std::uint64_t chunks = std::max<std::uint64_t>(1, ceil_div(bytes, chunk));
  send_relay_chunk(relayed_.add({MessageKey{tag, bytes, src, dst}, on_sent, relay, chunk, chunks, 0, chunks}));
}

void Transport::send_relay_chunk(std::uint32_t record) {
  RelayedSend& r = relayed_[record];
  const std::uint64_t c = r.next++;
  const std::uint64_t piece = c + 1 < r.chunks ? r.chunk_bytes : r.key.bytes - c * r.chunk_bytes;
  const std::uint32_t id = messages_.acquire();
  messages_[id] = {MessageKey{r.key.tag, piece, r.key.src, r.key.dst}, Completion{}, record, true};
  ++messages_sent_;
  network_->send(r.key.src, r.relay, piece, id);
}

void Transport::dispatch(const Completion& c) {
  switch (c.kind) {
    case kNoCompletion: return;
    case kGoAheadArrived: go(waiting_sends_.take(static_cast<std::uint32_t>(c.arg))); return;
    default: sink_.complete(c);
  }
}

// As the reference: the sender hears of the arrival first, then the matching receive.
void Transport::on_arrival(std::uint64_t message) {
  const auto id = static_cast<std::uint32_t>(message);
  Message& m = messages_[id];
  if (m.relayed == kNotRelayed) {
    const Message arrived_message = messages_.take(id);
    arrived(arrived_message.key, arrived_message.on_sent);
    return;
  }
  if (m.first_leg) {  // at the relay: on to the destination under the same id, and the next to the relay
    m.first_leg = false;
    const std::uint32_t record = m.relayed;
    const NpuId relay = relayed_[record].relay, dst = m.key.dst;
    const std::uint64_t piece = m.key.bytes;
    // Asked before the send: were the last chunk to arrive within it, the record would be gone.
    const bool more = relayed_[record].next < relayed_[record].chunks;
    ++messages_sent_;
    network_->send(relay, dst, piece, id);
    if (more) send_relay_chunk(record);
    return;
  }
  const std::uint32_t record = messages_.take(id).relayed;
  if (--relayed_[record].chunks_left > 0) return;
  const RelayedSend done = relayed_.take(record);
  arrived(done.key, done.on_sent);
}

void Transport::arrived(const MessageKey& key, const Completion& on_sent) {
  dispatch(on_sent);
  Completion receive;
  if (mailbox_.arrive(key, receive)) dispatch(receive);
}

}  // namespace chakrasim::system
