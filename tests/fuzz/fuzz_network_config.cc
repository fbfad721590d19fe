// libFuzzer target: the network YAML parser on arbitrary text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/network_config.h"
#include "core/error.h"
#include "network/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  try {
    const network::TopologySpec spec =
        config::parse_network(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yml");
    const network::Topology topology(spec);  // what parses must make a valid topology
    (void)topology;
  } catch (const Error&) {}
  return 0;
}
