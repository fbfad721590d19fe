// The loops of a symbol sequence (tools/synthesize/loop_finder.h): the program expands to the
// sequence, and repeats become loops, nested where they nest.
#include "tools/synthesize/loop_finder.h"

#include <gtest/gtest.h>

#include "tools/synthesize/synthesis_stats.h"

namespace chakrasim::test {
namespace {

using tools::LoopItem;

// The program as text: symbols as letters, loops as (body)xN.
std::string text(const std::vector<LoopItem>& program) {
  std::string out;
  for (const LoopItem& item : program) {
    if (!item.is_loop()) {
      out += static_cast<char>('a' + item.symbol);
      continue;
    }
    out += "(" + text(item.body) + ")x" + std::to_string(item.count);
  }
  return out;
}

std::vector<std::uint32_t> symbols(const std::string& letters) {
  std::vector<std::uint32_t> out;
  for (const char c : letters) out.push_back(static_cast<std::uint32_t>(c - 'a'));
  return out;
}

TEST(LoopFinder, TandemRepeatsBecomeLoops) {
  EXPECT_EQ(text(tools::find_loops(symbols("abcbcbcd"))), "a(bc)x3d");
  EXPECT_EQ(text(tools::find_loops(symbols("aaaa"))), "(a)x4");
  EXPECT_EQ(text(tools::find_loops(symbols("abcd"))), "abcd");
  EXPECT_EQ(text(tools::find_loops(symbols(""))), "");
}

// Microbatches of layers: the outer repeat holds the inner one.
TEST(LoopFinder, LoopsNest) {
  EXPECT_EQ(text(tools::find_loops(symbols("xabababcabababcabababcy"))), "x((ab)x3c)x3y");
  // Found in the outer pass first, the body is compressed in turn.
  EXPECT_EQ(text(tools::find_loops(symbols("abbbabbbabbb"))), "(a(b)x3)x3");
}

TEST(LoopFinder, ExpandingTheProgramGivesTheSequenceBack) {
  tools::SplitMix random(7);
  for (int trial = 0; trial < 300; ++trial) {
    // Random sequences built from repeated random blocks, so that loops are found.
    std::vector<std::uint32_t> seq;
    const std::uint64_t blocks = 1 + random.below(6);
    for (std::uint64_t b = 0; b < blocks; ++b) {
      std::vector<std::uint32_t> block(1 + random.below(5));
      for (auto& s : block) s = static_cast<std::uint32_t>(random.below(trial % 2 == 0 ? 3 : 6));
      const std::uint64_t reps = 1 + random.below(5);
      for (std::uint64_t k = 0; k < reps; ++k) seq.insert(seq.end(), block.begin(), block.end());
    }
    const std::vector<LoopItem> program = tools::find_loops(seq);
    ASSERT_EQ(tools::expand(program), seq) << "trial " << trial << ": " << text(program);
  }
}

}  // namespace
}  // namespace chakrasim::test
