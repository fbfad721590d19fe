// What NCCL delivers: the time of one call, as nccl-tests measures it, of the algorithm and
// protocol NCCL's tuning model chooses (tuning.h). NCCL's model chooses well but does not time
// well (its NVLS figures are a fifth below what NVLS reaches, its per-channel ceilings are
// conservative), so the time comes from the traffic each algorithm puts on each link:
//
//   time = NCCL's latency for the pair + bytes / algorithm bandwidth,
//
// the bandwidth being what the busiest link of the algorithm allows: a GPU's scale-up links (the
// vendor's per-direction rate, times what NCCL's kernels reach of it) or a node's NICs (their
// line rate, times what a ring reaches through them); LL and LL128 keep NCCL's own ratios to
// Simple. The constants, their anchors and the error against them are in docs/nccl.md.
#pragma once

#include <cstdint>

#include "system/nccl/tuning.h"

namespace chakrasim::system::nccl {

// Shares of a link's rate NCCL's kernels reach, from public anchors (docs/nccl.md).
struct Efficiencies {
  double ring = 0.816;  // NVLink rings: 8x H100 ring all-reduce busbw 367 GB/s of 450
  double nvls = 0.686;  // NVLS all-reduce: 8x H100 480 GB/s busbw = 450 x 0.686 x 2 x 7 / 9
};

struct Timing {
  double us = 0;
  TuningModel::Choice choice;
};

class AchievedModel {
 public:
  AchievedModel(const Machine& machine, const Enabled& enabled, Efficiencies efficiencies = {});

  // NCCL's choice for a call of `bytes` (nccl-tests' size), and its time.
  Timing time(Collective c, std::uint64_t bytes) const;
  // The time of a given pair; nullopt where NCCL could not run it here.
  std::optional<double> time_us(Collective c, Algorithm a, Protocol p, std::uint64_t bytes) const;
  // The algorithm bandwidth (GB/s) the pair reaches on large calls, and its p2p counterpart.
  double algorithm_gb_per_s(Collective c, Algorithm a, Protocol p) const;
  double p2p_gb_per_s(Collective c, Protocol p) const;

  const TuningModel& tuning() const { return tuning_; }
  const Efficiencies& efficiencies() const { return efficiencies_; }

 private:
  TuningModel tuning_;
  Efficiencies efficiencies_;
};

// nccl-tests' bus bandwidth factor: busbw = algbw x this (2(n-1)/n for an all-reduce, ...).
double bus_factor(Collective c, std::uint32_t ranks);

}  // namespace chakrasim::system::nccl
