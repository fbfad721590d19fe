// Compiled as C++17, the one translation unit that includes ns-3's headers (with the two headers
// beside it, ns3_engine_impl.h and ns3_flow_routing.h): see ns3_engine.h.
#include "network/ns3/ns3_engine.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <ns3/boolean.h>
#include <ns3/config.h>
#include <ns3/data-rate.h>
#include <ns3/double.h>
#include <ns3/heap-scheduler.h>
#include <ns3/inet-socket-address.h>
#include <ns3/internet-stack-helper.h>
#include <ns3/ipv4-packet-filter.h>
#include <ns3/ipv4-queue-disc-item.h>
#include <ns3/ipv4-route.h>
#include <ns3/ipv4-routing-helper.h>
#include <ns3/ipv4-routing-protocol.h>
#include <ns3/ipv4.h>
#include <ns3/node-container.h>
#include <ns3/node.h>
#include <ns3/nstime.h>
#include <ns3/object-factory.h>
#include <ns3/packet.h>
#include <ns3/point-to-point-helper.h>
#include <ns3/queue-size.h>
#include <ns3/scheduler.h>
#include <ns3/simulator.h>
#include <ns3/socket.h>
#include <ns3/string.h>
#include <ns3/tcp-socket-factory.h>
#include <ns3/traffic-control-helper.h>
#include <ns3/type-id.h>
#include <ns3/uinteger.h>

#include "core/error.h"
#include "network/ns3/ns3_engine_impl.h"
#include "network/ns3/ns3_flow_routing.h"

namespace chakrasim::network {
namespace {

// The simulator's event list, with a look at its head: ns-3 has no public "next event time",
// but a scheduler's PeekNext() is public. The engine installs this one and finds it again
// through `current`.
class PeekScheduler : public ns3::HeapScheduler {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid = ns3::TypeId("chakrasim::PeekScheduler")
                                 .SetParent<ns3::HeapScheduler>()
                                 .SetGroupName("chakrasim")
                                 .AddConstructor<PeekScheduler>();
    return tid;
  }
  PeekScheduler() { current = this; }
  ~PeekScheduler() override {
    if (current == this) current = nullptr;
  }
  static PeekScheduler* current;
};
PeekScheduler* PeekScheduler::current = nullptr;

bool engine_alive = false;

// Sorts what a port sends into two bands: 0 for TCP segments without payload (ACKs, SYN, FIN),
// 1 for data. The packet handed to the queue starts with the TCP header; its data offset (the
// high 4 bits of byte 12, in 32-bit words) is the header's length with options.
class ControlFilter : public ns3::Ipv4PacketFilter {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid = ns3::TypeId("chakrasim::ControlFilter")
                                 .SetParent<ns3::Ipv4PacketFilter>()
                                 .SetGroupName("chakrasim")
                                 .AddConstructor<ControlFilter>();
    return tid;
  }

 private:
  std::int32_t DoClassify(ns3::Ptr<ns3::QueueDiscItem> item) const override {
    const auto* ip = dynamic_cast<const ns3::Ipv4QueueDiscItem*>(ns3::PeekPointer(item));
    std::uint8_t tcp[13];
    if (ip == nullptr || item->GetPacket()->CopyData(tcp, sizeof tcp) != sizeof tcp) return 1;
    const std::uint32_t header_bytes = (tcp[12] >> 4) * 4u;
    return ip->GetHeader().GetPayloadSize() <= header_bytes ? 0 : 1;
  }
};

}  // namespace

namespace {

ns3::Time ns_time(double ns) { return ns3::Time::FromDouble(ns, ns3::Time::NS); }

void set_default(const std::string& name, const ns3::AttributeValue& value) {
  if (!ns3::Config::SetDefaultFailSafe(name, value)) {
    fail("ns-3 has no attribute {} (or refused its value): this build's ns-3 does not match the backend", name);
  }
}

}  // namespace

