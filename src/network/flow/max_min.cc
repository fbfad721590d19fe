#include "network/flow/max_min.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace chakrasim::network {

namespace {

// Rates that differ by less than this fraction of a link's capacity are taken as equal, and a
// link with less than it left as full: the floating-point noise of summing shares in different
// orders is some 1e-15 of the capacity, and a flow of 1 ms would move by 1e-3 ns at this bound.
constexpr double kRelativeTolerance = 1e-9;

// The share of a link with no unfixed flow of S: never a level of the filling.
constexpr double kNoShare = std::numeric_limits<double>::infinity();

// Up to this many links, progressive filling finds each level's bottleneck by looking at every
// link (the common case: a change touches a few flows); above, it keeps a heap of shares.
constexpr std::size_t kScanLinks = 256;

// The index of the first smallest value, kNone when all are infinite. Four running minima, then
// a search for the first equal to their least: with one running minimum each compare would wait
// for the one before.
std::uint32_t first_smallest(std::span<const double> values) {
  double lane[4] = {kNoShare, kNoShare, kNoShare, kNoShare};
  std::size_t i = 0;
  for (; i + 4 <= values.size(); i += 4) {
    for (std::size_t j = 0; j < 4; ++j) lane[j] = std::min(lane[j], values[i + j]);
  }
  for (; i < values.size(); ++i) lane[0] = std::min(lane[0], values[i]);
  const double smallest = std::min(std::min(lane[0], lane[1]), std::min(lane[2], lane[3]));
  if (smallest == kNoShare) return MaxMinSolver::kNone;
  return static_cast<std::uint32_t>(std::find(values.begin(), values.end(), smallest) - values.begin());
}

}  // namespace

MaxMinSolver::MaxMinSolver(std::vector<double> capacities) : links_(capacities.size()) {
  for (std::size_t l = 0; l < capacities.size(); ++l) links_[l].capacity = capacities[l];
}

std::uint32_t MaxMinSolver::add(std::span<const std::uint32_t> links) {
  std::uint32_t id = 0;
  if (free_.empty()) {
    id = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  } else {
    id = free_.back();
    free_.pop_back();
  }
  Flow& f = flows_[id];
  if (id >= room_.size()) room_.resize(id + 1, 0);
  const auto length = static_cast<std::uint32_t>(links.size());
  if (room_[id] < length) {
    f.first = static_cast<std::uint32_t>(path_links_.size());
    room_[id] = length;
    path_links_.resize(path_links_.size() + length);
    path_slots_.resize(path_slots_.size() + length);
  }
  f.length = length;
  for (std::uint32_t k = 0; k < length; ++k) {
    const std::uint32_t l = links[k];
    std::vector<OnLink>& on = links_[l].on;
    path_links_[f.first + k] = l;
    path_slots_[f.first + k] = static_cast<std::uint32_t>(on.size());
    on.push_back({id, k});
  }
  f.rate = 0;
  f.bottleneck = kNone;
  f.active = true;
  added_.push_back(id);
  return id;
}

void MaxMinSolver::remove(std::uint32_t id) {
  Flow& f = flows_[id];
  for (std::uint32_t k = 0; k < f.length; ++k) {
    const std::uint32_t l = path_links_[f.first + k];
    const std::uint32_t slot = path_slots_[f.first + k];
    std::vector<OnLink>& on = links_[l].on;
    const OnLink moved = on.back();
    on[slot] = moved;
    path_slots_[flows_[moved.flow].first + moved.k] = slot;
    on.pop_back();
    // The running sum restarts exact whenever the link empties.
    links_[l].load = on.empty() ? 0.0 : links_[l].load - f.rate;
    freed_links_.push_back(l);
  }
  if (f.bottleneck != kNone) --links_[f.bottleneck].bottlenecked;
  f.bottleneck = kNone;
  f.active = false;
  f.rate = 0;
  free_.push_back(id);
}

double MaxMinSolver::load(std::uint32_t link) const {
  double sum = 0;
  for (const OnLink& e : links_[link].on) sum += flows_[e.flow].rate;
  return sum;
}

void MaxMinSolver::join(std::uint32_t id) {
  Flow& f = flows_[id];
  f.in_set = solve_;
  f.old_rate = f.rate;
  f.fixed = false;
  set_.push_back(id);
  // Its links: what the flows outside S leave, and how many flows of S cross them. A link met
  // for the first time in this solve is summed up once; later joins only move one flow over.
  for (std::uint32_t l : links_of(id)) {
    Link& link = links_[l];
    if (link.seen == solve_) {
      link.outside += f.rate;
      ++link.in_set;
      continue;
    }
    link.seen = solve_;
    link.pos = static_cast<std::uint32_t>(set_links_.size());
    set_links_.push_back(l);
    // No other flow of S crosses it (it would have been met): all but this flow are outside.
    link.outside = link.capacity - (link.load - f.rate);
    link.in_set = 1;
  }
}

