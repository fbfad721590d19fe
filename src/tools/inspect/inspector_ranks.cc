// The inspector across the files of a prefix: reading every rank, the checks that compare ranks
// (collectives that differ, unmatched sends and receives) and the figures summed over ranks.
#include "tools/inspect/inspector.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string_view>
#include <tuple>

#include "chakra/graph.h"
#include "core/error.h"

namespace chakrasim::tools {

using Severity = Problem::Severity;

namespace {

std::string group_label(const std::string& key) { return key.empty() ? "all NPUs" : "group \"" + key + "\""; }

std::string call_text(const CollectiveCall& call) {
  return fmt::format("{} of {} B (node {})", chakra::comm_type_name(call.comm_type), call.bytes, call.node);
}

// "rank 3's collectives", or "the collectives of ranks 3, 5, 9 (each)" (at most 8 listed).
std::string whose_collectives(const std::vector<std::size_t>& ranks) {
  if (ranks.size() == 1) return fmt::format("rank {}'s collectives", ranks.front());
  std::string list;
  for (std::size_t i = 0; i < ranks.size() && i < 8; ++i) list += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > 8) list += fmt::format(" and {} more", ranks.size() - 8);
  return fmt::format("the collectives of ranks {} (each)", list);
}

// Ranks whose collectives on one group differ from the sequence most ranks have (in id order,
// the order the simulator issues ready nodes in): a collective some ranks never join hangs.
void compare_collectives(Inspection& in) {
  std::set<std::string> keys;
  for (const TraceSummary& r : in.ranks) {
    for (const auto& [key, calls] : r.collectives_by_group) keys.insert(key);
  }
  for (const std::string& key : keys) {
    // Every readable rank takes part in the all-NPU group; other groups' members are unknown
    // without the group file, so only ranks that use the group are compared.
    // Ranks by their sequence (type and size of each collective, without node ids).
    std::map<std::vector<std::pair<std::int64_t, std::uint64_t>>, std::vector<std::size_t>> ranks_by_sequence;
    static const std::vector<CollectiveCall> kNone;
    auto calls_of = [&](std::size_t r) -> const std::vector<CollectiveCall>& {
      auto it = in.ranks[r].collectives_by_group.find(key);
      return it == in.ranks[r].collectives_by_group.end() ? kNone : it->second;
    };
    for (std::size_t r = 0; r < in.ranks.size(); ++r) {
      if (!in.ranks[r].readable || (!key.empty() && calls_of(r).empty())) continue;
      std::vector<std::pair<std::int64_t, std::uint64_t>> sequence;
      for (const CollectiveCall& call : calls_of(r)) sequence.emplace_back(call.comm_type, call.bytes);
      ranks_by_sequence[std::move(sequence)].push_back(r);
    }
    if (ranks_by_sequence.size() < 2) continue;
    // The sequence most ranks have (on a tie, the one of the lowest rank) is the reference.
    const auto common =
        std::max_element(ranks_by_sequence.begin(), ranks_by_sequence.end(), [](const auto& a, const auto& b) {
          return std::make_pair(a.second.size(), b.second.front()) < std::make_pair(b.second.size(), a.second.front());
        });
    const std::size_t ref_rank = common->second.front();
    const std::size_t best_count = common->second.size();
    const std::vector<CollectiveCall>& ref = calls_of(ref_rank);
    for (const auto& [sequence, ranks] : ranks_by_sequence) {
      if (&ranks == &common->second) continue;
      const std::size_t rank = ranks.front();
      const std::vector<CollectiveCall>& seq = calls_of(rank);
      std::size_t k = 0;
      while (k < seq.size() && k < ref.size() && seq[k] == ref[k]) ++k;
      std::string detail;
      if (k < seq.size() && k < ref.size()) {
        detail = fmt::format("its collective #{} is {} where rank {} has {}", k + 1, call_text(seq[k]), ref_rank,
                             call_text(ref[k]));
      } else {
        detail = fmt::format("it has {} collectives, rank {} has {} (the first {} agree)", seq.size(), ref_rank,
                             ref.size(), k);
      }
      in.problems.push_back(
          {Severity::kError, in.ranks[rank].file, std::nullopt,
           fmt::format("{} on {} differ from rank {}'s (and {} other ranks'): {}; the run would hang",
                       whose_collectives(ranks), group_label(key), ref_rank, best_count - 1, detail)});
    }
  }
}

// Sends and receives are matched by (source, destination, tag, size), the k-th send with the
// k-th receive; a receive left over waits forever, a send left over is never consumed.
void match_messages(Inspection& in) {
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::uint64_t>;
  std::map<Key, std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>>> by_key;  // sends, receives
  for (const TraceSummary& r : in.ranks) {
    for (const P2pOp& op : r.p2p) {
      auto& [sends, recvs] = by_key[{op.src, op.dst, op.tag, op.bytes}];
      (op.send ? sends : recvs).push_back(op.node);
    }
  }
  auto file_of = [&](std::int64_t rank) {
    return rank >= 0 && static_cast<std::size_t>(rank) < in.ranks.size() ? in.ranks[static_cast<std::size_t>(rank)].file
                                                                         : std::string();
  };
  for (const auto& [key, ops] : by_key) {
    const auto& [src, dst, tag, bytes] = key;
    const auto& [sends, recvs] = ops;
    if (recvs.size() > sends.size()) {
      in.problems.push_back({Severity::kError, file_of(dst), recvs[sends.size()],
                             fmt::format("rank {} receives {} message(s) of {} B from rank {} with tag {} (first "
                                         "unmatched: node {}), but rank {} sends {}; the receive waits forever",
                                         dst, recvs.size(), bytes, src, tag, recvs[sends.size()], src, sends.size())});
    } else if (sends.size() > recvs.size()) {
      in.problems.push_back({Severity::kWarning, file_of(src), sends[recvs.size()],
                             fmt::format("rank {} sends {} message(s) of {} B to rank {} with tag {} (first "
                                         "unmatched: node {}), but rank {} receives {}",
                                         src, sends.size(), bytes, dst, tag, sends[recvs.size()], dst, recvs.size())});
    }
  }
}

void add_volumes(std::map<std::string, Volume>& into, const std::map<std::string, Volume>& from) {
  for (const auto& [k, v] : from) into[k] += v;
}

}  // namespace

