// Communicator groups in a folded run (network/folding.h). A collective stream's tag names the
// sender's group; in the receiver's class representative's timeline the same message belongs to
// that group moved as the receiver is moved onto its representative, which is another group of
// the file (sim/rank_classes.h checks that every group a trace uses moves onto one).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/types.h"
#include "network/folding.h"
#include "system/comm_groups.h"

namespace chakrasim::system {

// Which group a group becomes when its members are moved: the group of the moved members. Files
// may list several groups of the same members (a pipeline's and an embedding's group of the
// same two stages): the k-th smallest id of such a family becomes the k-th smallest id of the
// moved family, which keeps generated families apart; the traces' check confirms it.
class GroupImages {
 public:
  explicit GroupImages(const CommGroups& groups);
  // `group`'s image when every member m becomes move(m); nullopt if no group has those members
  // (or as many of them).
  std::optional<std::uint32_t> image(std::uint32_t group, const std::function<NpuId(NpuId)>& move) const;
  const CommGroups& groups() const { return groups_; }

 private:
  CommGroups groups_;
  std::map<std::vector<NpuId>, std::vector<std::uint32_t>> ids_by_members_;  // sorted members -> ids, ascending
};

// The groups a folded run's transport translates, once per group and move.
class FoldedGroups {
 public:
  explicit FoldedGroups(const network::Folding& folding) : folding_(folding) {}
  void set_groups(const CommGroups& groups);

  // `tag` (system/tags.h) as `member`'s representative sees it: a group stream's group moved.
  std::uint64_t tag_seen_from_representative(NpuId member, std::uint64_t tag);

 private:
  std::uint32_t group_seen_from_representative(NpuId member, std::uint32_t group);

  const network::Folding& folding_;
  std::optional<GroupImages> images_;
  std::unordered_map<std::uint64_t, std::uint32_t> moved_;  // group << 32 | move_of(member) -> group
};

}  // namespace chakrasim::system
