// libFuzzer target: the topology text reader (ASTRA-sim's Custom, ns-3's and SimAI's forms), and
// ECMP routes between the first and last NPU of whatever it accepts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "network/fabric/fabric_text.h"
#include "network/fabric/routing.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const network::Fabric fabric = network::parse_fabric_text(text, "fuzz-topology.txt");
    if (fabric.npu_count() > 1) {
      std::vector<std::uint32_t> links;
      network::EcmpRouter(fabric, 1).route(0, fabric.npu_count() - 1, 7, links);
    }
    (void)network::fabric_text(fabric);
  } catch (const Error&) {}
  return 0;
}
