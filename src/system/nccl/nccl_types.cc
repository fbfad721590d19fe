#include "system/nccl/nccl_types.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace chakrasim::system::nccl {
namespace {

constexpr std::array<const char*, kCollectives> kCollectiveNames = {"broadcast",      "reduce",     "all_gather",
                                                                    "reduce_scatter", "all_reduce", "alltoall",
                                                                    "sendrecv"};
// NCCL's own spellings of the five it tunes (ncclFuncStr), for NCCL_ALGO's prefixes.
constexpr std::array<const char*, 5> kNcclFunctionNames = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                                           "AllReduce"};
constexpr std::array<const char*, kAlgorithms> kAlgorithmNames = {"Tree", "Ring",     "CollnetDirect", "CollnetChain",
                                                                  "NVLS", "NVLSTree", "PAT",           "MSCCL"};
constexpr std::array<const char*, kProtocols> kProtocolNames = {"LL", "LL128", "Simple"};

template <std::size_t N>
std::optional<std::size_t> find_name(const std::array<const char*, N>& names, std::string_view text) {
  const std::string wanted = lowercase(text);
  for (std::size_t i = 0; i < N; ++i) {
    if (lowercase(names[i]) == wanted) return i;
  }
  return std::nullopt;
}

template <std::size_t N>
std::string names_text(const std::array<const char*, N>& names) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) out.append(i == 0 ? "" : i + 1 == N ? " or " : ", ").append(names[i]);
  return out;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const char* collective_name(Collective c) { return kCollectiveNames[static_cast<std::size_t>(c)]; }
const char* algorithm_name(Algorithm a) { return kAlgorithmNames[static_cast<std::size_t>(a)]; }
const char* protocol_name(Protocol p) { return kProtocolNames[static_cast<std::size_t>(p)]; }

std::optional<Collective> parse_collective(std::string_view text) {
  std::string wanted = lowercase(text);
  if (wanted.ends_with("_perf")) wanted.resize(wanted.size() - 5);  // nccl-tests' binary: all_reduce_perf
  wanted.erase(std::remove(wanted.begin(), wanted.end(), '_'), wanted.end());
  for (std::size_t i = 0; i < kCollectives; ++i) {
    std::string name = kCollectiveNames[i];
    name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
    if (name == wanted) return static_cast<Collective>(i);
  }
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(std::string_view text) {
  const auto i = find_name(kAlgorithmNames, text);
  return i ? std::optional(static_cast<Algorithm>(*i)) : std::nullopt;
}

std::optional<Protocol> parse_protocol(std::string_view text) {
  const auto i = find_name(kProtocolNames, text);
  return i ? std::optional(static_cast<Protocol>(*i)) : std::nullopt;
}

Enabled Enabled::all() {
  Enabled e;
  for (auto& row : e.algorithms) row.fill(true);
  for (auto& row : e.protocols) row.fill(true);
  return e;
}

void apply_enable_list(Enabled& enabled, std::string_view value, bool algorithms, const std::string& what) {
  const std::size_t count = algorithms ? kAlgorithms : kProtocols;
  auto set = [&](std::size_t coll, std::size_t i, bool on) {
    if (algorithms) {
      enabled.algorithms[coll][i] = on;
    } else {
      enabled.protocols[coll][i] = on;
    }
  };
  if (!algorithms) enabled.protocols_set = true;
  const std::vector<std::string_view> entries = split(value, ';');
  for (std::size_t n = 0; n < entries.size(); ++n) {
    std::string_view entry = entries[n];
    std::optional<std::size_t> only;  // a collective prefix: this entry is for it alone
    if (const std::size_t colon = entry.find(':'); colon != std::string_view::npos) {
      const std::string_view prefix = entry.substr(0, colon);
      only = find_name(kNcclFunctionNames, prefix);
      if (!only) {
        throw Error(fmt::format("{}: unknown collective \"{}\" in \"{}\"; expected {}", what, prefix, value,
                                names_text(kNcclFunctionNames)));
      }
      entry = entry.substr(colon + 1);
    } else if (n > 0) {
      throw Error(fmt::format("{}: \"{}\": every entry after the first needs a collective prefix (e.g. "
                              "\"allreduce:{}\")",
                              what, value, algorithms ? "ring" : "simple"));
    }
    const bool exclude = !entry.empty() && entry.front() == '^';
    if (exclude) entry.remove_prefix(1);
    std::vector<std::size_t> named;
    for (const std::string_view token : split(entry, ',')) {
      const auto i = algorithms ? find_name(kAlgorithmNames, token) : find_name(kProtocolNames, token);
      if (!i) {
        throw Error(fmt::format("{}: unknown {} \"{}\" in \"{}\"; expected {}", what,
                                algorithms ? "algorithm" : "protocol", token, value,
                                algorithms ? names_text(kAlgorithmNames) : names_text(kProtocolNames)));
      }
      named.push_back(*i);
    }
    for (std::size_t coll = 0; coll < kCollectives; ++coll) {
      // NCCL's five tuned collectives; all-to-all and send/receive use neither list.
      if (coll >= kNcclFunctionNames.size() || (only && *only != coll)) continue;
      for (std::size_t i = 0; i < count; ++i) {
        const bool listed = std::find(named.begin(), named.end(), i) != named.end();
        set(coll, i, listed != exclude);
      }
    }
  }
}

}  // namespace chakrasim::system::nccl
