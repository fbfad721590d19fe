// Tests of Mailbox (docs/astra-sim-model.md §6.1): per (tag, bytes, src, dst) the k-th arrival
// pairs with the k-th receive, in either order, and the counts used by deadlock reports.
#include "system/mailbox.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace chakrasim::system {
namespace {

constexpr MessageKey kKey{7, 32768, 0, 1};  // tag 7, 32768 B, NPU 0 -> NPU 1

TEST(Mailbox, KthArrivalPairsWithKthReceive) {
  // Receives r1, r2, r3 posted for the same key before anything arrives: all wait (3 waiting).
  // Three arrivals then complete r1, r2, r3 in that order, with their kind intact.
  Mailbox box;
  EXPECT_FALSE(box.post_receive(kKey, {1, 11}));
  EXPECT_FALSE(box.post_receive(kKey, {2, 12}));
  EXPECT_FALSE(box.post_receive(kKey, {3, 13}));
  EXPECT_EQ(box.waiting_receives(), 3u);
  EXPECT_EQ(box.unclaimed_arrivals(), 0u);
  for (std::uint64_t k = 1; k <= 3; ++k) {
    Completion c;
    ASSERT_TRUE(box.arrive(kKey, c)) << "arrival " << k;
    EXPECT_EQ(c.arg, k);
    EXPECT_EQ(c.kind, 10 + k);
    EXPECT_EQ(box.waiting_receives(), 3 - k);
  }
  EXPECT_EQ(box.unclaimed_arrivals(), 0u);
  // A fourth arrival has no receive: it is remembered.
  Completion c{99, 99};
  EXPECT_FALSE(box.arrive(kKey, c));
  EXPECT_EQ(box.unclaimed_arrivals(), 1u);
}

TEST(Mailbox, AReceivePostedAfterItsArrivalCompletesAtOnce) {
  // Two arrivals first (2 unclaimed); two receives complete at once (true), leaving nothing;
  // a third receive waits.
  Mailbox box;
  Completion unused;
  EXPECT_FALSE(box.arrive(kKey, unused));
  EXPECT_FALSE(box.arrive(kKey, unused));
  EXPECT_EQ(box.unclaimed_arrivals(), 2u);
  EXPECT_EQ(box.waiting_receives(), 0u);
  EXPECT_TRUE(box.post_receive(kKey, {1, 0}));
  EXPECT_EQ(box.unclaimed_arrivals(), 1u);
  EXPECT_TRUE(box.post_receive(kKey, {2, 0}));
  EXPECT_EQ(box.unclaimed_arrivals(), 0u);
  EXPECT_FALSE(box.post_receive(kKey, {3, 0}));
  EXPECT_EQ(box.waiting_receives(), 1u);
  Completion c;
  EXPECT_TRUE(box.arrive(kKey, c));
  EXPECT_EQ(c.arg, 3u);
  EXPECT_EQ(box.waiting_receives(), 0u);
  EXPECT_EQ(box.unclaimed_arrivals(), 0u);
}

TEST(Mailbox, SizeIsPartOfTheKey) {
  // A 32768 B message arrives; a receive for 65536 B with the same tag and peers never matches
  // it: 1 unclaimed arrival and 1 waiting receive. The right size then matches.
  Mailbox box;
  Completion c;
  EXPECT_FALSE(box.arrive(kKey, c));
  const MessageKey other_size{7, 65536, 0, 1};
  EXPECT_FALSE(box.post_receive(other_size, {1, 0}));
  EXPECT_EQ(box.unclaimed_arrivals(), 1u);
  EXPECT_EQ(box.waiting_receives(), 1u);
  EXPECT_TRUE(box.post_receive(kKey, {2, 0}));
  EXPECT_EQ(box.unclaimed_arrivals(), 0u);
  EXPECT_EQ(box.waiting_receives(), 1u);
}

TEST(Mailbox, TagSourceAndDestinationArePartOfTheKey) {
  // One arrival for (7, 32768, 0 -> 1). Receives for tag 8, for 1 -> 0 (swapped), for 2 -> 1
  // and for 0 -> 2 all wait; only (7, 32768, 0 -> 1) claims it.
  Mailbox box;
  Completion c;
  EXPECT_FALSE(box.arrive(kKey, c));
  EXPECT_FALSE(box.post_receive({8, 32768, 0, 1}, {1, 0}));
  EXPECT_FALSE(box.post_receive({7, 32768, 1, 0}, {2, 0}));
  EXPECT_FALSE(box.post_receive({7, 32768, 2, 1}, {3, 0}));
  EXPECT_FALSE(box.post_receive({7, 32768, 0, 2}, {4, 0}));
  EXPECT_EQ(box.waiting_receives(), 4u);
  EXPECT_EQ(box.unclaimed_arrivals(), 1u);
  EXPECT_TRUE(box.post_receive(kKey, {5, 0}));
  EXPECT_EQ(box.unclaimed_arrivals(), 0u);
  // Each waiting receive is completed by its own key's arrival.
  EXPECT_TRUE(box.arrive({7, 32768, 2, 1}, c));
  EXPECT_EQ(c.arg, 3u);
  EXPECT_TRUE(box.arrive({8, 32768, 0, 1}, c));
  EXPECT_EQ(c.arg, 1u);
  EXPECT_EQ(box.waiting_receives(), 2u);
}

TEST(Mailbox, InterleavedKeysKeepTheirOwnSequences) {
  // Keys A = (1, 100, 0 -> 1) and B = (1, 100, 1 -> 0). Post A:a1, B:b1, A:a2; arrive B, A, A, B:
  // B completes b1, A completes a1 then a2, and the last B arrival is left unclaimed.
  const MessageKey a{1, 100, 0, 1};
  const MessageKey b{1, 100, 1, 0};
  Mailbox box;
  EXPECT_FALSE(box.post_receive(a, {101, 0}));
  EXPECT_FALSE(box.post_receive(b, {201, 0}));
  EXPECT_FALSE(box.post_receive(a, {102, 0}));
  std::vector<std::uint64_t> completed;
  for (const MessageKey& k : {b, a, a, b}) {
    Completion c;
    if (box.arrive(k, c)) completed.push_back(c.arg);
  }
  EXPECT_EQ(completed, (std::vector<std::uint64_t>{201, 101, 102}));
  EXPECT_EQ(box.waiting_receives(), 0u);
  EXPECT_EQ(box.unclaimed_arrivals(), 1u);
  EXPECT_TRUE(box.post_receive(b, {202, 0}));
  EXPECT_EQ(box.unclaimed_arrivals(), 0u);
}

TEST(Mailbox, ManyMessagesInAMixedOrderAllPair) {
  // 1000 messages over 10 keys (tag i % 10, 64 B, 0 -> 1): for each key, arrivals and receives
  // alternate in runs (3 arrivals, then 5 receives, ...). Every receive completes exactly once,
  // in post order per key, and the mailbox ends empty.
  Mailbox box;
  std::vector<std::vector<std::uint64_t>> posted(10), completed(10);
  std::uint64_t next_arg = 0;
  std::size_t arrivals = 0, receives = 0;
  for (int round = 0; round < 100; ++round) {
    for (std::uint64_t tag = 0; tag < 10; ++tag) {
      const MessageKey k{tag, 64, 0, 1};
      const int n_arrive = round % 2 == 0 ? 3 : 7;
      const int n_receive = 5;
      for (int i = 0; i < n_arrive; ++i) {
        Completion c;
        ++arrivals;
        if (box.arrive(k, c)) completed[tag].push_back(c.arg);
      }
      for (int i = 0; i < n_receive; ++i) {
        const std::uint64_t arg = next_arg++;
        posted[tag].push_back(arg);
        ++receives;
        if (box.post_receive(k, {arg, 0})) completed[tag].push_back(arg);
      }
    }
  }
  EXPECT_EQ(arrivals, receives);  // 10 * 50 * (3 + 7) = 10 * 100 * 5
  EXPECT_EQ(box.waiting_receives(), 0u);
  EXPECT_EQ(box.unclaimed_arrivals(), 0u);
  for (std::size_t tag = 0; tag < 10; ++tag) EXPECT_EQ(completed[tag], posted[tag]) << "tag " << tag;
}

}  // namespace
}  // namespace chakrasim::system
