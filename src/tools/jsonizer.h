// Chakra ET <-> JSON (jsonize and dejsonize) (placeholder: being written).
#pragma once

namespace chakrasim::tools {}  // namespace chakrasim::tools