const std::vector<MaxMinSolver::Change>& MaxMinSolver::solve() {
  changes_.clear();
  set_.clear();
  set_links_.clear();
  if (++solve_ == 0) {  // wrapped: no flow or link may look as if it were in the new S
    for (Flow& f : flows_) f.in_set = 0;
    for (Link& l : links_) l.seen = 0;
    solve_ = 1;
  }
  // A new flow takes its share from the flows its links bottleneck (unless it is held lower
  // elsewhere, which the first round finds): they join at once, saving a round.
  for (std::uint32_t id : added_) {
    if (!flows_[id].active || flows_[id].in_set == solve_) continue;
    join(id);
    for (std::uint32_t l : links_of(id)) {
      if (links_[l].bottlenecked == 0) continue;
      for (const OnLink& e : links_[l].on) {
        if (flows_[e.flow].bottleneck == l && flows_[e.flow].in_set != solve_) join(e.flow);
      }
    }
  }
  // A departed flow leaves room only for the flows it bottlenecked; every other flow on its
  // links has its bottleneck elsewhere, untouched, and keeps its rate.
  for (std::uint32_t l : freed_links_) {
    if (links_[l].bottlenecked == 0) continue;
    for (const OnLink& e : links_[l].on) {
      if (flows_[e.flow].bottleneck == l && flows_[e.flow].in_set != solve_) join(e.flow);
    }
  }
  added_.clear();
  freed_links_.clear();
  if (set_.empty()) return changes_;
  fixed_order_.clear();
  do {
    fill();
    ++rounds_;
  } while (expand());
  flows_resolved_ += set_.size();
  for (std::uint32_t id : set_) {
    const Flow& f = flows_[id];
    if (f.rate == f.old_rate) continue;
    changes_.push_back({id, f.old_rate});
    for (std::uint32_t l : links_of(id)) links_[l].load += f.rate - f.old_rate;
  }
  return changes_;
}

void MaxMinSolver::fill() {
  for (std::uint32_t id : set_) flows_[id].fixed = false;
  // What the flows outside S leave of each link, shared by the flows of S on it: shares_[i] for
  // set_links_[i], infinite once no flow of S is left unfixed there.
  auto share_of = [&](const Link& link) {
    return link.unfixed == 0 ? kNoShare : std::max(0.0, link.left) / link.unfixed;
  };
  // A flow of S fixed at `rate` takes it from a link it crosses: what is left there, and the
  // share of the unfixed flows of S on it.
  auto take = [&](Link& crossed, double rate) {
    crossed.left -= rate;
    crossed.most = rate;  // shares only grow as the filling goes on
    --crossed.unfixed;
    shares_[crossed.pos] = share_of(crossed);
  };
  shares_.resize(set_links_.size());
  for (std::size_t i = 0; i < set_links_.size(); ++i) {
    Link& link = links_[set_links_[i]];
    link.left = link.outside;
    link.unfixed = link.in_set;
    link.most = 0;
    link.fixed_here = 0;
    shares_[i] = share_of(link);
  }
  // The flows of S not fixed yet: once none is left, no share is finite, and no scan need say so.
  std::size_t unfixed = set_.size();
  // After S grew, the last fill's fixes below keep_below_ are the ones this fill would make first
  // (expand() says why): they are made again without searching for them, in the same order, so
  // that every link's sums come out as a fill from level 0 would leave them.
  std::size_t kept = 0;
  for (; kept < fixed_order_.size(); ++kept) {
    const std::uint32_t id = fixed_order_[kept];
    Flow& f = flows_[id];
    if (!(f.rate < keep_below_)) break;  // the last fill's levels only grew: the rest are above
    f.fixed = true;
    ++links_[f.bottleneck].fixed_here;
    for (std::uint32_t l : links_of(id)) take(links_[l], f.rate);
  }
  fixed_order_.resize(kept);
  fixes_kept_ += kept;
  unfixed -= kept;
  // Smallest share first: the flows of S on that link are fixed at it, which takes the share
  // from every other link they cross, whose share can then only grow.
  const bool few = set_links_.size() <= kScanLinks;
  const auto later = std::greater<>();
  heap_.clear();
  if (!few) {
    for (std::uint32_t i = 0; i < shares_.size(); ++i) {
      if (shares_[i] != kNoShare) heap_.emplace_back(shares_[i], i);
    }
    std::make_heap(heap_.begin(), heap_.end(), later);
  }
  while (unfixed > 0) {
    std::uint32_t at = kNone;
    if (few) {  // a scan of a few doubles beats keeping a heap
      at = first_smallest(shares_);
    } else {  // an entry whose share is no longer the link's is stale
      while (at == kNone && !heap_.empty()) {
        std::pop_heap(heap_.begin(), heap_.end(), later);
        if (heap_.back().first == shares_[heap_.back().second]) at = heap_.back().second;
        heap_.pop_back();
      }
    }
    if (at == kNone) return;
    const double share = shares_[at];
    const std::uint32_t bottleneck = set_links_[at];
    // A flow outside S that holds more of this link than the share about to be fixed must give
    // way: it joins S now rather than in another round. That only raises shares, the filling's
    // order stays right: it returns more than the share to every link it crosses.
    const Link& at_link = links_[bottleneck];
    const double tolerance = kRelativeTolerance * at_link.capacity;
    bool joined = false;
    // When the flows outside S hold no more than the share between them, none can: no look.
    const bool look = at_link.capacity - at_link.outside > share + tolerance;
    for (const OnLink& e : look ? std::span<const OnLink>(at_link.on) : std::span<const OnLink>()) {
      const Flow& g = flows_[e.flow];
      if (g.in_set == solve_ || g.rate <= share + tolerance) continue;
      const std::size_t known = shares_.size();
      const double held = g.rate;
      join(e.flow);  // adds the links S did not cross yet to set_links_
      ++unfixed;
      for (std::uint32_t l : links_of(e.flow)) {
        Link& link = links_[l];
        if (link.pos >= known) {
          link.left = link.outside;
          link.unfixed = link.in_set;
          link.most = 0;
          link.fixed_here = 0;
          shares_.push_back(share_of(link));
        } else {
          link.left += held;
          ++link.unfixed;
          shares_[link.pos] = share_of(link);
        }
        if (!few) {
          heap_.emplace_back(shares_[link.pos], link.pos);
          std::push_heap(heap_.begin(), heap_.end(), later);
        }
      }
      joined = true;
    }
    if (joined) continue;
    for (const OnLink& e : links_[bottleneck].on) {
      Flow& f = flows_[e.flow];
      if (f.in_set != solve_ || f.fixed) continue;
      f.fixed = true;
      f.rate = share;
      fixed_order_.push_back(e.flow);
      --unfixed;
      if (f.bottleneck != kNone) --links_[f.bottleneck].bottlenecked;
      f.bottleneck = bottleneck;
      ++links_[bottleneck].bottlenecked;
      ++links_[bottleneck].fixed_here;
      for (std::uint32_t l : links_of(e.flow)) {
        Link& crossed = links_[l];
        take(crossed, share);
        if (!few && crossed.unfixed > 0) {
          heap_.emplace_back(shares_[crossed.pos], crossed.pos);
          std::push_heap(heap_.begin(), heap_.end(), later);
        }
      }
    }
  }
}

