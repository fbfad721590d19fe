// PyTorch host ET or ET+ JSON -> Chakra ET (placeholder: being written).
#pragma once

namespace chakrasim::tools {}  // namespace chakrasim::tools
