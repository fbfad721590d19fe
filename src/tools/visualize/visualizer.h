// Chakra ET -> a drawing of its dependency graph (docs/chakra-format.md §6.1): DOT and GraphML are
// written directly, SVG and PDF by graphviz's `dot` program from the DOT.
//
// The graph is the reference `chakra_visualizer`'s: one node per Chakra node, named by its id,
// labelled with its name; an edge parent -> child per dependency, a data dependency drawn with
// arrowhead=normal (GraphML: dependency="data") and a control one with arrowhead=tee
// (dependency="control"). Fix: a parent that is both a data and a control parent of the same
// child gets both edges, in DOT and in GraphML; the reference's GraphML kept only the
// control one. The DOT is not laid out (no pos/bb): graphviz lays it out when it draws.
//
// Both writers make one pass over the nodes (GraphML: one for the nodes, one for the edges) and
// keep only a set of node ids, so the cost is linear in the trace.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "chakra/et_file.h"

namespace chakrasim::tools {

enum class GraphFormat { kDot, kGraphml, kSvg, kPdf };

// The format PATH's extension names (.dot, .graphml, .svg, .pdf, any case); throws Error naming
// PATH and listing the valid extensions otherwise.
GraphFormat graph_format_of(const std::string& path);

// DOT for graphviz: `digraph {`, a node statement per node (label, id, shape=record), an edge
// statement per dependency. Labels are escaped as the reference does for record shapes (a
// backslash before each of {}()<>[]|&-), and also `\` and `"`, which the reference left as is.
void write_dot(const chakra::Trace& trace, std::ostream& out);

// GraphML: key d0 = node "label", key d1 = edge "dependency"; every node first, then every
// edge. A parent id that no node of the file has is declared after the nodes, without a label.
void write_graphml(const chakra::Trace& trace, std::ostream& out);

// The full path of an executable called `program` in one of $PATH's directories, or "".
std::string find_on_path(const std::string& program);

// Which part of a trace to draw: nodes with ids in [first_id, last_id], at most max_nodes of
// them in file order (0: no limit).
struct NodeSelection {
  std::uint64_t first_id = 0;
  std::uint64_t last_id = UINT64_MAX;
  std::uint64_t max_nodes = 0;
  bool everything() const { return first_id == 0 && last_id == UINT64_MAX && max_nodes == 0; }
};

// The selected nodes, with their dependencies on nodes outside the selection removed (so the
// part drawn has no dangling edges).
chakra::Trace select_nodes(const chakra::Trace& trace, const NodeSelection& selection);

// What visualize_file says while it works (reading, how big the graph is, that graphviz is
// drawing); ignored when empty.
using VisualizeProgress = std::function<void(const std::string&)>;

// Reads the .et and writes OUT in the format its extension names, of the nodes `selection`
// keeps. SVG and PDF run `dot`; when it is not on PATH, throws Error saying to install graphviz
// (or to write .dot / .graphml).
void visualize_file(const std::string& et_path, const std::string& out_path, const NodeSelection& selection = {},
                    const VisualizeProgress& progress = {});

// Above this many nodes graphviz takes minutes to draw; visualize says so and how to draw a part.
inline constexpr std::size_t kSlowToDrawNodes = 5000;

}  // namespace chakrasim::tools