bool MaxMinSolver::expand() {
  bool grew = false;
  // The next fill may keep the fixes this one made below the rate r of every flow g that joins
  // now, less the tolerance of g's links. g was outside S all through this fill, holding r. A link
  // fixed at level x had no flow outside S above x + tolerance (a flow holding more joined before
  // the fix), so no link g crosses was fixed below r - tolerance: below that level this fill's
  // fixes were on links g does not cross, which the next fill sees as this one did. Nor does g
  // bring the next fill's level for a link it crosses below r sooner: with a left for the u
  // unfixed flows of S there and a >= u x at level x < r, taking g in gives
  // (a + r) / (u + 1) > x. So up to there the next fill makes the same fixes at the same levels
  // in the same order. (A flow that joined during this fill is in S from the start of the next:
  // the same argument, with the level at which it joined, holds for it.)
  keep_below_ = kNoShare;
  // Flows that join add their links to set_links_: those are looked at after the next fill.
  const std::size_t looked_at = set_links_.size();
  for (std::size_t i = 0; i < looked_at; ++i) {
    const std::uint32_t l = set_links_[i];
    const Link& link = links_[l];
    // The filling already took in every flow that held too much of a link it fixed (above), so
    // only a flow outside S whose bottleneck is this link can be wrong here: none, nothing to do.
    if (link.bottlenecked == link.fixed_here) continue;
    const double tolerance = kRelativeTolerance * link.capacity;
    const bool full = link.left <= tolerance;
    for (const OnLink& e : link.on) {
      const Flow& g = flows_[e.flow];
      if (g.in_set == solve_) continue;
      // g's bottleneck is no longer one: it has room to grow, or a flow of S now beats it there.
      // (A flow holding more of a full link than the share its flows of S were fixed at joined
      // during the filling, before that share was fixed.)
      if (g.bottleneck == l && (!full || link.most > g.rate + tolerance)) {
        join(e.flow);
        grew = true;
        for (std::uint32_t m : links_of(e.flow)) {
          keep_below_ = std::min(keep_below_, g.rate - kRelativeTolerance * links_[m].capacity);
        }
      }
    }
  }
  return grew;
}

}  // namespace chakrasim::network
