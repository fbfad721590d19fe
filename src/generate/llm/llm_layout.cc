#include "generate/llm/llm_layout.h"

#include <map>

#include <fmt/format.h>

#include "config/other_configs.h"
#include "core/error.h"

namespace chakrasim::tools::llm {
namespace {

constexpr std::uint64_t kMaxRanks = 1u << 20;

}  // namespace

const char* group_kind_name(GroupKind kind) {
  switch (kind) {
    case GroupKind::kTp: return "TP";
    case GroupKind::kCp: return "CP";
    case GroupKind::kDp: return "DP";
    case GroupKind::kEp: return "EP";
    case GroupKind::kExpertDp: return "EDP";
    case GroupKind::kPp: return "PP";
    case GroupKind::kEmbedding: return "EMB";
  }
  return "?";
}

namespace {

// Every size positive and their product a rank count we can hold; returns the rank count.
std::uint64_t check_sizes(const ModelSpec& m, const ParallelSpec& par) {
  require_positive(par.dp, "--dp");
  require_positive(par.tp, "--tp");
  require_positive(par.pp, "--pp");
  require_positive(par.cp, "--cp");
  require_positive(par.ep, "--ep");
  require_positive(par.microbatch, "--microbatch");
  require_positive(par.vpp, "--vpp");
  require_positive(par.grad_bucket_params, "--grad-bucket");
  const std::uint64_t t = par.tp;
  if (par.vpp > m.layers) fail("--vpp {}: expected at most --layers {}", par.vpp, m.layers);
  // Tokens of one microbatch on one rank, bounded so that every tensor size fits in 64 bits.
  if (par.microbatch > (1u << 28) / m.seq) {
    fail("--microbatch {} x --seq {}: expected at most 268435456 tokens per microbatch", par.microbatch, m.seq);
  }
  // Each product below stays far from overflow because every factor is checked first.
  if (par.dp > kMaxRanks || t > kMaxRanks || par.pp > kMaxRanks || par.cp > kMaxRanks ||
      par.dp * t * par.pp * par.cp > kMaxRanks) {
    fail("--dp x --tp x --pp x --cp: {} x {} x {} x {} ranks; expected at most {}", par.dp, t, par.pp, par.cp,
         kMaxRanks);
  }
  return par.dp * t * par.pp * par.cp;
}

void check_tensor_split(const ModelSpec& m, const ParallelSpec& par) {
  const std::uint64_t t = par.tp;
  // Tensor parallelism splits heads, key/value heads (Megatron's query groups), the MLP and the
  // vocabulary.
  if (m.heads % t != 0) fail("--tp {} does not divide --heads {}; expected whole heads per rank", t, m.heads);
  if (m.kv_heads % t != 0) {
    fail("--tp {} does not divide --kv-heads {}; expected whole key/value heads per rank (as Megatron-LM "
         "requires)",
         t, m.kv_heads);
  }
  if (m.ffn % t != 0) fail("--tp {} does not divide --ffn {}; expected equal MLP slices", t, m.ffn);
  if (m.vocab % t != 0) fail("--tp {} does not divide --vocab {}; expected equal vocabulary slices", t, m.vocab);
  if (m.seq % par.cp != 0) fail("--cp {} does not divide --seq {}; expected equal sequence slices", par.cp, m.seq);
  if (par.sp && (m.seq / par.cp) % t != 0) {
    fail("--sp: --tp {} does not divide the {} tokens of a sequence slice (--seq / --cp); expected equal "
         "slices",
         t, m.seq / par.cp);
  }
}

void check_experts(const ModelSpec& m, const ParallelSpec& par) {
  if (par.ep > 1 && !m.moe()) {
    fail("--ep {}: expected a mixture-of-experts model (--experts above 1)", par.ep);
  }
  if (m.experts % par.ep != 0) {
    fail("--ep {} does not divide --experts {}; expected the same number of experts per rank", par.ep, m.experts);
  }
  if (par.dp % par.ep != 0) {
    fail("--ep {} does not divide --dp {}; expert-parallel groups are made of data-parallel ranks", par.ep, par.dp);
  }
  if (m.moe() && par.tp > 1 && !par.sp) {
    fail("--tp {} with a mixture of experts needs --sp (Megatron-Core requires sequence parallelism "
         "there: each rank routes its own slice of the tokens)",
         par.tp);
  }
}

// The pipeline schedule against the microbatches per pipeline and the layers per model chunk.
void check_schedule(const ModelSpec& m, const ParallelSpec& par, std::uint64_t microbatches) {
  if (par.schedule == Schedule::kInterleaved) {
    if (par.pp < 2) fail("--schedule interleaved: expected --pp of at least 2, got {}", par.pp);
    if (par.vpp < 2) fail("--schedule interleaved: expected --vpp of at least 2, got {}", par.vpp);
    if (microbatches % par.pp != 0) {
      fail("--schedule interleaved: the {} microbatches per pipeline (--global-batch / (--microbatch x --dp)) "
           "are not a multiple of --pp {}, as Megatron-LM's interleaved schedule requires",
           microbatches, par.pp);
    }
  } else if (par.vpp != 1) {
    fail("--vpp {}: expected --schedule interleaved (other schedules hold one model chunk per stage)", par.vpp);
  }
  if (m.layers % (par.pp * par.vpp) != 0) {
    fail("--layers {} is not a multiple of --pp {} x --vpp {}; expected the same number of layers per "
         "model chunk",
         m.layers, par.pp, par.vpp);
  }
}

void check_zero(const ModelSpec& m, const ParallelSpec& par) {
  if (par.zero > 3) fail("--zero {}: expected a ZeRO stage 0, 1, 2 or 3", par.zero);
  if (par.zero >= 2 && par.pp > 1) {
    fail("--zero {} with --pp {}: DeepSpeed's pipeline engine supports ZeRO stages 0 and 1 only; expected "
         "--zero 0 or 1, or --pp 1",
         par.zero, par.pp);
  }
  if (par.zero == 3 && m.moe()) {
    fail("--zero 3 with a mixture of experts is not modelled; expected --zero 0, 1 or 2");
  }
}

}  // namespace

Layout::Layout(const ModelSpec& m, const ParallelSpec& par) : par_(par) {
  check_model(m);
  ranks_ = check_sizes(m, par);
  check_tensor_split(m, par);
  check_experts(m, par);
  if (par.global_batch == 0) par_.global_batch = par.microbatch * par.dp;
  if (par_.global_batch % (par.microbatch * par.dp) != 0) {
    fail("--global-batch {} is not a multiple of --microbatch {} x --dp {}; expected whole microbatches "
         "per data-parallel rank",
         par_.global_batch, par.microbatch, par.dp);
  }
  microbatches_ = par_.global_batch / (par.microbatch * par.dp);
  check_schedule(m, par, microbatches_);
  layers_per_chunk_ = m.layers / (par.pp * par.vpp);
  // Pipeline tags: two per (microbatch, model-chunk boundary), kept below the tag space of 5e8.
  if (microbatches_ * par.pp * par.vpp >= 200'000'000) {
    fail("--global-batch {}: {} microbatches x {} model chunks is too many; expected fewer than 2e8", par_.global_batch,
         microbatches_, par.pp * par.vpp);
  }
  check_zero(m, par);
  tied_group_ = m.tied_embeddings && par.pp > 1;
  moe_ = m.moe();

  std::uint32_t next = 1;
  for (std::size_t k = 0; k < kGroupKinds; ++k) {
    first_id_[k] = next;
    if (active(static_cast<GroupKind>(k))) next += static_cast<std::uint32_t>(group_count(static_cast<GroupKind>(k)));
  }
}

Coord Layout::coord(std::uint64_t rank) const {
  Coord c;
  c.t = rank % par_.tp;
  rank /= par_.tp;
  c.c = rank % par_.cp;
  rank /= par_.cp;
  c.d = rank % par_.dp;
  c.p = rank / par_.dp;
  return c;
}

std::uint64_t Layout::peer(std::uint64_t rank, std::int64_t stage_delta) const {
  Coord c = coord(rank);
  c.p = static_cast<std::uint64_t>(static_cast<std::int64_t>(c.p) + stage_delta);
  return this->rank(c);
}

std::uint64_t Layout::group_size(GroupKind kind) const {
  switch (kind) {
    case GroupKind::kTp: return par_.tp;
    case GroupKind::kCp: return par_.cp;
    case GroupKind::kDp: return par_.dp * par_.cp;
    case GroupKind::kEp: return par_.ep;
    case GroupKind::kExpertDp: return moe_ ? par_.tp * par_.cp * par_.dp / par_.ep : 1;
    case GroupKind::kPp: return par_.pp;
    case GroupKind::kEmbedding: return tied_group_ ? 2 : 1;
  }
  return 1;
}

bool Layout::active(GroupKind kind) const { return group_size(kind) > 1; }

std::uint64_t Layout::group_count(GroupKind kind) const {
  // The embedding group pairs the first and last stage: one per (t, c, d), middle stages in none.
  if (kind == GroupKind::kEmbedding) return par_.tp * par_.cp * par_.dp;
  return ranks_ / group_size(kind);
}

std::uint64_t Layout::group_index(GroupKind kind, const Coord& c) const {
  const std::uint64_t T = par_.tp, C = par_.cp, D = par_.dp, E = par_.ep;
  switch (kind) {
    case GroupKind::kTp: return c.c + C * (c.d + D * c.p);
    case GroupKind::kCp: return c.t + T * (c.d + D * c.p);
    case GroupKind::kDp: return c.t + T * c.p;
    case GroupKind::kEp: return c.t + T * (c.c + C * (c.d / E + (D / E) * c.p));
    case GroupKind::kExpertDp: return c.d % E + E * c.p;
    case GroupKind::kPp:
    case GroupKind::kEmbedding: return c.t + T * (c.c + C * c.d);
  }
  return 0;
}

std::vector<std::uint64_t> Layout::members(GroupKind kind, std::uint64_t rank) const {
  const Coord me = coord(rank);
  std::vector<std::uint64_t> out;
  switch (kind) {
    case GroupKind::kTp:
      for (std::uint64_t t = 0; t < par_.tp; ++t) out.push_back(this->rank({t, me.c, me.d, me.p}));
      break;
    case GroupKind::kCp:
      for (std::uint64_t c = 0; c < par_.cp; ++c) out.push_back(this->rank({me.t, c, me.d, me.p}));
      break;
    case GroupKind::kDp:
      for (std::uint64_t d = 0; d < par_.dp; ++d) {
        for (std::uint64_t c = 0; c < par_.cp; ++c) out.push_back(this->rank({me.t, c, d, me.p}));
      }
      break;
    case GroupKind::kEp: {
      const std::uint64_t first = me.d / par_.ep * par_.ep;
      for (std::uint64_t d = first; d < first + par_.ep; ++d) out.push_back(this->rank({me.t, me.c, d, me.p}));
      break;
    }
    case GroupKind::kExpertDp:
      for (std::uint64_t d = me.d % par_.ep; d < par_.dp; d += par_.ep) {
        for (std::uint64_t c = 0; c < par_.cp; ++c) {
          for (std::uint64_t t = 0; t < par_.tp; ++t) out.push_back(this->rank({t, c, d, me.p}));
        }
      }
      break;
    case GroupKind::kPp:
      for (std::uint64_t p = 0; p < par_.pp; ++p) out.push_back(this->rank({me.t, me.c, me.d, p}));
      break;
    case GroupKind::kEmbedding:
      if (tied_group_ && (me.p == 0 || me.p + 1 == par_.pp)) {
        out.push_back(this->rank({me.t, me.c, me.d, 0}));
        out.push_back(this->rank({me.t, me.c, me.d, par_.pp - 1}));
      }
      break;
  }
  return out;
}

std::uint32_t Layout::group_id(GroupKind kind, std::uint64_t rank) const {
  if (!active(kind)) return 0;
  const Coord c = coord(rank);
  if (kind == GroupKind::kEmbedding && c.p != 0 && c.p + 1 != par_.pp) return 0;
  return first_id_[static_cast<std::size_t>(kind)] + static_cast<std::uint32_t>(group_index(kind, c));
}

std::string Layout::groups_json() const {
  system::CommGroups groups;
  for (std::size_t k = 0; k < kGroupKinds; ++k) {
    const auto kind = static_cast<GroupKind>(k);
    if (!active(kind)) continue;
    // Each group once, from its lowest member.
    for (std::uint64_t r = 0; r < ranks_; ++r) {
      const std::uint32_t id = group_id(kind, r);
      if (id == 0 || groups.contains(id)) continue;
      for (const std::uint64_t m : members(kind, r)) groups[id].push_back(static_cast<NpuId>(m));
    }
  }
  return config::comm_groups_json(groups);
}

std::string Layout::group_names_json() const {
  std::map<std::uint32_t, std::string> names;
  for (std::size_t k = 0; k < kGroupKinds; ++k) {
    const auto kind = static_cast<GroupKind>(k);
    if (!active(kind)) continue;
    for (std::uint64_t i = 0; i < group_count(kind); ++i) {
      names[static_cast<std::uint32_t>(first_id_[k] + i)] = group_kind_name(kind);
    }
  }
  return config::group_names_json(names);
}

}  // namespace chakrasim::tools::llm
