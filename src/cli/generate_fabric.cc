// `chakrasim generate fabric`: a cluster fabric from a few parameters (network/fabric/
// generators.h), written as a topology text file that `topology: [ Custom ]` reads (and ns-3's
// and SimAI's tools too), with a network YAML naming it.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/generators.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/output_path.h"
#include "network/fabric/fabric_text.h"
#include "network/fabric/generators.h"

namespace chakrasim::cli {
namespace {

struct FabricArgs {
  std::string kind = "fat-tree";
  std::uint32_t npus = 0;
  std::uint32_t radix = 0;
  std::uint32_t tiers = 3;
  std::uint32_t oversubscription = 1;
  std::uint32_t npus_per_leaf = 0;
  std::uint32_t spines = 0;
  std::string children, parents, dims;
  std::uint32_t routers_per_group = 0, npus_per_router = 0, global_links = 0, groups = 0;
  std::string bandwidth = "400Gbps", latency = "500ns";
  std::string tier_bandwidth;
  std::uint32_t npus_per_server = 1;
  std::string scale_up_bandwidth = "7200Gbps", scale_up_latency = "25ns";
  bool rail_optimised = false;
  std::uint32_t planes = 1;
  std::string out, network_out;
};

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, by);) parts.push_back(part);
  return parts;
}

// "4,4,8" -> {4, 4, 8}, each at least 1.
std::vector<std::uint32_t> counts(const std::string& text, char by, const char* flag) {
  std::vector<std::uint32_t> out;
  for (const std::string& part : split(text, by)) {
    std::size_t used = 0;
    unsigned long value = 0;
    try {
      value = std::stoul(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || value == 0 || value > (1u << 26)) {
      fail("{}: \"{}\" is not a list of whole numbers of at least 1 separated by '{}'", flag, text, by);
    }
    out.push_back(static_cast<std::uint32_t>(value));
  }
  if (out.empty()) fail("{}: empty; expected whole numbers separated by '{}'", flag, by);
  return out;
}

network::Fabric build(const FabricArgs& a) {
  const network::LinkSpec nic{network::parse_bandwidth_bytes_per_ns(a.bandwidth, "--bandwidth"),
                              network::parse_latency_ns(a.latency, "--latency")};
  if (a.kind == "dragonfly") {
    network::DragonflySpec spec;
    spec.routers = a.routers_per_group;
    spec.npus = a.npus_per_router;
    spec.global_links = a.global_links;
    spec.groups = a.groups;
    spec.nic = spec.local = spec.global = nic;
    return network::dragonfly(spec, "--kind dragonfly");
  }
  if (a.kind == "torus") {
    if (a.dims.empty()) fail("--kind torus needs --dims, e.g. 4x4x4");
    return network::torus(counts(a.dims, 'x', "--dims"), nic, "--kind torus");
  }
  network::SwitchedClusterSpec spec;
  if (a.kind == "fat-tree") {
    if (a.radix < 2 || a.radix % 2 != 0)
      fail("--radix {}: expected an even number of switch ports, 2 or more", a.radix);
    if (a.tiers != 2 && a.tiers != 3) fail("--tiers {}: expected 2 or 3", a.tiers);
    if (a.oversubscription == 0 || a.oversubscription > a.radix / 2)
      fail("--oversubscription {}: expected 1 to {} (the leaves' up-links divided by it)", a.oversubscription,
           a.radix / 2);
    const std::uint32_t half = a.radix / 2;
    const std::uint32_t up = half / a.oversubscription;
    // A k-port switch: k/2 ports down, k/2 up (fewer at the leaves when oversubscribed).
    spec.children =
        a.tiers == 2 ? std::vector<std::uint32_t>{half, a.radix} : std::vector<std::uint32_t>{half, half, a.radix};
    spec.parents = a.tiers == 2 ? std::vector<std::uint32_t>{1, up} : std::vector<std::uint32_t>{1, up, half};
  } else if (a.kind == "leaf-spine") {
    if (a.npus_per_leaf == 0 || a.spines == 0 || a.npus == 0)
      fail("--kind leaf-spine needs --npus, --npus-per-leaf and --spines");
    spec.children = {a.npus_per_leaf, (a.npus / a.planes + a.npus_per_leaf - 1) / a.npus_per_leaf};
    spec.parents = {1, a.spines};
  } else if (a.kind == "xgft") {
    spec.children = counts(a.children, ',', "--children");
    spec.parents = counts(a.parents, ',', "--parents");
  } else {
    fail("--kind \"{}\": expected fat-tree, leaf-spine, xgft, dragonfly or torus", a.kind);
  }
  std::uint64_t nics = 1;
  for (std::uint32_t m : spec.children) nics *= m;
  spec.npus = a.npus != 0 ? a.npus : static_cast<std::uint32_t>(std::min<std::uint64_t>(nics, 1u << 26));
  const std::vector<std::string> tier_bw =
      a.tier_bandwidth.empty() ? std::vector<std::string>{} : split(a.tier_bandwidth, ',');
  if (!tier_bw.empty() && tier_bw.size() != spec.children.size())
    fail("--tier-bandwidth: {} entries for {} tiers; expected one per tier", tier_bw.size(), spec.children.size());
  for (std::size_t i = 0; i < spec.children.size(); ++i) {
    spec.tier_links.push_back(
        {tier_bw.empty() ? nic.bytes_per_ns : network::parse_bandwidth_bytes_per_ns(tier_bw[i], "--tier-bandwidth"),
         nic.latency_ns});
  }
  spec.npus_per_server = a.npus_per_server;
  spec.scale_up = {network::parse_bandwidth_bytes_per_ns(a.scale_up_bandwidth, "--scale-up-bandwidth"),
                   network::parse_latency_ns(a.scale_up_latency, "--scale-up-latency")};
  spec.rail_optimised = a.rail_optimised;
  spec.planes = a.planes;
  return network::switched_cluster(spec, "--kind " + a.kind);
}

}  // namespace

