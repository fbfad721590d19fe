// MSCCL-IR XML -> per-rank Chakra ETs for custom collectives (docs/chakra-format.md §7): each
// <step> of a thread block becomes a COMM_SEND (type "s"), a COMM_RECV ("r"), or a COMM_RECV
// followed by a COMP of the reduction ("rrc"); "nop" steps make no node but pass their
// cross-block dependency on. Node ids restart at 0 per rank, in block and step order; each step
// depends on its cross-block dependency and on the previous step of its block. The output is
// byte-identical to the reference converter's (astra-sim/collectiveapi).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "chakra/et_file.h"

namespace chakrasim::tools {

struct MscclOptions {
  std::string collective = "allreduce";  // allreduce, allgather, alltoall, reducescatter, broadcast, reduce
  std::uint64_t collective_bytes = 0;    // the collective's size; messages are chunk x cnt
  // An rrc step's reduction takes 3 x floor(bytes / this) ns (10^9 B/s), written in whole µs.
  // 50 is the reference converter's fixed figure; the machine's local-mem-bw is the realistic one.
  double reduction_gb_per_s = 50;
};

// The chunk a collective of `bytes` is cut into: bytes / chunks, or the whole for allgather and
// reduce (the reference converter's rule).
std::uint64_t msccl_chunk_bytes(const std::string& collective, std::uint64_t bytes, std::uint64_t chunks);

// What an algorithm ET written by convert_msccl was converted for, read back from the XML its
// metadata embeds and from its first message's size; nullopt for an ET that does not say (not
// written by this converter, or with no message).
struct MscclConvertedFor {
  std::string collective;
  std::uint64_t chunks = 0;       // the rank's i_chunks (o_chunks when 0)
  std::uint64_t chunk_bytes = 0;  // a step moves chunk_bytes x cnt
  std::uint64_t collective_bytes() const {
    return collective == "allgather" || collective == "reduce" ? chunk_bytes : chunk_bytes * chunks;
  }
};
std::optional<MscclConvertedFor> msccl_converted_for(const chakra::Trace& trace, int gpu);

// Converts XML text (`source` names it in errors); the result maps each GPU id to its trace.
std::map<int, chakra::Trace> convert_msccl(const std::string& xml, const std::string& source,
                                           const MscclOptions& options);

// Reads `xml_path` and writes PREFIX.<gpu>.et for every GPU; returns the number of files.
std::size_t convert_msccl_file(const std::string& xml_path, const std::string& prefix, const MscclOptions& options);

}  // namespace chakrasim::tools
