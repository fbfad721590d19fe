// MSCCL-IR XML -> per-rank Chakra ETs for custom collectives (docs/chakra-format.md §7): each
// <step> of a thread block becomes a COMM_SEND (type "s"), a COMM_RECV ("r"), or a COMM_RECV
// followed by a COMP of the reduction ("rrc"); "nop" steps make no node but pass their
// cross-block dependency on. Node ids restart at 0 per rank, in block and step order; each step
// depends on its cross-block dependency and on the previous step of its block. The output is
// byte-identical to the reference converter's (astra-sim/collectiveapi).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "chakra/et_file.h"

namespace chakrasim::tools {

struct MscclOptions {
  std::string collective = "allreduce";  // allreduce, allgather, alltoall, reducescatter, broadcast, reduce
  std::uint64_t collective_bytes = 0;    // the collective's size; messages are chunk x cnt
};

// Converts XML text (`source` names it in errors); the result maps each GPU id to its trace.
std::map<int, chakra::Trace> convert_msccl(const std::string& xml, const std::string& source,
                                           const MscclOptions& options);

// Reads `xml_path` and writes PREFIX.<gpu>.et for every GPU; returns the number of files.
std::size_t convert_msccl_file(const std::string& xml_path, const std::string& prefix, const MscclOptions& options);

}  // namespace chakrasim::tools
