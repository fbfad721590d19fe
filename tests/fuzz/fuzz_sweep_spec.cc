// libFuzzer target: the sweep spec reader (sweep/sweep_spec.h) and the expansion of its first
// points (derived expressions included).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "sweep/sweep_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const sweep::SweepSpec spec = sweep::parse_spec(text, "fuzz-sweep.yaml");
    const std::size_t points = std::min<std::size_t>(sweep::point_count(spec), 64);
    for (std::size_t p = 0; p < points; ++p) {
      for (const sweep::Value& v : sweep::point_at(spec, p).values) (void)sweep::cell_text(v);
    }
  } catch (const Error&) {}
  return 0;
}
