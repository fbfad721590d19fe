// The system layer's transport: messages handed to the network and paired with receives on
// arrival (system/mailbox.h), with the optional rendezvous handshake (every send first waits for
// an 8192-byte go-ahead from its receiver). Whoever sends or receives names a Completion; the
// transport hands it back to its CompletionSink when the send has arrived or the receive has
// been matched, in the reference's order (the sender hears of an arrival before the receiver).
//
// In a folded run (network/folding.h) only the class representatives run: a message one sends
// to NPU b is taken as the message b's representative receives from the sender moved as b is
// moved onto its representative (with a group stream's group moved alike), which by the
// folding's symmetry arrives after the same delay. In a symmetric run (one class, NPU 0) that
// sender is the mirror image of b, -b coordinate by coordinate.
#pragma once

#include <cstdint>

#include "core/id_pool.h"
#include "core/types.h"
#include "network/network.h"
#include "network/topology.h"
#include "system/folded_groups.h"
#include "system/mailbox.h"

namespace chakrasim::system {

class CompletionSink {
 public:
  virtual ~CompletionSink() = default;
  virtual void complete(const Completion& completion) = 0;
};

class Transport {
 public:
  // Completion kinds the transport keeps for itself; its users' kinds are 1 to 254.
  static constexpr std::uint8_t kNoCompletion = 0;
  static constexpr std::uint8_t kGoAheadArrived = 255;

  // `folding` and `groups` (its groups, when it has any): nullptr in a full run.
  Transport(bool rendezvous, const network::Folding* folding, FoldedGroups* groups, CompletionSink& sink)
      : rendezvous_(rendezvous), folding_(folding), folded_groups_(groups), sink_(sink) {}
  void attach(network::Network& network) { network_ = &network; }

  void send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t tag, Completion on_sent);
  void receive(NpuId dst, NpuId src, std::uint64_t bytes, std::uint64_t tag, Completion on_received);
  void on_arrival(std::uint64_t message);

  std::uint64_t messages_sent() const { return messages_sent_; }
  std::size_t waiting_receives() const { return mailbox_.waiting_receives(); }

 private:
  struct Message {
    MessageKey key;
    Completion on_sent;
  };
  struct WaitingSend {  // a send waiting for its go-ahead
    NpuId src = 0;
    NpuId dst = 0;
    std::uint64_t bytes = 0;
    std::uint64_t tag = 0;
    Completion on_sent;
  };
  void raw_send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t tag, Completion on_sent);
  void dispatch(const Completion& completion);

  const bool rendezvous_;
  const network::Folding* folding_;
  FoldedGroups* folded_groups_;
  CompletionSink& sink_;
  network::Network* network_ = nullptr;
  IdPool<Message> messages_;
  IdPool<WaitingSend> waiting_sends_;
  Mailbox mailbox_;
  std::uint64_t messages_sent_ = 0;
};

}  // namespace chakrasim::system