Ns3Engine::Ns3Engine(std::uint32_t node_count, const std::vector<Ns3Link>& links,
                     const std::vector<std::uint32_t>& hosts, const Ns3Settings& settings)
    : impl_(std::make_unique<Impl>()) {
  if (engine_alive) {
    fail("the ns3 backend runs one network per process (ns-3's simulator is a singleton), and one exists already");
  }
  if (ns3::Time::GetResolution() != ns3::Time::NS) fail("ns-3's time resolution is not 1 ns");
  engine_alive = true;
  Impl& e = *impl_;
  e.settings = settings;

  ns3::ObjectFactory scheduler;
  scheduler.SetTypeId(PeekScheduler::GetTypeId());
  ns3::Simulator::SetScheduler(scheduler);

  const ns3::TypeId tcp = [&] {
    ns3::TypeId id;
    if (!ns3::TypeId::LookupByNameFailSafe(settings.tcp, &id)) fail("ns-3 has no TCP variant {}", settings.tcp);
    return id;
  }();
  set_default("ns3::TcpL4Protocol::SocketType", ns3::TypeIdValue(tcp));
  // IPv4 and TCP headers with the timestamp option take 20 + 32 bytes of every packet.
  set_default("ns3::TcpSocket::SegmentSize", ns3::UintegerValue(settings.mtu_bytes - 52));
  set_default("ns3::TcpSocket::InitialCwnd", ns3::UintegerValue(settings.initial_cwnd_segments));
  set_default("ns3::TcpSocket::SndBufSize", ns3::UintegerValue(settings.socket_buffer_bytes));
  set_default("ns3::TcpSocket::RcvBufSize", ns3::UintegerValue(settings.socket_buffer_bytes));
  set_default("ns3::TcpSocket::DelAckCount", ns3::UintegerValue(settings.delayed_ack_count));
  set_default("ns3::TcpSocket::DelAckTimeout", ns3::TimeValue(ns_time(settings.delayed_ack_timeout_ns)));
  set_default("ns3::TcpSocket::ConnTimeout", ns3::TimeValue(ns_time(settings.connect_timeout_ns)));
  set_default("ns3::TcpSocket::TcpNoDelay", ns3::BooleanValue(true));
  set_default("ns3::TcpSocketBase::MinRto", ns3::TimeValue(ns_time(settings.min_rto_ns)));
  set_default("ns3::TcpSocketBase::ClockGranularity", ns3::TimeValue(ns_time(settings.clock_granularity_ns)));
  e.nodes.Create(node_count);
  e.first_node_id = e.nodes.Get(0)->GetId();
  FlowRoutingHelper routing(impl_.get(), e.first_node_id);
  ns3::InternetStackHelper stack;
  stack.SetIpv6StackInstall(false);
  stack.SetRoutingHelper(routing);
  stack.Install(e.nodes);

  e.routes.resize(node_count);
  for (std::uint32_t n = 0; n < node_count; ++n) e.routes[n].push_back(nullptr);  // the loopback interface
  auto add_interface = [&](std::uint32_t node, ns3::Ptr<ns3::NetDevice> device) {
    ns3::Ptr<ns3::Ipv4> ipv4 = e.nodes.Get(node)->GetObject<ns3::Ipv4>();
    const std::uint32_t interface = ipv4->AddInterface(device);
    ipv4->AddAddress(interface, ns3::Ipv4InterfaceAddress(address_of(node), ns3::Ipv4Mask(0xffffffffu)));
    ipv4->SetUp(interface);
    ns3::Ptr<ns3::Ipv4Route> route = ns3::Create<ns3::Ipv4Route>();
    route->SetSource(address_of(node));
    route->SetGateway(ns3::Ipv4Address::GetAny());
    route->SetOutputDevice(device);
    if (e.routes[node].size() <= interface) e.routes[node].resize(interface + 1);
    e.routes[node][interface] = route;
    return interface;
  };
  ns3::PointToPointHelper p2p;
  p2p.SetDeviceAttribute("Mtu", ns3::UintegerValue(settings.mtu_bytes));
  // With queue discs in front, the device keeps a single packet waiting (ns-3 stops the queue
  // disc while the device is full), so the queues that build up are the discs', marked and
  // sorted there. Without either, the device's own drop-tail queue is the port's queue.
  const bool discs = settings.red_ecn || settings.ack_priority;
  const ns3::QueueSize port_bytes(ns3::QueueSizeUnit::BYTES, settings.queue_bytes);
  p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
               ns3::QueueSizeValue(discs ? ns3::QueueSize(ns3::QueueSizeUnit::PACKETS, 1) : port_bytes));
  ns3::TrafficControlHelper port;
  const std::uint32_t queue_packets = std::max(settings.queue_bytes / settings.mtu_bytes, settings.mark_packets + 1);
  auto red = [&](auto add) {
    add("ns3::RedQueueDisc", "UseEcn", ns3::BooleanValue(true), "UseHardDrop", ns3::BooleanValue(false), "Gentle",
        ns3::BooleanValue(false), "QW", ns3::DoubleValue(1.0), "MinTh", ns3::DoubleValue(settings.mark_packets),
        "MaxTh", ns3::DoubleValue(settings.mark_packets), "MaxSize",
        ns3::QueueSizeValue(ns3::QueueSize(ns3::QueueSizeUnit::PACKETS, queue_packets)));
  };
  if (settings.ack_priority) {
    // A strict-priority disc of two bands, sorted by ControlFilter (the priority map, which the
    // filter overrides, names band 1 only).
    ControlFilter::GetTypeId();
    const std::uint16_t root =
        port.SetRootQueueDisc("ns3::PrioQueueDisc", "Priomap", ns3::StringValue("1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"));
    port.AddPacketFilter(root, "chakrasim::ControlFilter");
    const auto bands = port.AddQueueDiscClasses(root, 2, "ns3::QueueDiscClass");
    port.AddChildQueueDisc(root, bands[0], "ns3::FifoQueueDisc", "MaxSize", ns3::QueueSizeValue(port_bytes));
    if (settings.red_ecn) {
      red([&](auto&&... args) { port.AddChildQueueDisc(root, bands[1], args...); });
    } else {
      port.AddChildQueueDisc(root, bands[1], "ns3::FifoQueueDisc", "MaxSize", ns3::QueueSizeValue(port_bytes));
    }
  } else if (settings.red_ecn) {
    red([&](auto&&... args) { port.SetRootQueueDisc(args...); });
  }
  e.link_hop.reserve(links.size());
  for (const Ns3Link& l : links) {
    const double bps = std::round(l.bytes_per_ns * 8e9);
    if (!(bps >= 1 && bps < 1.8e19)) fail("ns-3: a link of {} bytes/ns has no bit rate ns-3 can hold", l.bytes_per_ns);
    p2p.SetDeviceAttribute("DataRate", ns3::DataRateValue(ns3::DataRate(static_cast<std::uint64_t>(bps))));
    p2p.SetChannelAttribute("Delay", ns3::TimeValue(ns_time(l.latency_ns)));
    ns3::NetDeviceContainer devices = p2p.Install(e.nodes.Get(l.from), e.nodes.Get(l.to));
    if (discs) port.Install(devices.Get(0));
    e.link_hop.push_back({l.from, add_interface(l.from, devices.Get(0))});
    e.link_device.push_back(devices.Get(0));
    e.link_rate.emplace_back(static_cast<std::uint64_t>(bps));
    add_interface(l.to, devices.Get(1));
  }

  e.by_client.resize(node_count);
  Impl* self = impl_.get();
  for (std::uint32_t host : hosts) {
    ns3::Ptr<ns3::Socket> listener = ns3::Socket::CreateSocket(e.nodes.Get(host), ns3::TcpSocketFactory::GetTypeId());
    if (listener->Bind(ns3::InetSocketAddress(address_of(host), kServerPort)) != 0 || listener->Listen() != 0) {
      fail("ns-3: node {} cannot listen for connections", host);
    }
    listener->SetAcceptCallback(ns3::MakeBoundCallback(&Impl::on_request, self),
                                ns3::MakeBoundCallback(&Impl::on_accept, self));
    e.listeners.push_back(listener);
  }
}

