// Python's str() of a value as Python's json.load returns it, for the text the reference PyTorch
// converter stores in a node's inputs and outputs: a string is itself, anything else is its
// repr(): ['a', "it's", 1, 2.5, 1e-05, True, None], {'k': [[]]}. Objects keep the input's key
// order, as Python's dict does.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace chakrasim::tools::pyrepr {

std::string python_str(const nlohmann::ordered_json& v);

}  // namespace chakrasim::tools::pyrepr
