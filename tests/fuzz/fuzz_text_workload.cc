// libFuzzer target: the ASTRA-sim 1.0 text-workload parser and converter (chakra convert text).
// The first byte picks the NPU count (1 to 16) and passes (1 or 2); traces go to a sink that
// drops them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "tools/text/text_converter.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  if (size == 0) return 0;
  tools::TextOptions options;
  options.npus = 1 + (data[0] & 15);
  options.passes = 1 + ((data[0] >> 4) & 1);
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    (void)tools::convert_text_each(text, "fuzz-workload.txt", options, [](std::size_t, const chakra::Trace&) {});
  } catch (const Error&) {}
  return 0;
}
