// Routing for the ns-3 backend: every packet follows its connection's path, which the engine was
// given (a hash lookup by sender and port at each node, no table scan). C++17 only, like
// ns3_engine_impl.h.
#pragma once

#include <cstdint>

#include <ns3/ipv4-routing-helper.h>
#include <ns3/ipv4-routing-protocol.h>
#include <ns3/ipv4.h>
#include <ns3/node.h>

#include "network/ns3/ns3_engine_impl.h"

namespace chakrasim::network {

// Routes every packet along its connection's path, which the engine was given: at each node a
// hash lookup by the packet's sender and port, no table scan.
class FlowRouting : public ns3::Ipv4RoutingProtocol {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid = ns3::TypeId("chakrasim::FlowRouting")
                                 .SetParent<ns3::Ipv4RoutingProtocol>()
                                 .SetGroupName("chakrasim")
                                 .AddConstructor<FlowRouting>();
    return tid;
  }
  void bind(const Ns3Engine::Impl* engine, std::uint32_t node) {
    engine_ = engine;
    node_ = node;
  }

  ns3::Ptr<ns3::Ipv4Route> RouteOutput(ns3::Ptr<ns3::Packet> p, const ns3::Ipv4Header& header,
                                       ns3::Ptr<ns3::NetDevice> /*oif*/, ns3::Socket::SocketErrno& sockerr) override {
    std::uint32_t interface = 0;
    if (!p) {  // a socket asking which source address to use: the node's one, on any interface
      sockerr = ns3::Socket::ERROR_NOTERROR;
      return engine_->routes[node_].size() > 1 ? engine_->routes[node_][1] : nullptr;
    }
    if (!engine_->next_interface(node_, *p, header, interface)) {
      sockerr = ns3::Socket::ERROR_NOROUTETOHOST;
      return nullptr;
    }
    sockerr = ns3::Socket::ERROR_NOTERROR;
    return engine_->routes[node_][interface];
  }

  bool RouteInput(ns3::Ptr<const ns3::Packet> p, const ns3::Ipv4Header& header, ns3::Ptr<const ns3::NetDevice> idev,
                  UnicastForwardCallback ucb, MulticastForwardCallback /*mcb*/, LocalDeliverCallback lcb,
                  ErrorCallback ecb) override {
    if (header.GetDestination() == address_of(node_)) {
      lcb(p, header, static_cast<std::uint32_t>(ipv4_->GetInterfaceForDevice(idev)));
      return true;
    }
    std::uint32_t interface = 0;
    if (!engine_->next_interface(node_, *p, header, interface)) {
      ecb(p, header, ns3::Socket::ERROR_NOROUTETOHOST);
      return true;
    }
    ucb(engine_->routes[node_][interface], p, header);
    return true;
  }

  void NotifyInterfaceUp(std::uint32_t) override {}
  void NotifyInterfaceDown(std::uint32_t) override {}
  void NotifyAddAddress(std::uint32_t, ns3::Ipv4InterfaceAddress) override {}
  void NotifyRemoveAddress(std::uint32_t, ns3::Ipv4InterfaceAddress) override {}
  void SetIpv4(ns3::Ptr<ns3::Ipv4> ipv4) override { ipv4_ = ipv4; }
  void PrintRoutingTable(ns3::Ptr<ns3::OutputStreamWrapper>, ns3::Time::Unit) const override {}

 protected:
  void DoDispose() override {
    ipv4_ = nullptr;
    ns3::Ipv4RoutingProtocol::DoDispose();
  }

 private:
  const Ns3Engine::Impl* engine_ = nullptr;
  std::uint32_t node_ = 0;
  ns3::Ptr<ns3::Ipv4> ipv4_;
};

class FlowRoutingHelper : public ns3::Ipv4RoutingHelper {
 public:
  FlowRoutingHelper(const Ns3Engine::Impl* engine, std::uint32_t first_node_id)
      : engine_(engine), first_node_id_(first_node_id) {}
  FlowRoutingHelper* Copy() const override { return new FlowRoutingHelper(*this); }
  ns3::Ptr<ns3::Ipv4RoutingProtocol> Create(ns3::Ptr<ns3::Node> node) const override {
    ns3::Ptr<FlowRouting> routing = ns3::CreateObject<FlowRouting>();
    routing->bind(engine_, node->GetId() - first_node_id_);
    return routing;
  }

 private:
  const Ns3Engine::Impl* engine_;
  std::uint32_t first_node_id_;
};

}  // namespace chakrasim::network