Ns3Engine::~Ns3Engine() {
  for (Impl::Connection& c : impl_->connections) {
    c.client = nullptr;
    c.server = nullptr;
  }
  impl_->listeners.clear();
  impl_->routes.clear();
  impl_->link_device.clear();
  ns3::Simulator::Destroy();
  impl_.reset();
  engine_alive = false;
}

void Ns3Engine::start_flow(std::uint64_t at_ns, std::uint64_t bytes, std::uint64_t tag,
                           const std::vector<std::uint32_t>& path, const std::vector<std::uint32_t>& reverse_path) {
  Impl& e = *impl_;
  const std::uint64_t now = now_ns();
  if (at_ns < now) fail("ns-3: a message sent at {} ns, but ns-3's clock reads {} ns already", at_ns, now);
  const std::uint32_t src = e.link_hop[path.front()].node;
  const std::uint32_t dst = e.link_hop[reverse_path.front()].node;
  std::vector<std::uint32_t>& waiting = e.idle[Impl::pair_key(src, dst)];
  const bool reuse = !waiting.empty();
  std::uint32_t id = 0;
  if (reuse) {
    id = waiting.back();
    waiting.pop_back();
  } else {
    id = static_cast<std::uint32_t>(e.connections.size());
    e.connections.emplace_back();
    e.connections.back().src = src;
    e.connections.back().dst = dst;
  }
  Impl::Connection& c = e.connections[id];
  c.busy = true;
  c.tag = tag;
  c.bytes = bytes;
  c.unsent = 0;  // handed to the socket from at_ns on (begin_message), not when an ACK makes room before
  c.received = 0;
  c.old_forward.swap(c.forward);
  c.old_reverse.swap(c.reverse);
  c.forward.clear();
  c.reverse.clear();
  for (std::uint32_t link : path) c.forward.push_back(e.link_hop[link]);
  for (std::uint32_t link : reverse_path) c.reverse.push_back(e.link_hop[link]);
  ns3::Simulator::Schedule(ns3::NanoSeconds(static_cast<std::int64_t>(at_ns - now)),
                           reuse ? &Impl::begin_message : &Impl::open_connection, &e, id);
}

