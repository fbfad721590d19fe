// Max-min fair rates of flows over capacitated links, kept up to date incrementally as flows
// come and go. The flow backend's solver (flow_network.h); it knows nothing of time or bytes.
//
// The allocation is max-min fair exactly when every flow has a bottleneck: a link it crosses
// that is full and on which no flow gets more than it does. A change can only break that
// condition for flows on the links it touches, so solve() re-solves a set S of flows, starting
// from the new flows with the flows their links bottleneck, and the flows a departed flow
// bottlenecked, by progressive filling over what the other flows leave of each link. A flow
// outside S that holds more of a link than the share about to be fixed there joins S during the
// filling. After it, a flow outside S whose bottleneck is no longer full, or is now beaten by a
// flow of S, joins S, and S is filled again, keeping the fixes of the last filling that the
// flows which joined cannot have changed (fill()). When no such flow remains, every flow has its
// bottleneck and the answer is the max-min allocation, found by touching the flows that change
// and their neighbours rather than the whole connected component (which on a fat-tree is every
// flow).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace chakrasim::network {

class MaxMinSolver {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;

  // One capacity per link, in any unit of rate (the flow backend uses bytes per ns).
  explicit MaxMinSolver(std::vector<double> capacities);

  // A new flow over `links` (each at most once); its rate is 0 until the next solve(). Ids of
  // removed flows are reused.
  std::uint32_t add(std::span<const std::uint32_t> links);
  // Removes a flow; the others share what it held at the next solve().
  void remove(std::uint32_t flow);

  struct Change {
    std::uint32_t flow;
    double old_rate;  // 0 for a flow added since the last solve
  };
  // Re-solves after the adds and removes since the last call. Returns the flows whose rate
  // changed, each once; valid until the next call.
  const std::vector<Change>& solve();

  double rate(std::uint32_t flow) const { return flows_[flow].rate; }
  std::span<const std::uint32_t> links_of(std::uint32_t flow) const {
    return {path_links_.data() + flows_[flow].first, flows_[flow].length};
  }
  // Sum of the rates of the flows crossing `link`.
  double load(std::uint32_t link) const;
  double capacity(std::uint32_t link) const { return links_[link].capacity; }
  std::uint32_t flows_on(std::uint32_t link) const { return static_cast<std::uint32_t>(links_[link].on.size()); }
  std::uint32_t link_count() const { return static_cast<std::uint32_t>(links_.size()); }

  // Work done, for benchmarks and tests: flows in S at the end of each solve, rounds of filling
  // (a round more each time S grew), and flows whose fix a round kept from the round before,
  // summed over solves.
  std::uint64_t flows_resolved() const { return flows_resolved_; }
  std::uint64_t rounds() const { return rounds_; }
  std::uint64_t fixes_kept() const { return fixes_kept_; }

 private:
  struct Flow {
    // What scans of a link's flows read first, together.
    double rate = 0;
    std::uint32_t in_set = 0;          // == solve_: in S
    std::uint32_t bottleneck = kNone;  // the link that fixed its rate in the last solve
    double old_rate = 0;
    // Its path: path_links_[first, first + length), and path_slots_ at the same places. Kept here
    // rather than in a vector per flow: the scans that read the flow then read its links, with
    // no vector header in between.
    std::uint32_t first = 0;
    std::uint32_t length = 0;
    bool fixed = false;  // during a fill
    bool active = false;
  };
  struct OnLink {
    std::uint32_t flow;
    std::uint32_t k;  // the link's position on the flow's path
  };
  struct Link {
    double capacity = 0;
    std::vector<OnLink> on;
    std::uint32_t bottlenecked = 0;  // flows whose bottleneck it is
    double load = 0;                 // the rates of its flows, summed as they change
    // During a solve, once S crosses it:
    std::uint32_t seen = 0;    // == solve_: S crosses it
    std::uint32_t pos = 0;     // its index in set_links_
    double outside = 0;        // capacity less the rates of the flows outside S
    std::uint32_t in_set = 0;  // flows of S on it
    // During a fill:
    std::uint32_t unfixed = 0;     // flows of S on it not yet fixed
    double left = 0;               // capacity not taken by the flows outside S and those fixed
    double most = 0;               // the highest rate of a flow of S on it
    std::uint32_t fixed_here = 0;  // flows of S it fixed
  };

  void join(std::uint32_t flow);  // adds to S
  void fill();                    // progressive filling of S over the links it crosses
  bool expand();                  // adds the flows outside S whose bottleneck broke; any?

  std::vector<Flow> flows_;  // kept small: the scans of a link's flows read them
  // Every flow's path in one pool: its links, and its index in each link's `on`. A flow id owns
  // room_[id] places from its `first`; a reused id with a longer path takes new room at the end
  // (the old room is left unused: an id's room only grows, so the waste stays bounded).
  std::vector<std::uint32_t> path_links_;
  std::vector<std::uint32_t> path_slots_;
  std::vector<std::uint32_t> room_;  // per flow id
  std::vector<Link> links_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> added_;                    // since the last solve
  std::vector<std::uint32_t> freed_links_;              // links a removed flow crossed
  std::vector<std::uint32_t> set_;                      // S
  std::vector<std::uint32_t> set_links_;                // the links S crosses, this round
  std::vector<double> shares_;                          // per link of set_links_: its share for the unfixed flows of S
  std::vector<std::pair<double, std::uint32_t>> heap_;  // (share, index in set_links_)
  std::vector<Change> changes_;
  // The flows of S in the order the last fill fixed them, each at its rate then; the next fill
  // of this solve makes again those fixed below keep_below_ (see expand()).
  std::vector<std::uint32_t> fixed_order_;
  double keep_below_ = 0;
  std::uint32_t solve_ = 0;
  std::uint64_t flows_resolved_ = 0;
  std::uint64_t rounds_ = 0;
  std::uint64_t fixes_kept_ = 0;
};

}  // namespace chakrasim::network
