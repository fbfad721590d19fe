// libFuzzer target: the PyTorch execution-trace JSON reader and converter (chakra convert pytorch).
// The first byte picks the options: the reference's defects kept or repaired.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "tools/pytorch/pytorch_converter.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  if (size == 0) return 0;
  tools::PytorchOptions options;
  options.fix_defects = (data[0] & 1) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    (void)tools::convert_pytorch(text, "fuzz-host.json", options);
  } catch (const Error&) {}
  return 0;
}
