// libFuzzer target: the system JSON parser on arbitrary text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/system_config.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  try {
    config::SystemFlags flags;
    flags.injection_scale = size % 3;
    (void)config::parse_system(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json", flags);
  } catch (const Error&) {}
  return 0;
}
