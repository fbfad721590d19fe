// Folded runs: NPUs grouped into classes whose members all run the same timeline, so that one
// representative per class is simulated and stands for the rest.
//
// The classes are the orbits of a group of relabellings of the NPUs that the network maps onto
// itself. Each relabelling moves every NPU's coordinate in some dimensions, the same way for
// every NPU, by one of two kinds of move per dimension:
//   rotate by a multiple of `step` (step divides the dimension's size): x -> x + k*step mod n;
//     a ring, a fully connected group and a switch all map onto themselves so;
//   flip the bits of `mask` (n a power of two): x -> x ^ m for m within mask; only a switch, whose
//     NPUs are interchangeable, maps onto itself so (halving-doubling's partners need it).
// Within a dimension the moves of one kind commute and each moves an NPU to another in one way
// only, so every NPU is its class's representative moved by exactly one relabelling, and the
// representative is the member with the smallest coordinates (x mod step; x with mask cleared).
//
// When the traces, the algorithms and the network look the same after every relabelling of the
// group (sim/rank_classes.h checks that), a message a representative sends to NPU b is, in b's
// class representative's timeline, the message it receives from the sender moved as b is moved
// onto its representative: seen_from_representative(b, sender). A symmetric run is the folding
// that rotates every dimension by 1: one class, NPU 0.
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.h"
#include "network/topology.h"

namespace chakrasim::network {

class Folding {
 public:
  enum class MoveKind : std::uint8_t { kRotate, kFlip };
  struct Move {
    MoveKind kind = MoveKind::kRotate;
    std::uint32_t step = 0;  // kRotate: rotations by multiples of step; step == n (or 0) moves nothing
    std::uint32_t mask = 0;  // kFlip: the coordinate bits that may be flipped
  };

  // `moves[d]` for every dimension of `topology` (the topology must outlive the folding).
  Folding(const Topology& topology, std::vector<Move> moves);
  // The symmetric run's folding: every dimension rotates by 1, one class.
  static Folding whole(const Topology& topology);

  std::uint32_t class_count() const { return static_cast<std::uint32_t>(representatives_.size()); }
  std::uint32_t class_of(NpuId npu) const { return class_of_[npu]; }
  NpuId representative(std::uint32_t cls) const { return representatives_[cls]; }
  NpuId representative_of(NpuId npu) const { return representatives_[class_of_[npu]]; }
  const std::vector<NpuId>& representatives() const { return representatives_; }
  const std::vector<Move>& moves() const { return moves_; }

  // `npu` under the relabelling that takes `member` to its class's representative.
  NpuId seen_from_representative(NpuId member, NpuId npu) const;
  // That relabelling as a number: members with equal numbers move every NPU alike. (Coordinate
  // by coordinate the move is x - rep for a rotation and x ^ rep = x - rep for a flip, since the
  // representative's coordinate is x's with the move's part taken away.)
  NpuId move_of(NpuId member) const { return member - representative_of(member); }

  // `npu` with its coordinate in dimension `dim` moved by one generator: rotated by `move.step`
  // or with the bits of `move.mask` flipped. For checking candidate moves.
  static NpuId moved(const Topology& topology, std::size_t dim, const Move& move, NpuId npu);

 private:
  std::uint32_t representative_coordinate(std::size_t dim, std::uint32_t x) const;

  const Topology* topology_;
  std::vector<Move> moves_;
  std::vector<std::uint32_t> class_of_;  // per NPU
  std::vector<NpuId> representatives_;   // per class, ascending
};

}  // namespace chakrasim::network
