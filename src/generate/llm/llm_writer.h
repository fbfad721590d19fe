// Writing a stage's trace for each of its ranks, fast. Every node of the stage template is
// serialised once; a rank's file is, per node, its length, those bytes and the encodings of its
// late attributes (pg_name, comm_src, comm_dst), which are the node's last fields. The result is
// byte for byte what serialising the rank's full trace gives (materialize + serialize_trace),
// at the cost of a copy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chakra/et_file.h"
#include "generate/llm/llm_layout.h"
#include "generate/llm/llm_stage.h"

namespace chakrasim::tools::llm {

// The late attribute `late` as rank `rank` has it.
chakra::Attribute late_attribute(const LateAttr& late, const Layout& layout, std::uint64_t rank);

// Rank `rank`'s whole trace: the template with each node's late attributes appended.
chakra::Trace materialize(const StageTemplate& stage, const Layout& layout, std::uint64_t rank);

class StageBytes {
 public:
  explicit StageBytes(const StageTemplate& stage);
  // The .et file of `rank`, which must be a rank of this stage.
  std::string rank_file(const Layout& layout, std::uint64_t rank) const;

 private:
  std::string metadata_;                   // framed GlobalMetadata
  std::string nodes_;                      // every node's own bytes, back to back
  std::vector<std::uint32_t> ends_;        // per node, where its bytes end in nodes_
  std::vector<LateAttr> distinct_;         // the late attributes the stage uses
  std::vector<std::uint32_t> late_begin_;  // per node + 1, into late_
  std::vector<std::uint8_t> late_;         // indices into distinct_
};

struct WrittenFiles {
  std::uint64_t files = 0;
  std::uint64_t distinct = 0;  // files with content of their own (others are hard links)
  std::uint64_t bytes = 0;     // of the distinct files
};
// Writes PREFIX.<rank>.et for every rank. Ranks whose bytes equal an earlier rank's become hard
// links to its file (a copy where links are not possible). Throws Error naming --out if a file
// cannot be written.
WrittenFiles write_rank_files(const std::vector<StageTemplate>& stages, const Layout& layout,
                              const std::string& prefix);

}  // namespace chakrasim::tools::llm
