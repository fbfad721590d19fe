// Microbenchmark Chakra ETs (placeholder: being written).
#pragma once

namespace chakrasim::tools {}  // namespace chakrasim::tools
