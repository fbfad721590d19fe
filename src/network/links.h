// The links of a topology and the route a message takes over them, for every backend that models
// individual links (the congestion-aware one today; flow- and packet-level ones next). A backend
// keeps its own per-link state in a vector indexed by these ids.
//
// Links, per dimension, all directional:
//   Ring:            two per NPU: to the neighbour at coordinate+1 (k = 0) and at coordinate-1 (k = 1)
//   FullyConnected:  n-1 per NPU: to the NPU k+1 coordinates further on (mod n), k = 0..n-2
//   Switch:          two per NPU: up to the dimension's switch (k = 0), down from it (k = 1)
// Ids: dimension by dimension, dimension 0 first; within a dimension NPU by NPU, then k.
// (FullyConnected links are numbered by offset, not by destination, so that a folded table's
// NPU 0 links stand for every NPU's.)
//
// Routes (docs/network.md): dimension by dimension, lowest first; within a dimension the shorter
// way round a Ring (clockwise, k = 0, on a tie), the direct link in a FullyConnected group, and up
// then down through a Switch.
//
// Folded tables, for folded runs (network/folding.h): only the class representatives' links
// exist, and every NPU's link k of dimension d is its representative's link k of dimension d.
// The folding's moves map an NPU's links onto its representative's with the same k (a rotation
// keeps ring directions and fully connected offsets; any move keeps a switch's up- and
// down-links), and in a folded run links that map onto each other carry the same traffic at the
// same times (network/analytical/congestion_aware.h says why that is exact). A symmetric run's
// table keeps NPU 0's links alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/types.h"
#include "network/folding.h"
#include "network/topology.h"

namespace chakrasim::network {

class LinkTable {
 public:
  // Where a message is on its route: at NPU `at`, or, when `in_switch`, inside the switch of the
  // dimension it is crossing, having come up from `at`.
  struct Cursor {
    NpuId at = 0;
    bool in_switch = false;
  };

  // `folding`: nullptr for every NPU's links.
  LinkTable(const Topology& topology, const Folding* folding);

  std::uint32_t size() const { return count_; }
  bool folded() const { return folding_ != nullptr; }
  // The dimension link `link` belongs to, and that dimension's spec (its bandwidth and latency).
  std::size_t dim_of(std::uint32_t link) const;
  const DimensionSpec& spec_of(std::uint32_t link) const { return topology_.spec().dims[dim_of(link)]; }
  // For reports: "NPU 3 -> NPU 4 (ring, dim 0)", or "every NPU's ring link +1 (dim 0)" when folded.
  std::string name(std::uint32_t link) const;

  // True when a message at `cursor` has reached `dst`.
  static bool arrived(const Cursor& cursor, NpuId dst) { return cursor.at == dst && !cursor.in_switch; }
  // The next link of the route from `cursor` to `dst` (which it must not have reached); moves the
  // cursor to the far end of that link.
  std::uint32_t next(Cursor& cursor, NpuId dst) const;
  // The whole route from `src` to `dst` (src != dst), first link first.
  std::vector<std::uint32_t> route(NpuId src, NpuId dst) const;

 private:
  // Link `k` of dimension `d` owned by NPU `owner` (its representative's, when folded).
  std::uint32_t id(std::size_t d, NpuId owner, std::uint32_t k) const {
    return dim_base_[d] + per_npu_[d] * (folding_ != nullptr ? folding_->class_of(owner) : owner) + k;
  }

  const Topology& topology_;
  const Folding* folding_;
  std::vector<std::uint32_t> dim_base_;  // first link id of each dimension
  std::vector<std::uint32_t> per_npu_;   // links per NPU in each dimension
  std::uint32_t count_ = 0;
};

}  // namespace chakrasim::network
