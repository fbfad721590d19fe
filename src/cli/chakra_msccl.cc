// `chakrasim chakra msccl`: MSCCL-IR XML -> per-rank ETs of a custom collective.
#include <iostream>
#include <memory>

#include "chakra/graph.h"
#include "cli/chakra_tools.h"
#include "cli/size_option.h"
#include "core/output_path.h"
#include "tools/msccl/msccl_converter.h"

namespace chakrasim::cli {

Command add_msccl(CLI::App& chakra) {
  struct MscclArgs {
    std::string input, prefix;
    tools::MscclOptions options;
  };
  auto msccl = std::make_shared<MscclArgs>();
  CLI::App* m = chakra.add_subcommand("msccl", "Convert an MSCCL-IR XML algorithm into per-rank Chakra ETs for a "
                                               "custom collective");
  m->footer("Example:\n"
            "  chakrasim chakra msccl ring_allreduce.xml --coll-size 1048576 --collective allreduce --out "
            "algo/custom_allreduce\n"
            "writes algo/custom_allreduce.<gpu>.et, to be named in the system JSON as\n"
            "  \"all-reduce-implementation-custom\": [\"algo/custom_allreduce\"]");
  m->add_option("input", msccl->input, "MSCCL-IR XML file")->required();
  m->add_option("--out", msccl->prefix, "Output prefix: writes PREFIX.<gpu>.et")->required();
  add_size_option(m, "--coll-size", msccl->options.collective_bytes, "Collective size")->required();
  m->add_option("--collective", msccl->options.collective,
                "allreduce, allgather, alltoall, reducescatter, broadcast or reduce (all_reduce, all-reduce: the same)")
      ->capture_default_str();
  m->add_option("--reduction-bw", msccl->options.reduction_gb_per_s,
                "GB/s (10^9 B/s) of an rrc step's reduction, 3 x bytes / this; 50 is the reference's fixed figure, "
                "the system's local-mem-bw the machine's")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);

  return [m, msccl]() -> int {
    if (!m->parsed()) return -1;
    // The converter's names are MSCCL's (allreduce); any spelling of one is taken.
    if (const auto type = chakra::comm_type_from_name(msccl->options.collective)) {
      std::string name;
      for (const char* c = chakra::comm_type_file_name(*type); *c != 0; ++c) {
        if (*c != '_') name += *c;
      }
      msccl->options.collective = name;
    }
    prepare_output_prefix(msccl->prefix, "--out");
    const std::size_t files = tools::convert_msccl_file(msccl->input, msccl->prefix, msccl->options);
    std::cout << "wrote " << files << " rank files " << msccl->prefix << ".<gpu>.et\n";
    return 0;
  };
}

}  // namespace chakrasim::cli