void Ns3Engine::Impl::open_connection(Impl* e, std::uint32_t id) {
  Connection& c = e->connections[id];
  c.unsent = c.bytes;
  // Ports go up from kFirstClientPort, one per connection of the sender.
  c.client = ns3::Socket::CreateSocket(e->nodes.Get(c.src), ns3::TcpSocketFactory::GetTypeId());
  std::vector<std::uint32_t>& ports = e->by_client[c.src];
  const std::uint32_t port = kFirstClientPort + static_cast<std::uint32_t>(ports.size());
  if (port > 0xffff ||
      c.client->Bind(ns3::InetSocketAddress(address_of(c.src), static_cast<std::uint16_t>(port))) != 0) {
    e->fail_connection(id, "cannot start: every port of the sender is taken (a node keeps at most 64512 connections)");
    return;
  }
  c.port = static_cast<std::uint16_t>(port);
  ports.push_back(id);
  c.client->SetConnectCallback(ns3::MakeBoundCallback(&Impl::on_connected, e, id),
                               ns3::MakeBoundCallback(&Impl::on_connect_failed, e, id));
  c.client->SetSendCallback(ns3::MakeBoundCallback(&Impl::on_send_space, e, id));
  c.client->SetCloseCallbacks(ns3::MakeBoundCallback(&Impl::on_close, e, id),
                              ns3::MakeBoundCallback(&Impl::on_close, e, id));
  c.client->Connect(ns3::InetSocketAddress(address_of(c.dst), kServerPort));
}

void Ns3Engine::Impl::begin_message(Impl* e, std::uint32_t id) {
  e->connections[id].unsent = e->connections[id].bytes;
  e->fill(id);
}

void Ns3Engine::Impl::fill(std::uint32_t id) {
  Connection& c = connections[id];
  if (!c.connected) return;
  while (c.unsent > 0) {
    const std::uint32_t room = c.client->GetTxAvailable();
    if (room == 0) break;
    const std::uint32_t n = static_cast<std::uint32_t>(std::min<std::uint64_t>(c.unsent, room));
    const int sent = c.client->Send(ns3::Create<ns3::Packet>(n));
    if (sent <= 0) break;
    c.unsent -= static_cast<std::uint64_t>(sent);
  }
}

void Ns3Engine::Impl::on_connected(Impl* e, std::uint32_t id, ns3::Ptr<ns3::Socket>) {
  e->connections[id].connected = true;
  e->fill(id);
}

void Ns3Engine::Impl::on_connect_failed(Impl* e, std::uint32_t id, ns3::Ptr<ns3::Socket>) {
  e->fail_connection(id, "could not be opened (the SYN was lost more times than ns-3 retries)");
}

void Ns3Engine::Impl::on_send_space(Impl* e, std::uint32_t id, ns3::Ptr<ns3::Socket>, std::uint32_t) { e->fill(id); }

bool Ns3Engine::Impl::on_request(Impl*, ns3::Ptr<ns3::Socket>, const ns3::Address&) { return true; }

