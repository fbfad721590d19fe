// The ns-3 backend's engine state (Ns3Engine::Impl), shared by the C++17 translation units that
// include ns-3's headers: ns3_engine.cc, which builds and drives the simulation, and
// ns3_flow_routing.h, which routes its packets. Never included from C++20 code (ns3_engine.h).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <ns3/data-rate.h>
#include <ns3/ipv4-header.h>
#include <ns3/ipv4-route.h>
#include <ns3/net-device.h>
#include <ns3/node-container.h>
#include <ns3/packet.h>
#include <ns3/simulator.h>
#include <ns3/socket.h>

#include "network/ns3/ns3_engine.h"

namespace chakrasim::network {

// Every node has one IPv4 address, on all its interfaces: 10.0.0.1 + node index.
inline constexpr std::uint32_t kFirstAddress = 0x0A000001u;
inline ns3::Ipv4Address address_of(std::uint32_t node) { return ns3::Ipv4Address(kFirstAddress + node); }
// Receivers listen on this port; senders bind ports from kFirstClientPort up, one per connection
// of theirs, so that (sender, its port) names a connection in either direction.
inline constexpr std::uint16_t kServerPort = 80;
inline constexpr std::uint32_t kFirstClientPort = 1024;

struct Ns3Engine::Impl {
  struct Hop {
    std::uint32_t node;
    std::uint32_t interface;
  };
  // A TCP connection from host `src` to host `dst`, open from its first message on. It carries
  // one message at a time; between messages it waits, idle, for the next one of the same pair.
  struct Connection {
    std::uint32_t src = 0;
    std::uint32_t dst = 0;
    std::uint16_t port = 0;
    bool connected = false;
    bool busy = false;  // carrying a message not yet read in full at dst
    // The message now (or last) carried.
    std::uint64_t tag = 0;
    std::uint64_t bytes = 0;
    std::uint64_t unsent = 0;    // not yet handed to the socket
    std::uint64_t received = 0;  // read at dst
    // Its route, and the previous message's, which late packets of that one (a retransmission,
    // a last ACK) may still be on.
    std::vector<Hop> forward, reverse, old_forward, old_reverse;
    ns3::Ptr<ns3::Socket> client, server;
  };

  Ns3Settings settings;
  ns3::NodeContainer nodes;
  std::uint32_t first_node_id = 0;
  // Per node, per interface: the route out of it (made once, handed to every packet).
  std::vector<std::vector<ns3::Ptr<ns3::Ipv4Route>>> routes;
  std::vector<Hop> link_hop;                          // per fabric link: its sending node and interface there
  std::vector<ns3::Ptr<ns3::NetDevice>> link_device;  // per link: its sending device
  std::vector<ns3::DataRate> link_rate;
  Ns3LinkListener* link_listener = nullptr;
  bool links_traced = false;
  std::vector<Connection> connections;
  // Per sending node, per port of its from kFirstClientPort up (given out in order): the
  // connection. Indexed, not hashed: it is looked up for every packet at every hop.
  std::vector<std::vector<std::uint32_t>> by_client;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> idle;  // (src << 32 | dst) -> idle connections
  std::vector<ns3::Ptr<ns3::Socket>> listeners;
  std::vector<std::uint64_t> arrivals;
  std::string error;

  // The connection of client `node`'s `port`, or null when there is none.
  const Connection* connection_of(std::uint32_t node, std::uint32_t port) const {
    if (node >= by_client.size() || port < kFirstClientPort) return nullptr;
    const std::vector<std::uint32_t>& ports = by_client[node];
    return port - kFirstClientPort < ports.size() ? &connections[ports[port - kFirstClientPort]] : nullptr;
  }
  static std::uint64_t pair_key(std::uint32_t src, std::uint32_t dst) {
    return (static_cast<std::uint64_t>(src) << 32) | dst;
  }

  static bool interface_on(const std::vector<Hop>& route, std::uint32_t node, std::uint32_t& interface) {
    for (const Hop& h : route) {
      if (h.node == node) {
        interface = h.interface;
        return true;
      }
    }
    return false;
  }

  // The interface `node` sends a packet on, from its TCP ports and addresses; false when the
  // packet belongs to no connection or `node` is on neither of its routes.
  bool next_interface(std::uint32_t node, const ns3::Packet& packet, const ns3::Ipv4Header& header,
                      std::uint32_t& interface) const {
    std::uint8_t ports[4];
    if (packet.CopyData(ports, 4) != 4) return false;
    const std::uint16_t src_port = static_cast<std::uint16_t>(ports[0] << 8 | ports[1]);
    const std::uint16_t dst_port = static_cast<std::uint16_t>(ports[2] << 8 | ports[3]);
    const bool forward = dst_port == kServerPort;
    const std::uint32_t client = (forward ? header.GetSource() : header.GetDestination()).Get() - kFirstAddress;
    const Connection* found = connection_of(client, forward ? src_port : dst_port);
    if (found == nullptr) return false;
    const Connection& c = *found;
    return forward ? interface_on(c.forward, node, interface) || interface_on(c.old_forward, node, interface)
                   : interface_on(c.reverse, node, interface) || interface_on(c.old_reverse, node, interface);
  }

  void fail_connection(std::uint32_t id, const char* what) {
    if (error.empty()) {
      const Connection& c = connections[id];
      error = "ns-3: the TCP connection of a message of " + std::to_string(c.bytes) + " bytes from node " +
              std::to_string(c.src) + " to node " + std::to_string(c.dst) + " " + what;
    }
    ns3::Simulator::Stop();
  }

  static void open_connection(Impl* e, std::uint32_t id);
  static void begin_message(Impl* e, std::uint32_t id);
  static void on_connected(Impl* e, std::uint32_t id, ns3::Ptr<ns3::Socket> socket);
  static void on_connect_failed(Impl* e, std::uint32_t id, ns3::Ptr<ns3::Socket> socket);
  static void on_send_space(Impl* e, std::uint32_t id, ns3::Ptr<ns3::Socket> socket, std::uint32_t room);
  static bool on_request(Impl* e, ns3::Ptr<ns3::Socket> socket, const ns3::Address& from);
  static void on_accept(Impl* e, ns3::Ptr<ns3::Socket> socket, const ns3::Address& from);
  static void on_receive(Impl* e, std::uint32_t id, ns3::Ptr<ns3::Socket> socket);
  static void on_close(Impl* e, std::uint32_t id, ns3::Ptr<ns3::Socket> socket);
  static void on_transmit(Impl* e, std::uint32_t link, ns3::Ptr<const ns3::Packet> packet);
  void fill(std::uint32_t id);
};

}  // namespace chakrasim::network
