// The system layer's transport: messages handed to the network and paired with receives on
// arrival (system/mailbox.h), with the optional rendezvous handshake (every send first waits for
// an 8192-byte go-ahead from its receiver). Whoever sends or receives names a Completion; the
// transport hands it back to its CompletionSink when the send has arrived or the receive has
// been matched, in the reference's order (the sender hears of an arrival before the receiver).
//
// A relayed send (send_via) goes to a relay NPU and on from there in chunks, as NCCL's PXN moves a
// GPU's data to a peer on another node through the GPU on the peer's rail: the chunks go to the
// relay one after another (a channel writes its steps in order), and each goes on as it arrives.
// It is matched and completes as a plain send would, when its last chunk arrives.
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
  // As send, through `relay` (neither src nor dst). A folded run sends straight: its messages are
  // seen from the class representatives, and a relay's leg has none.
  void send_via(NpuId src, NpuId relay, NpuId dst, std::uint64_t bytes, std::uint64_t tag, Completion on_sent);
  void receive(NpuId dst, NpuId src, std::uint64_t bytes, std::uint64_t tag, Completion on_received);
  void on_arrival(std::uint64_t message);

  // Messages handed to the network: a relayed send's chunks count once a leg.
  std::uint64_t messages_sent() const { return messages_sent_; }
  // A relayed send's chunk: at least this, and at most 64 chunks a send (NCCL's PXN moves 512
  // KiB steps; a chunk's first leg is the pipeline's fill).
  static constexpr std::uint64_t kRelayChunkBytes = 512 * 1024;
  static constexpr std::uint64_t kMaxRelayChunks = 64;
  std::size_t waiting_receives() const { return mailbox_.waiting_receives(); }

 private:
  static constexpr std::uint32_t kNotRelayed = 0xffffffffu;
  struct Message {
    MessageKey key;
    Completion on_sent;
    std::uint32_t relayed = kNotRelayed;  // a relayed send's chunk: its record
    bool first_leg = false;               // to the relay, not yet on to the destination
  };
  struct WaitingSend {  // a send, waiting for its go-ahead under the rendezvous protocol
    NpuId src = 0;
    NpuId dst = 0;
    std::uint64_t bytes = 0;
    std::uint64_t tag = 0;
    Completion on_sent;
    NpuId relay = 0;
    bool relayed = false;  // through `relay` (a folded run's sends go straight)
  };
  void start_send(const WaitingSend& send);  // now, or once its go-ahead arrives
  void go(const WaitingSend& send);
  struct RelayedSend {
    MessageKey key;
    Completion on_sent;
    NpuId relay = 0;
    std::uint64_t chunk_bytes = 0;
    std::uint64_t chunks = 0;
    std::uint64_t next = 0;         // the next chunk to send to the relay
    std::uint64_t chunks_left = 0;  // chunks not yet at the destination
  };
  void send_relay_chunk(std::uint32_t record);  // the record's next chunk to its relay
  void raw_send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t tag, Completion on_sent);
  void relayed_send(NpuId src, NpuId relay, NpuId dst, std::uint64_t bytes, std::uint64_t tag, Completion on_sent);
  void arrived(const MessageKey& key, const Completion& on_sent);
  void dispatch(const Completion& completion);

  const bool rendezvous_;
  const network::Folding* folding_;
  FoldedGroups* folded_groups_;
  CompletionSink& sink_;
  network::Network* network_ = nullptr;
  IdPool<Message> messages_;
  IdPool<WaitingSend> waiting_sends_;
  IdPool<RelayedSend> relayed_;
  Mailbox mailbox_;
  std::uint64_t messages_sent_ = 0;
};

}  // namespace chakrasim::system
