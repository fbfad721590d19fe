// libFuzzer target: the remote-memory JSON and communicator-group JSON parsers. The first byte
// picks the parser and, for groups, the network size.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/other_configs.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] & 1) {
      (void)config::parse_memory(text, "fuzz-memory.json");
    } else {
      (void)config::parse_comm_groups(text, "fuzz-groups.json", 1 + data[0] / 2);
    }
  } catch (const Error&) {}
  return 0;
}
