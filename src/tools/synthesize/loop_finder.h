// The loops of a sequence of symbols, as a program: `a (b c)x3 d` for a b c b c b c d. A trace of
// a training step is loops over microbatches and layers; the synthesizer learns one value
// distribution per position of a loop's body, and its model stays as small as the step's
// structure rather than as long as its trace.
#pragma once

#include <cstdint>
#include <vector>

namespace chakrasim::tools {

struct LoopItem {
  std::uint32_t symbol = 0;  // a leaf's symbol (loops: unused)
  std::uint64_t count = 0;   // 0 for a leaf; the repetitions (>= 2) of a loop
  std::vector<LoopItem> body;
  bool is_loop() const { return count > 0; }
};

// The program of `symbols`. Greedy and deterministic: at each position the tandem repeat that
// covers the most symbols (the shortest period on a tie) among periods ending at the next 32
// occurrences of the position's symbol; repeated passes find loops of loops, and every loop's body
// is compressed in turn. Expanding the result gives `symbols` back.
std::vector<LoopItem> find_loops(const std::vector<std::uint32_t>& symbols);

// The symbols a program stands for.
std::vector<std::uint32_t> expand(const std::vector<LoopItem>& program);

}  // namespace chakrasim::tools
