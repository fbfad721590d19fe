// Every flow a flow-level backend carried (network::FlowObserver), for the run's --flows CSV and
// the report's flow section: how long each message took from send to last byte, against the
// hops it crossed.
#pragma once

#include <string>
#include <vector>

#include "network/network.h"

namespace chakrasim::report {

class FlowLog final : public network::FlowObserver {
 public:
  void on_flow(const network::FlowRecord& flow) override { flows_.push_back(flow); }
  const std::vector<network::FlowRecord>& flows() const { return flows_; }

 private:
  std::vector<network::FlowRecord> flows_;
};

// One row per flow, in arrival order: src,dst,bytes,start_ns,arrival_ns,completion_ns,hops,gbps
// (the flow's average rate, 10^9 bit/s). Written atomically; throws Error naming the path.
void write_flow_csv(const std::string& path, const FlowLog& log);

// The report's section: how many flows, completion times (median, 99th percentile, largest) and
// the slowest flows. Appends nothing when the log is empty.
void section_flows(std::string& html, const FlowLog& log);

}  // namespace chakrasim::report
