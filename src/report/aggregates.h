// A run's figures summed up for a person at LLM scale, where a row per NPU, collective or link is
// thousands of rows: NPUs grouped into classes with the same time split, collectives summed per
// group kind and per collective type, links summarised per network dimension, and the critical
// path summed per kind of node. The report's sections draw these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/analysis.h"
#include "sim/simulation.h"

namespace chakrasim::report {

// NPUs whose time splits are equal (a pipeline stage, typically), or, when that makes more than
// `max_classes`, that run the same graph; `split` is their mean. Label: "NPUs 0-7, 64-71".
struct NpuClass {
  std::string label;
  std::vector<NpuId> npus;
  sim::TimeSplit split;
};
std::vector<NpuClass> npu_classes(const sim::Inputs& inputs, const sim::Result& result, std::size_t max_classes);

// "0-7, 64-71" for a sorted list of NPUs.
std::string npu_ranges(const std::vector<NpuId>& npus);

// Collectives summed under one key (a group kind, a collective type): how many, nccl-tests'
// bytes, time running, and the bandwidths over that time (algbw = bytes / time; busbw weighted
// by each collective's time), and how much of that time no compute ran: per group kind NPU 0's
// time split (each instant once), per type the collectives' own exposed times summed.
struct CollectiveAggregate {
  std::string key;
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  Tick time_ns = 0;
  Tick exposed_ns = 0;
  double algbw_gb_per_s = 0;
  double busbw_gb_per_s = 0;
};
// Per group kind of NPU 0's collectives (labels as in the time split: TP, DP, ... or the
// group's shape), with NPU 0's exposed time per kind.
std::vector<CollectiveAggregate> aggregate_by_group_kind(const sim::Inputs& inputs, const sim::Result& result,
                                                         const std::vector<CollectiveRow>& rows);
// Per collective type ("all-reduce", "all-gather", ...).
std::vector<CollectiveAggregate> aggregate_by_type(const std::vector<CollectiveRow>& rows);

// The links of one network dimension over a run: how many, their mean and highest busy
// fraction, and the busiest by name.
struct DimensionLinks {
  std::uint32_t dim = 0;
  std::size_t links = 0;
  double mean_busy = 0;  // 0..1, over the run
  double max_busy = 0;
  std::vector<std::pair<std::string, double>> hottest;  // name, busy fraction; busiest first
};
std::vector<DimensionLinks> links_per_dimension(const sim::Result& result, const LinkLog& links, std::size_t hottest);

// The critical path summed per kind of node (compute, collectives, sends and receives, memory)
// and the time it spent waiting between nodes.
struct PathKind {
  std::string kind;
  std::size_t nodes = 0;
  Tick ns = 0;
};
std::vector<PathKind> critical_path_by_kind(const chakra::Graph& graph, const std::vector<NodeSpan>& path);

}  // namespace chakrasim::report
