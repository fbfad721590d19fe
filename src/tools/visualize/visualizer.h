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

// Reads the .et and writes OUT in the format its extension names. SVG and PDF run `dot`; when
// it is not on PATH, throws Error saying to install graphviz (or to write .dot / .graphml).
void visualize_file(const std::string& et_path, const std::string& out_path);

}  // namespace chakrasim::tools
