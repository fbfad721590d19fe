// libFuzzer target: the MSCCL-IR XML reader and converter (chakra msccl). The first byte picks
// the collective and the collective's size.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "tools/msccl/msccl_converter.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  if (size == 0) return 0;
  static const char* const kCollectives[] = {"allreduce", "allgather", "alltoall", "reducescatter"};
  tools::MscclOptions options;
  options.collective = kCollectives[data[0] & 3];
  options.collective_bytes = std::uint64_t{1} << (data[0] >> 2);
  const std::string xml(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    (void)tools::convert_msccl(xml, "fuzz.xml", options);
  } catch (const Error&) {}
  return 0;
}
