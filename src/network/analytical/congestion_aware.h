// The analytical congestion-aware backend (docs/astra-sim-model.md §6.3). Links are
// directional FIFOs with a busy flag: a message holds a link for floor(bytes / bandwidth) ns and
// reaches the next device floor(latency + bytes / bandwidth) ns after it started, then queues
// for the next link (store and forward, serialisation paid on every hop).
// The links and routes are network/links.h's:
//   Ring: a link each way between ring neighbours; the shorter way round, clockwise on a tie.
//   FullyConnected: a link per ordered pair.
//   Switch: an up-link and a down-link per NPU to the dimension's switch.
// The reference supports one dimension only. Here a message crossing several dimensions is
// routed dimension by dimension, lowest first, each dimension with its own links (see
// docs/network.md). It ignores switch-internal contention, packetisation and flow control.
//
// Folded runs (`folding`, network/folding.h): only the class representatives send, and every
// other NPU is taken to send the same messages at the same times to the peers moved as the
// folding moves it onto its representative. The moves map the links onto each other (a ring
// link onto the representative's link in the same direction, an up- or down-link onto the
// representative's, a fully connected link to offset c onto the representative's to offset c),
// and all links of a class carry the same traffic at the same times. So one link per class is
// kept, the representative's: when a representative's message enters another NPU's link, it
// enters that NPU's representative's link instead, in the place of the moved message that enters
// it at that moment, and leaves it when that one would. A symmetric run is the one-class case:
// NPU 0's links stand for all.
#pragma once

#include <cstdint>
#include <vector>

#include "core/id_pool.h"
#include "network/links.h"
#include "network/network.h"

namespace chakrasim::network {

class CongestionAware final : public Network {
 public:
  CongestionAware(const Topology& topology, EventQueue& queue, ArrivalSink& sink, const Folding* folding = nullptr);
  void send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) override;
  void handle(const Event& event) override;

  std::uint32_t link_count() const override { return table_.size(); }
  std::string link_name(std::uint32_t link) const override { return table_.name(link); }
  std::uint32_t link_dimension(std::uint32_t link) const override {
    return static_cast<std::uint32_t>(table_.dim_of(link));
  }
  void observe_links(LinkObserver* observer) override { observer_ = observer; }

 private:
  enum EventKind : std::uint8_t { kHopArrived, kLinkFree };
  static constexpr std::uint32_t kNone = 0xffffffffu;

  // A link's queue, indexed by the LinkTable's ids.
  struct Link {
    double bytes_per_ns = 0;
    double latency_ns = 0;
    std::uint32_t head = kNone;  // first waiting packet
    std::uint32_t tail = kNone;
    bool busy = false;
  };
  // A message on its way: where it is on its route and where it goes.
  struct Packet {
    std::uint64_t message = 0;
    std::uint64_t bytes = 0;
    LinkTable::Cursor cursor;
    NpuId dst = 0;
    std::uint32_t next = kNone;  // next in a link's FIFO
    std::uint32_t link = kNone;  // link it was last sent on
  };

  void enqueue(std::uint32_t link, std::uint32_t packet);
  void transmit(std::uint32_t link, std::uint32_t packet);

  LinkTable table_;
  EventQueue& queue_;
  ArrivalSink& sink_;
  std::vector<Link> links_;
  LinkObserver* observer_ = nullptr;
  IdPool<Packet> packets_;
};

}  // namespace chakrasim::network
