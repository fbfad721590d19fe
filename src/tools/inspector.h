// A readable summary of a Chakra ET and its problems (placeholder: being written).
#pragma once

namespace chakrasim::tools {}  // namespace chakrasim::tools
