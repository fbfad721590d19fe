// Chakra ET -> DOT, GraphML, SVG or PDF (placeholder: being written).
#pragma once

namespace chakrasim::tools {}  // namespace chakrasim::tools
