// `chakrasim generate micro`: the reference generator's microbenchmark families, or ASTRA-sim's
// single-collective microbenchmarks with --collective.
#include <iostream>
#include <memory>

#include "cli/generators.h"
#include "cli/size_option.h"
#include "core/error.h"
#include "core/output_path.h"
#include "generate/micro/micro_generator.h"

namespace chakrasim::cli {

Command add_generate_micro(CLI::App& generate, const std::string& description) {
  struct MicroArgs {
    std::string dir;
    tools::MicroOptions families;
    tools::CollectiveBenchOptions bench;
    std::string version;
    std::int64_t npus = 0;  // signed, so that -1 is refused as -1 rather than read as 2^64-1
  };
  auto args = std::make_shared<MicroArgs>();
  CLI::App* m = generate.add_subcommand("micro", description);
  m->footer("Examples:\n"
            "  chakrasim generate micro --npus 8 --out micro\n"
            "writes micro/FAMILY.<rank>.et for the 14 families of Chakra's generator (one_comp_node,\n"
            "ALL_REDUCE, ..., one_comm_send_node, one_comm_recv_node) and send_recv_ring, a runnable\n"
            "send/receive ring (the reference's send and receive nodes carry only tensor_size and cannot\n"
            "run); then e.g.\n"
            "  chakrasim run --workload micro/ALL_REDUCE --system sys.json --network net.yml\n"
            "\n"
            "  chakrasim generate micro --npus 16 --out ar --collective all_reduce --size 1MiB\n"
            "writes ar/all_reduce.<rank>.et, ASTRA-sim's examples/workload/microbenchmarks/all_reduce/16npus_1MB.");
  m->add_option("--npus", args->npus, "Number of NPUs (one file per NPU and family)")->required();
  m->add_option("--out", args->dir, "Output directory (created if missing)")->required();
  m->add_option("--runtime", args->families.runtime_micros, "Duration of the compute nodes, in µs")
      ->capture_default_str();
  add_size_option(m, "--tensor-size", args->families.tensor_bytes, "tensor_size of the memory and send/receive nodes")
      ->capture_default_str();
  add_size_option(m, "--comm-size", args->families.comm_bytes, "comm_size of the collectives and of send_recv_ring")
      ->capture_default_str();
  m->add_option("--collective", args->bench.collective,
                "Instead of the families, one collective per NPU: all_reduce, all_gather, reduce_scatter, "
                "all_to_all, broadcast, reduce, gather, scatter or barrier (all-reduce, allreduce: the same)");
  add_size_option(m, "--size", args->bench.size_bytes, "With --collective: its comm_size");
  m->add_option("--coll-size-mb", args->bench.size_mib, "With --collective: its size in MiB (--size's older form)")
      ->capture_default_str();
  m->add_option("--et-version", args->version,
                "GlobalMetadata version (default 1.0.0 for the families, 0.0.4 with --collective)");

  return [m, args]() -> int {
    if (!m->parsed()) return -1;
    if (args->npus < 1) fail("--npus is {}; expected at least 1 NPU", args->npus);
    args->families.npus = static_cast<std::size_t>(args->npus);
    prepare_output_dir(args->dir, "--out");
    std::vector<tools::TraceFamily> families;
    if (!args->bench.collective.empty()) {
      for (const char* flag : {"--runtime", "--tensor-size", "--comm-size"}) {
        if (m->count(flag) > 0) fail("{} applies to the families, not to --collective (which takes --size)", flag);
      }
      if (m->count("--size") > 0 && m->count("--coll-size-mb") > 0) fail("--size and --coll-size-mb: give one");
      if (m->count("--size") > 0 && args->bench.size_bytes == 0) fail("--size is 0; expected at least 1 byte");
      args->bench.npus = args->families.npus;
      if (!args->version.empty()) args->bench.version = args->version;
      families.push_back(tools::collective_benchmark(args->bench));
    } else {
      for (const char* flag : {"--size", "--coll-size-mb"}) {
        if (m->count(flag) > 0) fail("{} needs --collective (the families use --comm-size)", flag);
      }
      if (!args->version.empty()) args->families.version = args->version;
      families = tools::reference_micro_families(args->families);
    }
    const std::size_t files = tools::write_families(families, args->dir);
    std::cout << "wrote " << files << " files to " << args->dir << ":";
    for (const auto& f : families) std::cout << " " << f.name;
    std::cout << "\n";
    return 0;
  };
}

}  // namespace chakrasim::cli
