#include "system/nccl/sparse_ring.h"

#include <algorithm>
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
  if (n < 2 || filled >= n) return 2.0 * (n > 0 ? n - 1 : 0);
  // NCCL's ring all-reduce, one loop: a rank makes 2n - 1 moves; at move k it sends chunk
  // (rank - k - 1) mod n, and from move 1 on it first receives that chunk from the rank before it
  // (sent at that rank's move k - 1). Only filled chunks (0 .. filled - 1) wait and travel. Each
  // move costs the empty share; a filled one's data takes the rest of a step to arrive.
  const double hop = 1.0 - empty_step_share;
  const std::uint32_t moves = 2 * n - 1;
  // Settle for 4n calls (the overlap reaches back a call or two), then average over 60, a multiple
  // of every short cycle of calls the chain settles into (1 to 6: 40 steps in 3 calls, say).
  const std::uint32_t settle = 4 * n, window = 60, calls = settle + window;
  std::vector<double> now(n, 0.0), sent(n, 0.0), sent_before(n, 0.0);
  double settled = 0, end = 0;
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
    if (call + 1 == settle) settled = *std::max_element(now.begin(), now.end());
    end = *std::max_element(now.begin(), now.end());
  }
  return (end - settled) / window;
}

}  // namespace chakrasim::system::nccl
