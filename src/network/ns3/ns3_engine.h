// The ns-3 side of the packet-level backend: a Fabric rebuilt as ns-3 nodes joined by
// point-to-point links, messages carried by TCP connections kept open between pairs of hosts on
// routes given from outside, and ns-3's clock driven in steps from outside. ns3_network.h is the
// Network on top of it.
//
// This header includes no ns-3 header and nothing of C++20: Debian's ns-3 3.37 headers do not
// compile with g++ 12 in C++20 mode, so ns3_engine.cc is the one C++17 translation unit that
// sees them (src/CMakeLists.txt), and the rest of chakrasim sees only this interface (pimpl).
//
// ns-3 keeps one simulator per process (a singleton clock, node list and event list): one
// engine at a time may exist; a second one is refused with an Error.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace chakrasim::network {

// A directed link as ns-3 gets it: its own point-to-point channel, a transmitting device at
// `from` (with the link's rate, MTU and drop-tail queue) and a receiving one at `to`.
struct Ns3Link {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  double bytes_per_ns = 0;
  double latency_ns = 0;
};

// The data-centre values the engine sets on ns-3 (its defaults are a wide-area network's);
// docs/network.md says why each, and what each was measured against.
struct Ns3Settings {
  std::uint32_t mtu_bytes = 9000;     // jumbo frames on every device
  std::string tcp = "ns3::TcpDctcp";  // congestion control, by ns-3 TypeId name
  // Each sending port's data queue: RED marking ECN (DCTCP's step: every packet that finds at
  // least mark_packets queued is marked) when red_ecn, else drop-tail.
  bool red_ecn = true;
  std::uint32_t queue_bytes = 1u << 20;  // per port, dropped beyond
  std::uint32_t mark_packets = 20;
  // Segments without payload (ACKs, SYN, FIN) wait in a queue of their own at every port, served
  // before data (strict priority), instead of behind the data going the same way.
  bool ack_priority = true;
  std::uint32_t initial_cwnd_segments = 10;
  double min_rto_ns = 200e3;            // ns-3's default is 1 s
  double clock_granularity_ns = 1e3;    // 1 ms by default
  double connect_timeout_ns = 200e3;    // SYN retransmission; 3 s by default
  std::uint32_t delayed_ack_count = 1;  // segments per ACK
  double delayed_ack_timeout_ns = 1e3;  // 200 ms by default
  std::uint32_t socket_buffer_bytes = 16u << 20;
};

// Told of every packet a link starts to send (link ids as given to the engine), with the ns at
// which its serialisation starts and ends.
class Ns3LinkListener {
 public:
  virtual ~Ns3LinkListener() = default;
  virtual void on_transmit(std::uint32_t link, std::uint64_t start_ns, std::uint64_t end_ns) = 0;
};

class Ns3Engine {
 public:
  static constexpr std::uint64_t kNoEvent = std::numeric_limits<std::uint64_t>::max();

  // `hosts`: the nodes that send and receive (they listen for connections). Throws Error when
  // another engine exists or ns-3 refuses a setting.
  Ns3Engine(std::uint32_t node_count, const std::vector<Ns3Link>& links, const std::vector<std::uint32_t>& hosts,
            const Ns3Settings& settings);
  ~Ns3Engine();
  Ns3Engine(const Ns3Engine&) = delete;
  Ns3Engine& operator=(const Ns3Engine&) = delete;

  // At ns-3 time `at_ns` (not before now_ns()), sends `bytes` (> 0) along `path` (link ids, first
  // hop first; its ACKs take `reverse_path`), from the host at the start of `path` to the one at
  // its end, on a TCP connection of that pair that carries no other message now: an idle one
  // kept open since an earlier message (no handshake, its window as it was left), else a new one.
  // `tag` is reported by take_arrivals() when the receiving application has read the last byte.
  void start_flow(std::uint64_t at_ns, std::uint64_t bytes, std::uint64_t tag, const std::vector<std::uint32_t>& path,
                  const std::vector<std::uint32_t>& reverse_path);

  // The time of ns-3's earliest pending event (possibly a cancelled timer), kNoEvent when none.
  std::uint64_t next_event_ns() const;
  // ns-3's clock: the time of the last event it ran.
  std::uint64_t now_ns() const;
  // Runs ns-3's events up to and including `until_ns`, but stops right after the event in which
  // a message's last byte is read: take_arrivals() then holds it (and any other read in the same
  // event), all at now_ns(). Throws Error when a connection failed.
  void run_until(std::uint64_t until_ns);
  std::vector<std::uint64_t> take_arrivals();

  // From now on, tells `listener` of every packet every link sends (ns-3 traces, connected on
  // the first call: without a listener, packets cost nothing more).
  void listen_to_links(Ns3LinkListener* listener);

  // ns-3 events run so far, and TCP connections opened so far (they stay open).
  std::uint64_t events() const;
  std::size_t connections() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace chakrasim::network
