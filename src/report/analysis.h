// Figures derived from a run's node log, for reports: where each NPU's time went, each
// collective with its bandwidths, the critical path, and link utilisation over time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "network/network.h"
#include "report/node_log.h"
#include "sim/simulation.h"

namespace chakrasim::report {

// nccl-tests' conventions for a collective's size and bus bandwidth. The trace's comm_size is
// per NPU with a meaning that depends on the kind (docs/astra-sim-model.md §3.4: an all-gather's
// is its own shard, a gather's or scatter's each member's piece); nccl-tests reports the
// all-gather's and gather's output, the reduce-scatter's and scatter's input, the all-to-all's
// full send buffer and the others' buffer, and scales algbw = size / time by the fraction of the
// data each NPU must move over its links: 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
// gather, scatter, reduce-scatter and all-to-all, 1 for broadcast and reduce. A barrier has no
// size and no bandwidth.
struct NcclTestsSize {
  std::uint64_t bytes = 0;  // the size nccl-tests prints for this collective
  const char* which = "";   // which buffer that is: "buffer", "output", "input", "send buffer"
  double bus_factor = 1;    // busbw / algbw
};
NcclTestsSize nccl_tests_size(chakra::CommType type, std::uint64_t comm_size, std::uint32_t npus);

// One collective node that ran, with nccl-tests' size and bandwidth figures (NcclTestsSize).
struct CollectiveRow {
  std::uint64_t node_id = 0;
  std::string name;
  std::string kind;
  std::uint64_t comm_size = 0;  // the trace's comm_size (per NPU)
  std::uint64_t bytes = 0;      // nccl-tests' size (NcclTestsSize::bytes)
  const char* size_is = "";     // which buffer `bytes` is (NcclTestsSize::which)
  std::string group;            // pg_name, "" for every NPU
  std::uint32_t npus = 0;       // taking part
  std::string algorithm;        // the phases' algorithms, e.g. "ring (dim 0), direct (dim 1)"
  Tick start = 0;
  Tick duration = 0;
  Tick exposed = 0;           // of `duration`, the time no compute node ran on the NPU
  double algbw_gb_per_s = 0;  // 10^9 B/s: bytes / duration
  double busbw_gb_per_s = 0;  // 10^9 B/s: algbw x bus factor
  // 10^9 B/s: what NPU `npu`'s links in the dimensions the collective used can send at once
  // (network::npu_egress_bytes_per_ns summed; every dimension for a group's ring; on a network
  // drawn as a graph, the NPU's links in it). A busbw above it is more than the links carry: a
  // backend that does not share links (congestion-unaware) served too much, or, on one that does,
  // NPU 0 began the collective after its peers had sent it their data (summary.h).
  double links_gb_per_s = 0;
  bool exceeds_links() const { return links_gb_per_s > 0 && busbw_gb_per_s > links_gb_per_s * 1.001; }
};
std::vector<CollectiveRow> collective_rows(const sim::Inputs& inputs, const NodeLog& log, NpuId npu);

// The chain of nodes that decided `npu`'s finish time: from the node that ended last, back
// through the parent that ended last, to a node with no parents. In time order.
std::vector<NodeSpan> critical_path(const chakra::Graph& graph, const std::vector<NodeSpan>& spans);

// Every link's busy intervals, as the backend reports them. A flow carried at a share of a
// link's capacity counts as that share of the time busy: busy time is the time the link would
// need at full rate for what it carried.
class LinkLog final : public network::LinkObserver {
 public:
  void on_link_busy(std::uint32_t link, Tick start, Tick end) override;
  void on_link_share(std::uint32_t link, Tick start, Tick end, double share) override;
  // Busy time of `link` in each of `bins` equal slices of [0, horizon), rounded to the ns.
  std::vector<Tick> busy_per_bin(std::uint32_t link, Tick horizon, std::uint32_t bins) const;
  Tick busy_total(std::uint32_t link) const;
  std::uint32_t links() const { return static_cast<std::uint32_t>(busy_.size()); }

 private:
  struct Busy {
    Tick start;
    Tick end;
    double share;
  };
  std::vector<std::vector<Busy>> busy_;
};

}  // namespace chakrasim::report