void Ns3Engine::Impl::on_accept(Impl* e, ns3::Ptr<ns3::Socket> socket, const ns3::Address& from) {
  const ns3::InetSocketAddress peer = ns3::InetSocketAddress::ConvertFrom(from);
  const Connection* c = e->connection_of(peer.GetIpv4().Get() - kFirstAddress, peer.GetPort());
  if (c == nullptr) {
    socket->Close();
    return;
  }
  const auto id = static_cast<std::uint32_t>(c - e->connections.data());
  e->connections[id].server = socket;
  socket->SetRecvCallback(ns3::MakeBoundCallback(&Impl::on_receive, e, id));
  socket->SetCloseCallbacks(ns3::MakeBoundCallback(&Impl::on_close, e, id),
                            ns3::MakeBoundCallback(&Impl::on_close, e, id));
  on_receive(e, id, socket);
}

void Ns3Engine::Impl::on_receive(Impl* e, std::uint32_t id, ns3::Ptr<ns3::Socket> socket) {
  Connection& c = e->connections[id];
  while (ns3::Ptr<ns3::Packet> p = socket->Recv()) c.received += p->GetSize();
  if (c.busy && c.received >= c.bytes) {
    // The message's bytes are all read; the sender's ACKs may still be on their way, but the
    // connection may take the pair's next message now.
    c.busy = false;
    e->arrivals.push_back(c.tag);
    e->idle[pair_key(c.src, c.dst)].push_back(id);
    ns3::Simulator::Stop();  // after this event: the caller reports the arrival at this very ns
  }
}

void Ns3Engine::Impl::on_close(Impl* e, std::uint32_t id, ns3::Ptr<ns3::Socket>) {
  // Connections stay open for the engine's life: an end that closes was reset or timed out.
  e->fail_connection(id, "was reset or timed out");
}

void Ns3Engine::Impl::on_transmit(Impl* e, std::uint32_t link, ns3::Ptr<const ns3::Packet> packet) {
  if (e->link_listener == nullptr) return;
  // The point-to-point device takes this long to put the packet (with its PPP header) on the wire.
  const std::int64_t start = ns3::Simulator::Now().GetTimeStep();
  const std::int64_t took = e->link_rate[link].CalculateBytesTxTime(packet->GetSize()).GetTimeStep();
  e->link_listener->on_transmit(link, static_cast<std::uint64_t>(start), static_cast<std::uint64_t>(start + took));
}

void Ns3Engine::listen_to_links(Ns3LinkListener* listener) {
  Impl& e = *impl_;
  if (!e.links_traced && listener != nullptr) {
    e.links_traced = true;
    for (std::uint32_t link = 0; link < e.link_device.size(); ++link) {
      e.link_device[link]->TraceConnectWithoutContext("PhyTxBegin",
                                                      ns3::MakeBoundCallback(&Impl::on_transmit, &e, link));
    }
  }
  e.link_listener = listener;
}

std::uint64_t Ns3Engine::next_event_ns() const {
  const PeekScheduler* s = PeekScheduler::current;
  if (s == nullptr || s->IsEmpty()) return kNoEvent;
  return s->PeekNext().key.m_ts;
}

std::uint64_t Ns3Engine::now_ns() const { return static_cast<std::uint64_t>(ns3::Simulator::Now().GetTimeStep()); }

void Ns3Engine::run_until(std::uint64_t until_ns) {
  if (next_event_ns() > until_ns) return;
  const std::uint64_t now = now_ns();
  const ns3::EventId stop = ns3::Simulator::Schedule(ns3::NanoSeconds(static_cast<std::int64_t>(until_ns - now)),
                                                     static_cast<void (*)()>(&ns3::Simulator::Stop));
  ns3::Simulator::Run();
  // Stopped by an arrival first: the stop event stays behind, cancelled (cheaper than removing
  // it from the heap); ns-3 skips it when its time comes.
  if (!stop.IsExpired()) ns3::Simulator::Cancel(stop);
  if (!impl_->error.empty()) throw Error(impl_->error);
}

std::vector<std::uint64_t> Ns3Engine::take_arrivals() {
  std::vector<std::uint64_t> out;
  out.swap(impl_->arrivals);
  return out;
}

std::uint64_t Ns3Engine::events() const { return ns3::Simulator::GetEventCount(); }

std::size_t Ns3Engine::connections() const { return impl_->connections.size(); }

}  // namespace chakrasim::network
