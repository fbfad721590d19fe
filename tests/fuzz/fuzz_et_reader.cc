// libFuzzer target: the .et reader and the graph builder on arbitrary bytes. Anything may be
// rejected with chakrasim::Error; nothing may crash, hang or leak. What parses must serialise
// to bytes that parse again into the same trace.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "chakra/et_file.h"
#include "chakra/graph.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  chakra::Trace trace;
  try {
    trace = chakra::parse_trace(bytes, "fuzz.et");
  } catch (const Error&) {
    return 0;
  }
  const std::string again = chakra::serialize_trace(trace);
  const chakra::Trace reparsed = chakra::parse_trace(again, "fuzz-again.et");
  if (reparsed.nodes.size() != trace.nodes.size() || chakra::serialize_trace(reparsed) != again) std::abort();
  try {
    const chakra::Graph graph = chakra::Graph::build(trace, "fuzz.et");
    (void)graph;
  } catch (const Error&) {}
  return 0;
}
