// libFuzzer target: the synthesis model reader (tools/synthesize/synthesis_model.h) and the
// generator on what it accepts, with the job re-sized when the first byte asks for it. What a
// model expands to is capped, so that a valid model of a huge job is refused rather than written.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "tools/synthesize/synthesis_generator.h"
#include "tools/synthesize/synthesis_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const tools::SynthesisModel model = tools::parse_model(text, "fuzz-model.json");
    tools::GenerateOptions options;
    options.seed = data[0];
    options.npus = data[0] % 4 == 0 ? 0 : model.npus * (data[0] % 4);
    options.iterations = 1 + data[0] % 3;
    options.max_total_nodes = 20000;
    std::uint64_t nodes = 0;
    tools::generate(model, "fuzz-model.json", options,
                    [&](std::uint64_t, const chakra::Trace& trace) { nodes += trace.nodes.size(); });
  } catch (const Error&) {}
  return 0;
}
