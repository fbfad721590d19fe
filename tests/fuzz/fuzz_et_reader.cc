// libFuzzer target: the .et reader and the graph builder on arbitrary bytes. Anything may be
// rejected with chakrasim::Error; nothing may crash, hang or leak. What parses must serialise
// to bytes that parse again into the same trace; Graph::parse on the bytes must give what
// parse_trace then Graph::build gives, or the same error; a graph sharing another's structure
// must read the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "chakra/et_file.h"
#include "chakra/graph.h"
#include "core/error.h"

namespace {

using chakrasim::chakra::Graph;

bool same_graph(const Graph& a, const Graph& b) {
  if (a.size() != b.size()) return false;
  for (std::uint32_t i = 0; i < a.size(); ++i) {
    if (a.id(i) != b.id(i) || a.raw_type(i) != b.raw_type(i) || a.name(i) != b.name(i) ||
        a.duration_micros(i) != b.duration_micros(i) || a.parent_count(i) != b.parent_count(i) ||
        a.children(i).size() != b.children(i).size() || a.has_attrs(i) != b.has_attrs(i)) {
      return false;
    }
    const auto &x = a.attrs(i), &y = b.attrs(i);
    if (x.present != y.present || x.comm_size != y.comm_size || x.comm_src != y.comm_src || x.num_ops != y.num_ops ||
        a.string(x.pg_name) != b.string(y.pg_name)) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // Graph::parse straight from the bytes, or its error.
  std::optional<Graph> parsed;
  std::string parse_error;
  try {
    parsed = Graph::parse(bytes, "fuzz.et");
  } catch (const Error& e) {
    parse_error = e.what();
  }
  chakra::Trace trace;
  try {
    trace = chakra::parse_trace(bytes, "fuzz.et");
  } catch (const Error& e) {
    if (parsed || parse_error != e.what()) std::abort();
    return 0;
  }
  const std::string again = chakra::serialize_trace(trace);
  const chakra::Trace reparsed = chakra::parse_trace(again, "fuzz-again.et");
  if (reparsed.nodes.size() != trace.nodes.size() || chakra::serialize_trace(reparsed) != again) std::abort();
  try {
    const Graph graph = Graph::build(trace, "fuzz.et");
    if (!parsed || !same_graph(graph, *parsed)) std::abort();
    Graph twin = Graph::parse(again, "fuzz-again.et");
    if (!twin.share_structure(*parsed) || !same_graph(twin, *parsed)) std::abort();
  } catch (const Error& e) {
    if (parsed || parse_error != e.what()) std::abort();
  }
  return 0;
}
