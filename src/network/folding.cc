#include "network/folding.h"

#include "core/error.h"

namespace chakrasim::network {

Folding::Folding(const Topology& topology, std::vector<Move> moves) : topology_(&topology), moves_(std::move(moves)) {
  if (moves_.size() != topology.dims()) fail("internal error: a folding needs one move per network dimension");
  for (std::size_t d = 0; d < moves_.size(); ++d) {
    Move& m = moves_[d];
    const std::uint32_t n = topology.npus_in(d);
    if (m.kind == MoveKind::kRotate && (m.step == 0 || m.step > n)) m.step = n;
    if (m.kind == MoveKind::kRotate && n % m.step != 0)
      fail("internal error: rotation step {} does not divide {}", m.step, n);
    if (m.kind == MoveKind::kFlip && ((n & (n - 1)) != 0 || m.mask >= n))
      fail("internal error: flip mask {} on a dimension of {} NPUs", m.mask, n);
  }
  // Representatives are the NPUs that are their own; classes are numbered in their order.
  const NpuId npus = topology.npu_count();
  class_of_.assign(npus, 0);
  std::vector<std::uint32_t> index_of_representative(npus, 0);
  for (NpuId npu = 0; npu < npus; ++npu) {
    NpuId rep = 0;
    for (std::size_t d = 0; d < moves_.size(); ++d) {
      rep += representative_coordinate(d, topology.coordinate(npu, d)) * topology.stride(d);
    }
    if (rep == npu) {
      index_of_representative[npu] = static_cast<std::uint32_t>(representatives_.size());
      representatives_.push_back(npu);
    }
    // rep <= npu coordinate by coordinate, so it was numbered already.
    class_of_[npu] = index_of_representative[rep];
  }
}

Folding Folding::whole(const Topology& topology) {
  return Folding(topology, std::vector<Move>(topology.dims(), Move{MoveKind::kRotate, 1, 0}));
}

std::uint32_t Folding::representative_coordinate(std::size_t dim, std::uint32_t x) const {
  const Move& m = moves_[dim];
  return m.kind == MoveKind::kRotate ? x % m.step : x & ~m.mask;
}

NpuId Folding::seen_from_representative(NpuId member, NpuId npu) const {
  NpuId image = 0;
  for (std::size_t d = 0; d < moves_.size(); ++d) {
    const std::uint32_t n = topology_->npus_in(d);
    const std::uint32_t at = topology_->coordinate(member, d);
    const std::uint32_t x = topology_->coordinate(npu, d);
    const std::uint32_t rep = representative_coordinate(d, at);
    // The move taking `member` to its representative, applied to x.
    const std::uint32_t y = moves_[d].kind == MoveKind::kRotate ? (x + n - (at - rep)) % n : x ^ (at ^ rep);
    image += y * topology_->stride(d);
  }
  return image;
}

NpuId Folding::moved(const Topology& topology, std::size_t dim, const Move& move, NpuId npu) {
  const std::uint32_t n = topology.npus_in(dim);
  const std::uint32_t x = topology.coordinate(npu, dim);
  const std::uint32_t y = move.kind == MoveKind::kRotate ? (x + move.step) % n : x ^ move.mask;
  return npu - x * topology.stride(dim) + y * topology.stride(dim);
}

}  // namespace chakrasim::network
