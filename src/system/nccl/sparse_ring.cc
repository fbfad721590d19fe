#include "system/nccl/sparse_ring.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace chakrasim::system::nccl {

std::uint32_t filled_chunks(std::uint64_t count, std::uint32_t element_bytes, std::uint32_t ranks) {
  if (ranks == 0 || count == 0) return 0;
  const std::uint64_t grain = std::max<std::uint64_t>(1, 16 / std::max<std::uint32_t>(element_bytes, 1));
  const std::uint64_t chunk = (count + ranks - 1) / ranks;
  const std::uint64_t aligned = (chunk + grain - 1) / grain * grain;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(ranks, (count + aligned - 1) / aligned));
}

double back_to_back_ring_steps(std::uint32_t ranks, std::uint32_t filled, double empty_step_share) {
  const std::uint32_t n = ranks;
  if (n < 2) return 0;
  // NCCL's ring all-reduce, one loop: a rank makes 2n - 1 moves; at move k it sends chunk
  // (rank - k - 1) mod n, and from move 1 on it first receives that chunk from the rank before it
  // (sent at that rank's move k - 1). Only filled chunks (0 .. filled - 1) wait and travel. Each
  // move costs the empty share; a filled one's data takes the rest of a step to arrive.
  const double hop = 1.0 - empty_step_share;
  const std::uint32_t moves = 2 * n - 1;
  // Settle for 2n calls (the start-up is gone within a cycle), then find the shortest cycle of
  // calls (up to 2n long) that the last 4n calls' times repeat.
  const std::uint32_t settle = 2 * n, calls = settle + 6 * n;
  std::vector<double> now(n, 0.0), sent(n, 0.0), sent_before(n, 0.0), ends;
  ends.reserve(calls);
  for (std::uint32_t call = 0; call < calls; ++call) {
    for (std::uint32_t k = 0; k < moves; ++k) {
      sent_before = sent;
      for (std::uint32_t r = 0; r < n; ++r) {
        const bool data = (r + 2 * n - k % n - 1) % n < filled;
        double t = now[r];
        if (k > 0 && data) t = std::max(t, sent_before[(r + n - 1) % n] + hop);
        t += empty_step_share;
        now[r] = sent[r] = t;
      }
    }
    ends.push_back(*std::max_element(now.begin(), now.end()));
  }
  const auto gap = [&](std::size_t i) { return ends[i] - ends[i - 1]; };
  const std::size_t last = ends.size() - 1;
  const std::size_t compared = 4 * n;
  for (std::size_t c = 1; c <= 2 * n; ++c) {
    bool repeats = true;
    for (std::size_t i = last; i + compared > last && repeats; --i) repeats = std::abs(gap(i) - gap(i - c)) < 1e-9;
    if (repeats) return (ends[last] - ends[last - c]) / static_cast<double>(c);
  }
  return (ends[last] - ends[settle - 1]) / static_cast<double>(last - (settle - 1));
}

double back_to_back_saved_steps(std::uint32_t ranks, std::uint32_t filled, double empty_step_share) {
  if (filled == 0 || filled >= ranks) return 0;
  // Every chunk filled, every move from the first waits for the one before it on the previous
  // rank: 2(n - 1) whole steps, and the first move's share (back_to_back_ring_steps(n, n)).
  const double full = 2.0 * (ranks - 1) + empty_step_share;
  const double saved = full - back_to_back_ring_steps(ranks, filled, empty_step_share);
  return saved > 1e-9 ? saved : 0.0;  // none where the chain is the full ring's, to rounding
}

}  // namespace chakrasim::system::nccl
