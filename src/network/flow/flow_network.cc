#include "network/flow/flow_network.h"

#include <algorithm>
#include <cmath>

#include "core/sim_time.h"

namespace chakrasim::network {

FlowNetwork::FlowNetwork(std::shared_ptr<const Fabric> fabric, EventQueue& queue, ArrivalSink& sink,
                         std::uint64_t ecmp_seed)
    : fabric_(std::move(fabric)), router_(*fabric_, ecmp_seed), queue_(queue), sink_(sink) {
  links_.resize(fabric_->link_count());
  for (std::uint32_t id = 0; id < links_.size(); ++id) links_[id].bytes_per_ns = fabric_->link(id).bytes_per_ns;
}

void FlowNetwork::send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) {
  router_.route(src, dst, next_flow_key_++, route_);
  double latency = 0;
  for (std::uint32_t id : route_) latency += fabric_->link(id).latency_ns;
  if (bytes == 0) {  // nothing to share: the path's latency alone
    const Tick at = time_after(queue_.now(), ticks_from_ns(latency, [&] { return "a path's latency"; }),
                               [&] { return fmt::format("an empty message from NPU {} to NPU {}", src, dst); });
    queue_.schedule(at, EventTarget::kNetwork, 0, dst, message);
    return;
  }
  std::uint32_t id = 0;
  if (free_flows_.empty()) {
    id = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  } else {
    id = free_flows_.back();
    free_flows_.pop_back();
  }
  Flow& f = flows_[id];
  f.message = message;
  f.dst = dst;
  f.remaining_bytes = static_cast<double>(bytes);
  f.rate = 0;
  f.updated_at = static_cast<double>(queue_.now());
  f.latency_ns = latency;
  f.active = true;
  f.path = route_;
  ++active_;
  for (std::uint32_t link : f.path) links_[link].flows.push_back(id);
  solve_around(f.path);
}

void FlowNetwork::solve_around(const std::vector<std::uint32_t>& start) {
  const double now = static_cast<double>(queue_.now());
  ++solve_;
  // The component: links reached from `start` through the flows crossing them.
  std::vector<std::uint32_t> links, flows;
  for (std::uint32_t l : start) {
    if (links_[l].seen != solve_) {
      links_[l].seen = solve_;
      links.push_back(l);
    }
  }
  for (std::size_t k = 0; k < links.size(); ++k) {
    for (std::uint32_t fid : links_[links[k]].flows) {
      Flow& f = flows_[fid];
      if (f.fixed) continue;  // reused as "collected" until the fill below
      f.fixed = true;
      flows.push_back(fid);
      for (std::uint32_t l : f.path) {
        if (links_[l].seen != solve_) {
          links_[l].seen = solve_;
          links.push_back(l);
        }
      }
    }
  }
  // Bring every flow of the component up to now at its old rate, then fill progressively: the
  // link whose capacity left, shared by its unfixed flows, is smallest fixes them at that share.
  for (std::uint32_t fid : flows) {
    Flow& f = flows_[fid];
    f.remaining_bytes = std::max(0.0, f.remaining_bytes - f.rate * (now - f.updated_at));
    f.updated_at = now;
    f.fixed = false;
    f.previous_rate = f.rate;
  }
  for (std::uint32_t l : links) {
    links_[l].left = links_[l].bytes_per_ns;
    links_[l].unfixed = static_cast<std::uint32_t>(links_[l].flows.size());
  }
  // The links by their fair share, smallest first. Fixing flows at the smallest share s takes s
  // from every other link they cross, whose share can then only grow: entries are pushed anew
  // when a link changes, and an entry whose share is no longer the link's is skipped.
  using Entry = std::pair<double, std::uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> by_share;
  auto share_of = [&](std::uint32_t l) { return std::max(0.0, links_[l].left) / links_[l].unfixed; };
  for (std::uint32_t l : links) {
    if (links_[l].unfixed > 0) by_share.emplace(share_of(l), l);
  }
  while (!by_share.empty()) {
    const auto [share, bottleneck] = by_share.top();
    by_share.pop();
    if (links_[bottleneck].unfixed == 0 || share != share_of(bottleneck)) continue;
    for (std::uint32_t fid : links_[bottleneck].flows) {
      Flow& f = flows_[fid];
      if (f.fixed) continue;
      f.fixed = true;
      f.rate = share;
      for (std::uint32_t l : f.path) {
        links_[l].left -= share;
        if (--links_[l].unfixed > 0 && l != bottleneck) by_share.emplace(share_of(l), l);
      }
    }
  }
  for (std::uint32_t fid : flows) {
    Flow& f = flows_[fid];
    f.fixed = false;
    // At an unchanged rate the flow still ends when its pending completion says.
    if (f.rate == f.previous_rate) continue;
    ++f.version;
    // Exact in doubles; ticks truncate, as the analytical backends' delays do, so that where the
    // models coincide (one message per link at a time) the figures agree to the ns.
    const Tick left = ticks_from_ns(f.remaining_bytes / f.rate, [&] {
      return fmt::format("a flow with {} bytes left at {} bytes/ns", f.remaining_bytes, f.rate);
    });
    f.finish_ns = now + f.remaining_bytes / f.rate;
    const Tick done = time_after(queue_.now(), left, [&] { return std::string("a flow"); });
    completions_.push({done, fid, f.version});
  }
}

Tick FlowNetwork::next_event_time() const {
  // Stale entries (older versions) are dropped in advance_to; one at the top only delays the
  // answer to a time when nothing happens, which advance_to then skips.
  return completions_.empty() ? kNeverTick : completions_.top().time;
}

void FlowNetwork::finish(std::uint32_t fid) {
  Flow& f = flows_[fid];
  f.active = false;
  --active_;
  for (std::uint32_t l : f.path) {
    std::vector<std::uint32_t>& on = links_[l].flows;
    on.erase(std::find(on.begin(), on.end(), fid));
  }
  // The last byte arrives the path latency after it was sent, truncated once, as the
  // congestion-aware backend truncates latency plus serialisation.
  const Tick at = std::max(queue_.now(), ticks_from_ns(f.finish_ns + f.latency_ns, [&] {
                             return fmt::format("a flow's arrival at {} ns", f.finish_ns + f.latency_ns);
                           }));
  queue_.schedule(at, EventTarget::kNetwork, 0, f.dst, f.message);
}

void FlowNetwork::advance_to(Tick t) {
  // Finishing flows re-solves the others, which may end within the same ns: repeat until none is due.
  while (!completions_.empty() && completions_.top().time <= t) {
    std::vector<std::uint32_t> touched;
    while (!completions_.empty() && completions_.top().time <= t) {
      const Completion c = completions_.top();
      completions_.pop();
      Flow& f = flows_[c.flow];
      if (!f.active || f.version != c.version) continue;
      finish(c.flow);
      touched.insert(touched.end(), f.path.begin(), f.path.end());
      free_flows_.push_back(c.flow);
    }
    // The finished flows' links, freed: their remaining flows share the capacity anew.
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    std::erase_if(touched, [&](std::uint32_t l) { return links_[l].flows.empty(); });
    if (!touched.empty()) solve_around(touched);
  }
}

void FlowNetwork::handle(const Event& event) { sink_.on_arrival(event.arg); }

double FlowNetwork::rate_of(std::uint64_t message) const {
  for (const Flow& f : flows_) {
    if (f.active && f.message == message) return f.rate;
  }
  return 0;
}

}  // namespace chakrasim::network