Command add_generate_fabric(CLI::App& parent, const std::string& description) {
  auto a = std::make_shared<FabricArgs>();
  CLI::App* g = parent.add_subcommand("fabric", description);
  g->footer("Examples:\n"
            "  chakrasim generate fabric --kind fat-tree --radix 8 --out ft.txt --network-out net.yml\n"
            "    a 3-tier k = 8 fat-tree: 128 NPUs, 80 switches; net.yml says topology: [ Custom ]\n"
            "  chakrasim generate fabric --kind leaf-spine --npus 64 --npus-per-leaf 16 --spines 8 --out ls.txt\n"
            "    16 NPUs and 8 spine up-links per leaf: 2:1 oversubscribed\n"
            "  chakrasim generate fabric --kind fat-tree --radix 16 --tiers 2 --npus-per-server 8 --rail-optimised "
            "--out rails.txt\n"
            "    servers of 8 NPUs on an NVSwitch, NIC r of every server under rail r's leaves\n"
            "  chakrasim generate fabric --kind torus --dims 4x4x4 --bandwidth 100GBps --out torus.txt\n"
            "  chakrasim generate fabric --kind dragonfly --routers-per-group 4 --npus-per-router 2 --global-links 2 "
            "--out df.txt\n"
            "    9 groups of 4 routers, 72 NPUs; one global link between every two groups\n"
            "Run with: chakrasim run --network net.yml --backend flow ...");
  g->add_option("--kind", a->kind, "fat-tree, leaf-spine, xgft, dragonfly or torus")->capture_default_str();
  g->add_option("--npus", a->npus, "NPUs (default: as many as the tree holds)");
  g->add_option("--radix", a->radix, "fat-tree: ports per switch (even)");
  g->add_option("--tiers", a->tiers, "fat-tree: 2 or 3 tiers of switches")->capture_default_str();
  g->add_option("--oversubscription", a->oversubscription,
                "fat-tree: the leaves' up-links divided by this (2: 2:1 at the leaves)")
      ->capture_default_str();
  g->add_option("--npus-per-leaf", a->npus_per_leaf, "leaf-spine: NICs per leaf");
  g->add_option("--spines", a->spines, "leaf-spine: spines, each linked once to every leaf");
  g->add_option("--children", a->children, "xgft: children per switch of each tier, e.g. 4,4,8");
  g->add_option("--parents", a->parents, "xgft: parents per node below each tier, e.g. 1,4,4");
  g->add_option("--dims", a->dims, "torus: NPUs per dimension, e.g. 4x4x4");
  g->add_option("--routers-per-group", a->routers_per_group, "dragonfly: routers per group, joined all to all");
  g->add_option("--npus-per-router", a->npus_per_router, "dragonfly: NPUs on each router");
  g->add_option("--global-links", a->global_links, "dragonfly: links from each router to other groups");
  g->add_option("--groups", a->groups, "dragonfly: groups (default: routers x global links + 1)");
  g->add_option("--bandwidth", a->bandwidth, "each NIC's link (400Gbps, 50GBps)")->capture_default_str();
  g->add_option("--latency", a->latency, "each link's latency (500ns, 0.0005ms)")->capture_default_str();
  g->add_option("--tier-bandwidth", a->tier_bandwidth, "per tier, leaf first, when they differ: 400Gbps,800Gbps");
  g->add_option("--npus-per-server", a->npus_per_server, "NPUs per server on one scale-up switch (1: none)")
      ->capture_default_str();
  g->add_option("--scale-up-bandwidth", a->scale_up_bandwidth, "each NPU's scale-up link")->capture_default_str();
  g->add_option("--scale-up-latency", a->scale_up_latency, "the scale-up links' latency")->capture_default_str();
  g->add_flag("--rail-optimised", a->rail_optimised, "NIC r of every server under the leaves of rail r");
  g->add_option("--planes", a->planes, "separate scale-out planes, each NIC link a share of --bandwidth")
      ->capture_default_str();
  g->add_option("--out", a->out, "The topology text file to write")->required();
  g->add_option("--network-out", a->network_out, "Also a network YAML naming it (topology: [ Custom ])");

  return [g, a]() -> int {
    if (!g->parsed()) return -1;
    prepare_output_file(a->out, "--out");
    if (!a->network_out.empty()) prepare_output_file(a->network_out, "--network-out");
    const network::Fabric fabric = build(*a);
    write_file_atomically(a->out, network::fabric_text(fabric), "the topology file");
    std::cout << "wrote " << a->out << ": " << fabric.npu_count() << " NPUs, "
              << fabric.node_count() - fabric.npu_count() << " switches, " << fabric.link_count() / 2 << " cables\n";
    if (!a->network_out.empty()) {
      const std::string relative =
          std::filesystem::relative(a->out, std::filesystem::path(a->network_out).parent_path().empty()
                                                ? std::filesystem::path(".")
                                                : std::filesystem::path(a->network_out).parent_path())
              .string();
      write_file_atomically(a->network_out,
                            fmt::format("# {} NPUs drawn as a graph; run with --backend flow\ntopology: [ Custom ]\n"
                                        "topology_file: \"{}\"\n",
                                        fabric.npu_count(), relative),
                            "the network YAML");
      std::cout << "wrote " << a->network_out << "\n";
    }
    return 0;
  };
}

}  // namespace chakrasim::cli
