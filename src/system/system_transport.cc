// The system layer's transport: point-to-point operations, the rendezvous handshake, messages
// handed to the network and the completions that come back (see system.h).
#include "system/system.h"
#include "system/tags.h"

namespace chakrasim::system {

void System::send(NpuId npu, NpuId dst, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) {
  const std::uint32_t op = ops_.add({npu, dst, token, bytes, 0, {}});
  transport_send(npu, dst, bytes, tags::p2p(tag), Completion{op, kOpDone});
}

void System::receive(NpuId npu, NpuId src, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) {
  const std::uint32_t op = ops_.add({npu, src, token, bytes, 0, {}});
  transport_receive(npu, src, bytes, tags::p2p(tag), Completion{op, kOpDone});
}

void System::transport_send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t tag, Completion on_sent) {
  if (!spec_.rendezvous) {
    raw_send(src, dst, bytes, tag, on_sent);
    return;
  }
  // Wait for the receiver's go-ahead, then send.
  const std::uint32_t op = ops_.add({src, dst, 0, bytes, tag, on_sent});
  const Completion go{op, kRendezvousGo};
  if (mailbox_.post_receive(MessageKey{tag | tags::kGoAhead, kRendezvousBytes, dst, src}, go)) dispatch(go);
}

void System::transport_receive(NpuId dst, NpuId src, std::uint64_t bytes, std::uint64_t tag,
                               Completion on_received) {
  if (spec_.rendezvous) raw_send(dst, src, kRendezvousBytes, tag | tags::kGoAhead, Completion{});
  if (mailbox_.post_receive(MessageKey{tag, bytes, src, dst}, on_received)) dispatch(on_received);
}

void System::raw_send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t tag, Completion on_sent) {
  const std::uint32_t id = messages_.acquire();
  if (mirror_) {
    // The message NPU `src` gets in return: from the NPU at the negated offset.
    NpuId image = 0;
    for (std::size_t d = 0; d < topology_.dims(); ++d) {
      const std::uint32_t n = topology_.npus_in(d);
      const std::uint32_t here = topology_.coordinate(src, d);
      const std::uint32_t there = topology_.coordinate(dst, d);
      image += ((2 * here + 2 * n - there) % n) * topology_.stride(d);
    }
    messages_[id] = {MessageKey{tag, bytes, image, src}, on_sent};
  } else {
    messages_[id] = {MessageKey{tag, bytes, src, dst}, on_sent};
  }
  ++messages_sent_;
  network_->send(src, dst, bytes, id);
}

void System::dispatch(const Completion& c) {
  switch (c.kind) {
    case kNone: return;
    case kStreamReceive: stream_received(static_cast<std::uint32_t>(c.arg)); return;
    case kCustomNodeDone: {
      const CustomNodeRef ref = CustomNodeRef::unpack(ops_.take(static_cast<std::uint32_t>(c.arg)).token);
      custom_node_done(ref.stream, ref.node);
      return;
    }
    case kOpDone: {
      const PendingOp op = ops_.take(static_cast<std::uint32_t>(c.arg));
      listener_.on_comm_done(op.npu, op.token);
      return;
    }
    case kRendezvousGo: {
      const PendingOp op = ops_.take(static_cast<std::uint32_t>(c.arg));
      raw_send(op.npu, op.peer, op.bytes, op.tag, op.on_sent);
      return;
    }
  }
}

// As the reference: the sender hears of the arrival first, then the matching receive.
void System::on_arrival(std::uint64_t message) {
  const Message m = messages_.take(static_cast<std::uint32_t>(message));
  dispatch(m.on_sent);
  Completion receive;
  if (mailbox_.arrive(m.key, receive)) dispatch(receive);
}


}  // namespace chakrasim::system
