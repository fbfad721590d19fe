// Pieces of the HTML report shared by its files: escaping, and the sections that summarise a
// run at scale (report/aggregates.h), drawn by html_summaries.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/aggregates.h"

namespace chakrasim::report::html {

std::string escape(std::string_view text);

// One bar per class of NPUs with the same time split (a pipeline stage, say), at most
// `max_classes` of them.
void section_npu_classes(std::string& out, const sim::Inputs& inputs, const sim::Result& result,
                         std::size_t max_classes);
// Collectives summed per group kind and per type, and busbw against size, one dot each.
void section_collective_summary(std::string& out, const sim::Inputs& inputs, const sim::Result& result,
                                const std::vector<CollectiveRow>& rows);
// Link utilisation per network dimension, with the busiest links named.
void section_link_summary(std::string& out, const sim::Result& result, const LinkLog& links);
// Compute per operation shape on the NPU that finishes last, with a utilisation bar each, for
// compute models with per-node figures (html_compute.cc); nothing for others.
void section_compute_layers(std::string& out, const sim::Inputs& inputs, const sim::Result& result, const NodeLog& log);
// The critical path's time per kind of node.
void section_path_summary(std::string& out, const chakra::Graph& graph, const std::vector<NodeSpan>& path);

}  // namespace chakrasim::report::html
