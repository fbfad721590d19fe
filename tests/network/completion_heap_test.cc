// The flow backend's indexed heap of ends (network/flow/completion_heap.h) against a sorted set:
// after random sets (insert or move) and erases, the top is always the earliest end, ties by id.
#include "network/flow/completion_heap.h"

#include <random>
#include <set>
#include <utility>

#include <gtest/gtest.h>

namespace chakrasim::network {
namespace {

TEST(CompletionHeap, TopIsTheEarliestEndAfterRandomMovesAndErases) {
  std::mt19937_64 random(3);
  CompletionHeap heap;
  std::set<std::pair<double, std::uint32_t>> expected;
  std::vector<double> end_of(64, -1);
  for (int step = 0; step < 20000; ++step) {
    const auto flow = static_cast<std::uint32_t>(random() % 64);
    if (random() % 3 == 0) {
      heap.erase(flow);
      if (end_of[flow] >= 0) expected.erase({end_of[flow], flow});
      end_of[flow] = -1;
    } else {
      // Few distinct times: ties are common, and must fall to the lower id.
      const double end = static_cast<double>(random() % 16);
      heap.set(flow, end);
      if (end_of[flow] >= 0) expected.erase({end_of[flow], flow});
      expected.insert({end, flow});
      end_of[flow] = end;
    }
    ASSERT_EQ(heap.empty(), expected.empty());
    if (!expected.empty()) {
      ASSERT_EQ(heap.top(), expected.begin()->second) << "step " << step;
      ASSERT_EQ(heap.top_ns(), expected.begin()->first);
    }
  }
}

}  // namespace
}  // namespace chakrasim::network
