// ASTRA-sim 1.0 text workload -> per-rank Chakra ETs (placeholder: being written).
#pragma once

namespace chakrasim::tools {}  // namespace chakrasim::tools
