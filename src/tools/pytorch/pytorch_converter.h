// PyTorch execution trace JSON (a host ET straight from PyTorch, or the host+device "ET+" that
// trace_link writes) -> one rank's Chakra ET, as the reference `chakra_converter PyTorch` does
// (docs/chakra-format.md §4.1): every CPU op and each GPU kernel it launched becomes a node, the
// call tree (ctrl_deps) becomes a chain of data dependencies, NCCL kernels become collectives or
// sends and receives, and nodes left without any dependency are dropped. Without options the
// output is byte-identical to the reference's (inputs and outputs are kept as Python's str() of
// the JSON lists).
//
// Where the output departs from the reference's even without options (the goldens hold neither
// case; both occur in what `chakrasim chakra link` writes):
// - a ctrl dependency on a node dropped as dangling is left out: the reference writes it, so the
//   file names a node it lacks and no simulator loads it (trace_link's process node, id 0 and
//   its own caller, is dropped so, and every thread node names it as its caller);
// - an op whose caller is not in the trace roots a call-tree walk of its own, so it and its
//   callees get dependencies and stay (the reference linker drops such ops, ours keeps them).
//
// Reference defects, and what happens to them here:
// - cycle detection by recursion (Python's recursion limit stops it near 1,000 nodes): here the
//   simulator's graph builder checks data and ctrl dependencies together, without recursion;
// - sync_dep entries never became dependencies (they were compared on a start time that is never
//   set): always added here when the earlier node started before the later one (`ts`);
// - ctrl_deps dropped for a child listed before its parent, and SEND/RECV nodes written without
//   comm_src/comm_dst/comm_tag (so no simulator can run them): the goldens keep both, so both are
//   repaired only with `fix_defects`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "chakra/et_file.h"

namespace chakrasim::tools {

struct PytorchOptions {
  // Repair the two reference defects the goldens depend on: give every op whose parent is in the
  // trace its ctrl dependency, wherever the parent is listed; and give each point-to-point node
  // its peer (comm_dst of a SEND, comm_src of a RECV: the global rank, from the rank argument of
  // the record_param_comms op that launched it and the process group's rank list) and comm_tag 0
  // (NCCL matches point-to-point messages in issue order, as one tag does in the simulator).
  bool fix_defects = false;
  // Give the first GPU kernel launched by aten::mm, addmm, bmm, baddbmm, linear or a 2-D
  // convolution (or by an op they call) the op's shape from its recorded inputs (the gemm or conv
  // attribute, docs/chakra-format.md §1.6), for the systolic compute model.
  bool op_shapes = false;
};

// Converts the JSON text of a PyTorch ET or ET+ (`source` names it in errors). Throws Error on
// invalid JSON, an unsupported schema, a missing or mistyped key, a duplicate node id, a
// dependency on a node the output lacks, a dependency cycle, or an NCCL kernel whose collective
// it cannot tell.
chakra::Trace convert_pytorch(std::string_view json_text, const std::string& source, const PytorchOptions& options);

// Reads `json_path`, writes `et_path`; returns the number of nodes written.
std::size_t convert_pytorch_file(const std::string& json_path, const std::string& et_path,
                                 const PytorchOptions& options);

}  // namespace chakrasim::tools
