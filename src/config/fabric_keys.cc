#include "config/fabric_keys.h"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "core/parse_number.h"
#include "core/read_file.h"
#include "network/fabric/fabric_text.h"

namespace chakrasim::config {
namespace {

struct FabricKey {
  const char* key;
  const char* type;
  const char* unit;
  const char* default_text;
  const char* meaning;
};

constexpr FabricKey kKeys[] = {
    {"routing", "ecmp | d-mod-k", "-", "ecmp",
     "how a flow picks among equal shortest paths: ecmp hashes the flow (collisions as on Ethernet); d-mod-k "
     "picks by destination, as InfiniBand fat-tree routing (a shift permutation runs without collisions)"},
    {"ecmp_seed", "integer", "-", "1", "the ECMP hash's seed: the same seed gives the same routes"},
    {"routes_file", "path", "-", "none",
     "with topology: [ Custom ]: fixed routes, one per line as node ids from the source NPU's node to the "
     "destination's; pairs not listed are routed by `routing`"},
    {"nic_bandwidth", "number or \"400Gbps\"", "GB/s (2^30 B/s)", "none",
     "caps what each NPU sends, and what it receives, over all its links at once (its NIC); a number is in the "
     "bandwidth key's unit, a string names its own (Gbps, GBps, ...)"},
};

std::filesystem::path beside(const std::string& source, const std::string& file) {
  std::filesystem::path path(file);
  if (path.is_relative()) path = std::filesystem::path(source).parent_path() / path;
  return path;
}

}  // namespace

std::vector<std::string> fabric_keys() {
  std::vector<std::string> keys;
  for (const FabricKey& k : kKeys) keys.emplace_back(k.key);
  return keys;
}

void read_fabric_keys(const YAML::Node& root, const std::string& source, network::TopologySpec& spec) {
  auto scalar = [&](const char* key) -> std::string {
    const YAML::Node node = root[key];
    if (!node.IsScalar() || node.Scalar().empty()) {
      fail("{}: key \"{}\": expected a single value, such as {}", source, key,
           std::string(key) == "routing" ? "ecmp" : "1");
    }
    return node.Scalar();
  };
  if (root["routing"]) {
    const std::string kind = scalar("routing");
    if (kind == "ecmp") {
      spec.routing.kind = network::RoutingKind::kEcmp;
    } else if (kind == "d-mod-k") {
      spec.routing.kind = network::RoutingKind::kDestinationModK;
    } else {
      fail("{}: key \"routing\" is \"{}\"; expected ecmp or d-mod-k", source, kind);
    }
  }
  if (root["ecmp_seed"]) {
    const std::string text = scalar("ecmp_seed");
    const auto seed = parse_number<std::uint64_t>(text);
    if (!seed) fail("{}: key \"ecmp_seed\" is \"{}\"; expected a whole number from 0 to 2^64-1", source, text);
    spec.routing.seed = *seed;
  }
  if (root["nic_bandwidth"]) {
    const std::string text = scalar("nic_bandwidth");
    if (const auto number = parse_number<double>(text)) {
      if (!(*number > 0) || !std::isfinite(*number)) {
        fail("{}: key \"nic_bandwidth\" is {}; expected a positive number of GB/s", source, text);
      }
      spec.nic_bytes_per_ns = network::bytes_per_ns(*number);
    } else {
      spec.nic_bytes_per_ns =
          network::parse_bandwidth_bytes_per_ns(text, fmt::format("{}: key \"nic_bandwidth\"", source));
    }
  }
  if (root["routes_file"]) {
    const std::string file = scalar("routes_file");
    if (!spec.fabric) {
      fail("{}: key \"routes_file\" needs topology: [ Custom ] with a topology_file: routes name the graph's nodes",
           source);
    }
    const std::string path = beside(source, file).string();
    spec.routing.fixed = std::make_shared<const network::FixedRoutes>(
        network::read_fixed_routes(read_file(path, "routes file", "the routes file"), path, *spec.fabric));
  }
}

std::string describe_fabric_keys(const std::function<std::string(const char*)>& readers_of) {
  std::string out;
  for (const FabricKey& k : kKeys) {
    out += fmt::format("  {:<12} {:<40} {:<20} default {}\n      {}\n      read by: {}\n", k.key, k.type, k.unit,
                       k.default_text, k.meaning, readers_of(k.key));
  }
  return out;
}

}  // namespace chakrasim::config
