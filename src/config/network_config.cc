#include "config/network_config.h"

#include <cmath>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/read_file.h"
#include "core/error.h"

namespace chakrasim::config {
namespace {

YAML::Node required_list(const YAML::Node& root, const char* key, const std::string& source) {
  YAML::Node node = root[key];
  if (!node) fail("{}: missing key \"{}\"; expected a list with one entry per dimension", source, key);
  if (!node.IsSequence() || node.size() == 0) {
    fail("{}: key \"{}\": expected a non-empty list with one entry per dimension", source, key);
  }
  return node;
}

double number_at(const YAML::Node& list, const char* key, std::size_t i, const std::string& source) {
  try {
    double v = list[i].as<double>();
    if (!std::isfinite(v)) throw YAML::Exception(YAML::Mark::null_mark(), "not finite");
    return v;
  } catch (const YAML::Exception&) {
    fail("{}: {}[{}]: value \"{}\" is not a number", source, key, i,
         list[i].IsScalar() ? list[i].Scalar() : std::string("(not a scalar)"));
  }
}

}  // namespace

network::TopologySpec parse_network(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail("{}: line {}, column {}: invalid YAML: {}", source, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (!root.IsMap()) fail("{}: expected a YAML mapping with keys topology, npus_count, bandwidth, latency", source);

  YAML::Node topology = required_list(root, "topology", source);
  YAML::Node npus = required_list(root, "npus_count", source);
  YAML::Node bandwidth = required_list(root, "bandwidth", source);
  YAML::Node latency = required_list(root, "latency", source);
  const std::size_t dims = topology.size();
  for (auto [key, list] : {std::pair{"npus_count", npus}, {"bandwidth", bandwidth}, {"latency", latency}}) {
    if (list.size() != dims) {
      fail("{}: key \"{}\" has {} entries but \"topology\" has {}; expected one entry per dimension",
           source, key, list.size(), dims);
    }
  }

  network::TopologySpec spec;
  std::uint64_t total = 1;
  for (std::size_t i = 0; i < dims; ++i) {
    network::DimensionSpec d;
    const std::string name = topology[i].IsScalar() ? topology[i].Scalar() : "(not a scalar)";
    if (name == "Ring") {
      d.kind = network::DimensionKind::kRing;
    } else if (name == "FullyConnected") {
      d.kind = network::DimensionKind::kFullyConnected;
    } else if (name == "Switch") {
      d.kind = network::DimensionKind::kSwitch;
    } else {
      fail("{}: topology[{}]: value \"{}\" is not a topology; expected Ring, FullyConnected or "
           "Switch (case-sensitive)",
           source, i, name);
    }
    const double n = number_at(npus, "npus_count", i, source);
    if (n < 2 || n != std::floor(n) || n > 1e9) {
      fail("{}: npus_count[{}]: value {} is invalid; expected an integer of at least 2", source, i, n);
    }
    d.npus = static_cast<std::uint32_t>(n);
    d.bandwidth_gib_per_s = number_at(bandwidth, "bandwidth", i, source);
    if (d.bandwidth_gib_per_s <= 0) {
      fail("{}: bandwidth[{}]: value {} is invalid; expected a positive number in GB/s", source, i,
           d.bandwidth_gib_per_s);
    }
    d.latency_ns = number_at(latency, "latency", i, source);
    if (d.latency_ns < 0) {
      fail("{}: latency[{}]: value {} is invalid; expected a number of ns, 0 or more", source, i,
           d.latency_ns);
    }
    total *= d.npus;
    if (total > (1ull << 31)) {
      fail("{}: npus_count: the network has more than 2^31 NPUs; expected a product of at most {}",
           source, 1ull << 31);
    }
    spec.dims.push_back(d);
  }
  return spec;
}

network::TopologySpec load_network(const std::string& path) {
  return parse_network(read_file(path, "network configuration", "the network configuration file"), path);
}

}  // namespace chakrasim::config
