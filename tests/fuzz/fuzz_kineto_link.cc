// libFuzzer target: the trace linker (chakra link), which reads a PyTorch host trace and a Kineto
// device trace. The input is the two JSON texts separated by the first NUL byte; without one, the
// input is the device trace and the host trace is a small valid one, so that the fuzzer reaches
// the Kineto reader's event handling.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "tools/link/trace_link.h"

namespace {

constexpr const char* kHost =
    R"({"schema": "1.1.1-chakra.0.0.4", "pid": 4242, "time": "t", "start_ts": 0, "finish_ts": 0,
 "nodes": [
  {"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 1, "inputs": {"values": [], "shapes": [],
   "types": []}, "outputs": {"values": [], "shapes": [], "types": []}, "attrs": [
   {"name": "rf_id", "type": "uint64", "value": 0}, {"name": "fw_parent", "type": "uint64", "value": 0},
   {"name": "seq_id", "type": "int64", "value": -1}, {"name": "scope", "type": "uint64", "value": 7},
   {"name": "tid", "type": "uint64", "value": 0}, {"name": "fw_tid", "type": "uint64", "value": 0},
   {"name": "op_schema", "type": "string", "value": ""}]},
  {"id": 2, "name": "aten::mm", "ctrl_deps": 1, "inputs": {"values": [], "shapes": [], "types": []},
   "outputs": {"values": [], "shapes": [], "types": []}, "attrs": [
   {"name": "rf_id", "type": "uint64", "value": 5}, {"name": "fw_parent", "type": "uint64", "value": 0},
   {"name": "seq_id", "type": "int64", "value": -1}, {"name": "scope", "type": "uint64", "value": 0},
   {"name": "tid", "type": "uint64", "value": 1}, {"name": "fw_tid", "type": "uint64", "value": 0},
   {"name": "op_schema", "type": "string", "value": ""}]}]})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  const std::string host = split == std::string::npos ? kHost : input.substr(0, split);
  const std::string device = split == std::string::npos ? input : input.substr(split + 1);
  try {
    (void)tools::link_traces(host, "fuzz-host.json", device, "fuzz-device.json", {});
  } catch (const Error&) {}
  return 0;
}
