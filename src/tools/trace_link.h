// PyTorch host ET + Kineto device trace -> ET+ JSON (placeholder: being written).
#pragma once

namespace chakrasim::tools {}  // namespace chakrasim::tools
