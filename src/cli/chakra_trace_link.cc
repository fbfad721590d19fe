// `chakrasim chakra link`: PyTorch host execution trace + Kineto device trace -> ET+ JSON.
#include <iostream>
#include <memory>

#include "cli/chakra_tools.h"
#include "core/output_path.h"
#include "tools/link/trace_link.h"

namespace chakrasim::cli {

Command add_link(CLI::App& parent) {
  struct LinkArgs {
    std::string host, device, out;
    std::int64_t rank = 0;
  };
  auto args = std::make_shared<LinkArgs>();
  CLI::App* app = parent.add_subcommand("link", "PyTorch host ET + Kineto device trace -> ET+ JSON (what "
                                                "chakra_trace_link does)");
  app->footer("Example:\n"
              "  chakrasim chakra link --host host_et.0.json --device kineto.0.json --out et_plus.0.json\n"
              "links one rank's host execution trace with the Kineto trace of the same run (ET+ JSON, for\n"
              "`chakrasim chakra convert pytorch`): each host op gets its measured times, and the kernels it\n"
              "launched follow it as GPU nodes. sync_dep comes from cudaDeviceSynchronize /\n"
              "cudaStreamSynchronize / cudaEventSynchronize calls: the next op of that thread waits for the\n"
              "last GPU op launched before the call on each stream it synchronised.");
  app->add_option("--host,--chakra-host-trace", args->host, "PyTorch host execution trace (JSON)")->required();
  app->add_option("--device,--chakra-device-trace", args->device, "Kineto device trace (Chrome-trace JSON)")
      ->required();
  app->add_option("--out,--output-file", args->out, "ET+ JSON to write")->required();
  CLI::Option* rank = app->add_option("--rank", args->rank,
                                      "The traces' rank: when given, the device trace's distributedInfo.rank must "
                                      "match");

  return [app, args, rank]() -> int {
    if (!app->parsed()) return -1;
    prepare_output_file(args->out, "--out");
    tools::LinkOptions options;
    if (rank->count() > 0) options.rank = args->rank;
    const tools::LinkReport report = tools::link_trace_files(args->host, args->device, args->out, options);
    for (const std::string& warning : report.warnings) std::cerr << "warning: " << warning << "\n";
    std::cout << "wrote " << args->out << ": " << report.host_nodes << " host nodes (" << report.linked_ops
              << " linked to the device trace), " << report.gpu_ops << " GPU ops, " << report.inter_thread_deps
              << " inter-thread and " << report.sync_deps << " sync dependencies\n";
    return 0;
  };
}

}  // namespace chakrasim::cli