void check_across_ranks(Inspection& inspection) {
  if (inspection.ranks.size() < 2) return;
  compare_collectives(inspection);
  match_messages(inspection);
}

Inspection inspect(const std::string& path) {
  namespace fs = std::filesystem;
  Inspection in;
  in.input = path;
  // A rank that cannot be read is one of the prefix's problems; the other ranks are still inspected.
  auto load = [&](const std::string& file, std::optional<std::size_t> rank, std::size_t npus) {
    try {
      in.ranks.push_back(summarize_trace(chakra::read_trace(file), file, rank, npus));
    } catch (const Error& e) {
      TraceSummary s;
      s.file = file;
      s.rank = rank;
      std::string_view why = e.what();
      if (why.starts_with(file + ": ")) why.remove_prefix(file.size() + 2);  // the problem names the file
      s.problems.push_back({Severity::kError, file, std::nullopt, std::string(why)});
      in.ranks.push_back(std::move(s));
    }
  };
  // One file is read as it is; one that cannot be read (a directory, a FIFO, a device, garbage)
  // is an error, said by the reader, rather than a report of one problem.
  std::error_code ec;
  const bool prefix_exists = fs::exists(chakra::rank_path(path, 0), ec);
  if (fs::is_regular_file(path, ec) || (!prefix_exists && fs::exists(path, ec))) {
    in.ranks.push_back(summarize_trace(chakra::read_trace(path), path, std::nullopt, 0));
    return in;
  }
  if (!prefix_exists) {
    fail("{}: no such file, and no {}; expected a .et file or the PREFIX of PREFIX.0.et, PREFIX.1.et, ...", path,
         chakra::rank_path(path, 0));
  }
  in.is_prefix = true;
  std::size_t npus = 0;
  while (fs::exists(chakra::rank_path(path, npus), ec)) ++npus;
  // A rank file beyond the first gap means the ranks are not numbered 0..N-1.
  const fs::path prefix(path);
  const fs::path dir = prefix.has_parent_path() ? prefix.parent_path() : fs::path(".");
  const std::string stem = prefix.filename().string() + ".";
  std::set<std::size_t> beyond;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= stem.size() + 3 || name.rfind(stem, 0) != 0 || !name.ends_with(".et")) continue;
    const std::string digits = name.substr(stem.size(), name.size() - stem.size() - 3);
    if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      continue;
    if (const std::size_t r = std::stoul(digits); r > npus) beyond.insert(r);
  }
  for (std::size_t r = 0; r < npus; ++r) load(chakra::rank_path(path, r), r, npus);
  if (!beyond.empty()) {
    in.problems.push_back(
        {Severity::kError, chakra::rank_path(path, *beyond.begin()), std::nullopt,
         fmt::format("{} exists but {} does not: rank files must be numbered 0 to N-1; only "
                     "ranks 0 to {} were read",
                     chakra::rank_path(path, *beyond.begin()), chakra::rank_path(path, npus), npus - 1)});
  }
  check_across_ranks(in);
  return in;
}

TraceSummary totals(const Inspection& in) {
  TraceSummary t;
  t.file = in.input;
  t.readable = true;
  t.critical_path_micros = 0;
  for (const TraceSummary& r : in.ranks) {
    t.readable = t.readable && r.readable;
    t.nodes += r.nodes;
    for (const auto& [k, v] : r.nodes_by_type) t.nodes_by_type[k] += v;
    for (const auto& [k, v] : r.micros_by_type) t.micros_by_type[k] += v;
    t.compute_micros += r.compute_micros;
    t.gpu_compute_micros += r.gpu_compute_micros;
    t.cpu_compute_micros += r.cpu_compute_micros;
    add_volumes(t.collectives, r.collectives);
    add_volumes(t.groups, r.groups);
    t.sends += r.sends;
    t.recvs += r.recvs;
    if (!r.critical_path_micros || !t.critical_path_micros) {
      t.critical_path_micros.reset();
    } else if (std::tie(*r.critical_path_micros, r.critical_path_nodes) >
               std::tie(*t.critical_path_micros, t.critical_path_nodes)) {
      t.critical_path_micros = r.critical_path_micros;
      t.critical_path_nodes = r.critical_path_nodes;
    }
  }
  return t;
}

}  // namespace chakrasim::tools
