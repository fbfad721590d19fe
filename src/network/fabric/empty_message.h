// A message of no bytes on a backend that routes through a Fabric: there is nothing to share a
// link with or to cut into packets, so it arrives after its path's latency alone, and a flow
// observer hears of it as a flow of no bytes (the flow and ns-3 backends alike).
#pragma once

#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "core/event_queue.h"
#include "core/sim_time.h"
#include "network/fabric/fabric.h"
#include "network/network.h"

namespace chakrasim::network {

inline void deliver_empty_message(EventQueue& queue, const Fabric& fabric, const std::vector<std::uint32_t>& route,
                                  NpuId src, NpuId dst, std::uint64_t message, FlowObserver* observer) {
  double latency_ns = 0;
  for (const std::uint32_t id : route) latency_ns += fabric.link(id).latency_ns;
  const Tick at = time_after(queue.now(), ticks_from_ns(latency_ns, [&] { return "a path's latency"; }),
                             [&] { return fmt::format("an empty message from NPU {} to NPU {}", src, dst); });
  queue.schedule(at, EventTarget::kNetwork, 0, dst, message);
  if (observer != nullptr) observer->on_flow({src, dst, 0, queue.now(), at, static_cast<std::uint32_t>(route.size())});
}

}  // namespace chakrasim::network
