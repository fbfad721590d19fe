// `chakrasim generate llm`: one training iteration of a transformer under 4-D parallelism
// (src/generate/llm/llm_generator.h).
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <map>
#include <memory>

#include "cli/generators.h"
#include "cli/progress_line.h"
#include "cli/run_inputs.h"
#include "cli/run_output.h"
#include "compute/systolic/systolic_presets.h"
#include "config/network_config.h"
#include "config/other_configs.h"
#include "config/system_config.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/output_path.h"
#include "core/resources.h"
#include "generate/llm/llm_generator.h"
#include "sim/simulation.h"

namespace chakrasim::cli {
namespace {

using namespace tools::llm;

struct LlmArgs {
  GenerateOptions o;
  std::string model, mlp, schedule = "1f1b", recompute = "none", dtype = "bf16", collectives = "astra-sim";
  std::uint64_t layers = 0, hidden = 0, ffn = 0, heads = 0, kv_heads = 0, seq = 0, vocab = 0, experts = 0, top_k = 0;
  std::uint64_t grad_bucket_m = 40;
  bool run = false;
};

template <typename T>
T pick(const std::string& flag, const std::string& value, const std::map<std::string, T>& choices) {
  std::string valid;
  for (const auto& [name, v] : choices) {
    if (name == value) return v;
    valid += (valid.empty() ? "" : ", ") + name;
  }
  fail("{}: unknown value \"{}\"; expected one of {}", flag, value, valid);
}

ModelSpec model_of(const LlmArgs& a, const CLI::App& app) {
  const bool preset = !a.model.empty();
  ModelSpec m = preset ? model_preset(a.model) : ModelSpec{};
  if (!preset) {
    for (const char* flag : {"--layers", "--hidden", "--heads", "--seq", "--vocab"}) {
      if (app.count(flag) == 0) fail("{}: expected a value (or --model NAME for a preset)", flag);
    }
  }
  auto set = [&](const char* flag, std::uint64_t value, std::uint64_t& field) {
    if (app.count(flag) > 0) field = value;
  };
  set("--layers", a.layers, m.layers);
  set("--hidden", a.hidden, m.hidden);
  set("--heads", a.heads, m.heads);
  set("--seq", a.seq, m.seq);
  set("--vocab", a.vocab, m.vocab);
  set("--experts", a.experts, m.experts);
  set("--top-k", a.top_k, m.top_k);
  if (!preset) {
    m.ffn = 4 * m.hidden;
    m.kv_heads = m.heads;
  }
  set("--ffn", a.ffn, m.ffn);
  set("--kv-heads", a.kv_heads, m.kv_heads);
  if (app.count("--mlp") > 0)
    m.mlp = pick<MlpKind>("--mlp", a.mlp, {{"gelu", MlpKind::kGelu}, {"swiglu", MlpKind::kSwiGlu}});
  if (preset && app.count("--layers") + app.count("--hidden") + app.count("--ffn") + app.count("--heads") +
                        app.count("--kv-heads") + app.count("--seq") + app.count("--vocab") + app.count("--experts") +
                        app.count("--top-k") + app.count("--mlp") >
                    0) {
    m.name += " (modified)";
  }
  return m;
}

// `--run`: the iteration simulated in memory on its own network and system, printed as
// `chakrasim run` prints it (without files, a 32k-GPU run needs no 60 GB of traces).
// `side_files`: write --network-out and --system-out (not yet written by generate_llm).
int simulate_in_memory(const GenerateOptions& o, bool side_files) {
  const bool network_out = side_files && !o.network_out.empty();
  const bool system_out = side_files && !o.system_out.empty();
  if (network_out) prepare_output_file(o.network_out, "--network-out");
  if (system_out) prepare_output_file(o.system_out, "--system-out");
  const auto start = std::chrono::steady_clock::now();
  ProgressLine progress(ProgressLine::mode_for(false, false, isatty(STDERR_FILENO) != 0));
  const InMemoryIteration it =
      generate_llm_in_memory(o, [&progress](std::size_t loaded, std::size_t ranks, std::uint64_t bytes) {
        progress.show(fmt::format("building traces: {} of {} ranks ({})", loaded, ranks, format_bytes(bytes)));
      });
  progress.clear();
  for (const std::string& w : it.warnings) std::cerr << "warning: " << w << "\n";
  if (network_out) write_file_atomically(o.network_out, it.network_yaml, "--network-out");
  if (system_out) write_file_atomically(o.system_out, it.system_json, "--system-out");
  sim::Inputs inputs;
  inputs.network = config::parse_network(it.network_yaml, "the generated network");
  apply_system(inputs, config::parse_system(it.system_json, "the generated system", {}), "the generated system", false,
               "");
  const auto npus = static_cast<NpuId>(it.graphs.size());
  inputs.groups = config::parse_comm_groups(it.groups_json, "the generated groups", npus);
  inputs.groups_source = "the generated groups";
  inputs.group_kind_names = config::parse_group_names(it.group_names_json, "the generated group kinds");
  inputs.graphs = it.graphs;
  const double built_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sim::Hooks hooks;
  if (progress.on()) hooks.progress = [&progress](const sim::Progress& p) { progress.show(progress_text(p)); };
  const sim::Result result = sim::simulate(inputs, hooks);
  progress.clear();
  const int code = print_run(result, OutputOptions{});
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("Generated and parsed in memory in {:.2f} s (no trace files), simulated in {:.2f} s.\n",
                           built_s, total_s - built_s);
  return code;
}

// The generator's options from the parsed flags (model, schedule, dtype, ... checked).
void complete_options(LlmArgs& a, const CLI::App& app) {
  a.o.model = model_of(a, app);
  ParallelSpec& par = a.o.parallel;
  par.schedule = pick<Schedule>("--schedule", a.schedule,
                                {{"gpipe", Schedule::kGpipe},
                                 {"1f1b", Schedule::kOneFOneB},
                                 {"interleaved", Schedule::kInterleaved}});
  par.recompute = pick<Recompute>("--recompute", a.recompute,
                                  {{"none", Recompute::kNone},
                                   {"off", Recompute::kNone},
                                   {"selective", Recompute::kSelective},
                                   {"full", Recompute::kFull},
                                   {"on", Recompute::kFull}});
  par.dtype_bytes = pick<std::uint64_t>("--dtype", a.dtype, {{"bf16", 2}, {"fp16", 2}, {"fp32", 4}});
  if (a.grad_bucket_m == 0 || a.grad_bucket_m > 1'000'000) {
    fail("--grad-bucket {}: expected millions of weights per gradient bucket, from 1 to 1000000", a.grad_bucket_m);
  }
  par.grad_bucket_params = a.grad_bucket_m * 1'000'000;
  if (app.count("--gpus-per-node") > 0 && (a.o.gpus_per_node == 0 || a.o.gpus_per_node > (1u << 20))) {
    fail("--gpus-per-node {}: expected a scale-up domain of 1 to 1048576 GPUs", a.o.gpus_per_node);
  }

  a.o.nccl_collectives = a.collectives == "nccl";
  if (!a.o.systolic_preset.empty()) {
    try {
      compute::systolic::preset(a.o.systolic_preset);
    } catch (const Error& e) {
      fail("--systolic: {}", e.what());
    }
    a.o.op_shapes = true;
  }
}

int run_llm(LlmArgs& a, const CLI::App& app) {
  if (a.o.out_prefix.empty() && !a.run) {
    fail("--out: expected a prefix for the trace files (or --run to simulate without files)");
  }
  if (!a.o.out_prefix.empty()) prepare_output_prefix(a.o.out_prefix, "--out");
  if (!a.o.out_prefix.empty() && !a.o.network_out.empty()) prepare_output_file(a.o.network_out, "--network-out");
  if (!a.o.out_prefix.empty() && !a.o.system_out.empty()) prepare_output_file(a.o.system_out, "--system-out");
  complete_options(a, app);
  if (a.o.out_prefix.empty()) return simulate_in_memory(a.o, true);
  const auto start = std::chrono::steady_clock::now();
  const GenerateResult r = generate_llm(a.o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const std::string& w : r.warnings) std::cerr << "warning: " << w << "\n";
  std::cout << format_summary(r.summary);
  std::cout << "wrote " << r.files.files << " traces " << a.o.out_prefix << ".<rank>.et (" << r.files.distinct
            << " distinct, " << r.files.bytes / 1000000 << " MB), the communicator groups " << r.groups_path
            << " (and their kinds, " << a.o.out_prefix << ".group-names.json, which run reads beside it)";
  if (!a.o.network_out.empty()) std::cout << ", the network " << a.o.network_out;
  if (!a.o.system_out.empty()) std::cout << ", the system " << a.o.system_out;
  std::cout << fmt::format(" in {:.2f} s\n", seconds);
  return a.run ? simulate_in_memory(a.o, false) : 0;
}

void add_llm_options(CLI::App* llm, const std::shared_ptr<LlmArgs>& a) {
  std::string models, gpus;
  for (const std::string& n : model_names()) models += (models.empty() ? "" : ", ") + n;
  for (const std::string& n : gpu_names()) gpus += (gpus.empty() ? "" : ", ") + n;
  llm->footer("Example:\n"
              "  chakrasim generate llm --model gpt3-175b --dp 16 --tp 8 --pp 8 --sp --global-batch 1536 --zero 1 \\\n"
              "      --gpu H100 --out traces/gpt3 --network-out network.yml --system-out system.json\n"
              "  chakrasim run --workload traces/gpt3 --comm-groups traces/gpt3.groups.json --network network.yml "
              "--system system.json\n"
              "Ranks: rank = t + TP x (c + CP x (d + DP x p)), so tensor-parallel groups sit in one scale-up domain. "
              "See docs/llm-generator.md.");
  llm->add_option("--model", a->model, "Model preset: " + models);
  llm->add_option("--layers", a->layers, "Transformer layers");
  llm->add_option("--hidden", a->hidden, "Hidden size");
  llm->add_option("--ffn", a->ffn, "MLP inner size, per expert (default 4 x hidden without --model)");
  llm->add_option("--heads", a->heads, "Attention (query) heads");
  llm->add_option("--kv-heads", a->kv_heads, "Key/value heads (default: --heads without --model)");
  llm->add_option("--seq", a->seq, "Sequence length in tokens");
  llm->add_option("--vocab", a->vocab, "Vocabulary size");
  llm->add_option("--experts", a->experts, "Experts per MoE layer (1: a dense MLP)");
  llm->add_option("--top-k", a->top_k, "Experts each token is routed to");
  llm->add_option("--mlp", a->mlp, "MLP kind: gelu (2 matrices) or swiglu (3; the default without --model)");
  llm->add_option("--dp", a->o.parallel.dp, "Data-parallel size")->capture_default_str();
  llm->add_option("--tp", a->o.parallel.tp, "Tensor-parallel size")->capture_default_str();
  llm->add_option("--pp", a->o.parallel.pp, "Pipeline-parallel size (stages)")->capture_default_str();
  llm->add_option("--cp", a->o.parallel.cp, "Context-parallel size (sequence slices)")->capture_default_str();
  llm->add_option("--ep", a->o.parallel.ep, "Expert-parallel size (within the data-parallel ranks)")
      ->capture_default_str();
  llm->add_flag("--sp", a->o.parallel.sp, "Megatron sequence parallelism in the tensor-parallel groups");
  llm->add_option("--microbatch", a->o.parallel.microbatch, "Sequences per microbatch")->capture_default_str();
  llm->add_option("--global-batch", a->o.parallel.global_batch,
                  "Sequences per iteration (default: --microbatch x --dp)");
  llm->add_option("--schedule", a->schedule, "Pipeline schedule: gpipe, 1f1b or interleaved")->capture_default_str();
  llm->add_option("--vpp", a->o.parallel.vpp, "Model chunks per stage (interleaved schedule)")->capture_default_str();
  llm->add_option("--zero", a->o.parallel.zero, "ZeRO stage 0 to 3")->capture_default_str();
  llm->add_option("--recompute", a->recompute, "Activation recomputation: none (off), selective, full (on)")
      ->capture_default_str();
  llm->add_option("--dtype", a->dtype, "Training data type: bf16, fp16 or fp32")->capture_default_str();
  llm->add_option("--grad-bucket", a->grad_bucket_m, "Millions of weights per data-parallel gradient bucket")
      ->capture_default_str();
  llm->add_option("--gpu", a->o.gpu, "GPU preset: " + gpus)->capture_default_str();
  llm->add_option("--gpus-per-node", a->o.gpus_per_node, "GPUs per scale-up domain (default: the GPU preset's, 8)");
  llm->add_option("--collectives", a->collectives,
                  "In --system-out: astra-sim (chunked phases over the network, the default) or nccl (NCCL's choice "
                  "of algorithm and protocol on the GPU's preset, docs/nccl.md)")
      ->check(CLI::IsMember({"astra-sim", "nccl"}));
  llm->add_flag("--per-op-nodes", a->o.per_op_nodes,
                "One compute node per kernel (default: one per run of kernels nothing else waits on in between)");
  llm->add_flag("--op-shapes", a->o.op_shapes,
                "Give every GEMM a compute node of its own carrying its shape (attributes gemm and pass), for the "
                "systolic compute model (docs/systolic.md); attention and element-wise kernels keep num_ops only");
  llm->add_option("--systolic", a->o.systolic_preset,
                  "Compute on a chip of systolic arrays instead of the GPU: the system JSON (--system-out, --run) "
                  "times shaped nodes with this preset (tpu-v4, tpu-v5e, google; docs/systolic.md); implies "
                  "--op-shapes. The network stays the --gpu preset's");
  llm->add_option("--out", a->o.out_prefix,
                  "Output prefix: writes PREFIX.<rank>.et and PREFIX.groups.json (and removes stale "
                  "PREFIX.<rank>.et files of higher ranks); optional with --run");
  llm->add_flag("--run", a->run,
                "Simulate the iteration at once, in memory, on the generated network and system, and print what "
                "`chakrasim run` prints (with --out, after writing the files; without, no trace file is written)");
  llm->add_option("--network-out", a->o.network_out, "Also write the matching network YAML");
  llm->add_option("--system-out", a->o.system_out, "Also write a matching system JSON");
}

}  // namespace

Command add_generate_llm(CLI::App& generate, const std::string& description) {
  auto a = std::make_shared<LlmArgs>();
  CLI::App* llm = generate.add_subcommand("llm", description);
  add_llm_options(llm, a);
  return [llm, a]() -> int {
    if (!llm->parsed()) return -1;
    return run_llm(*a, *llm);
  };
}

tools::llm::InMemoryIteration generate_llm_from_flags(const std::vector<std::string>& flags) {
  auto a = std::make_shared<LlmArgs>();
  CLI::App llm{"generate llm", "llm"};
  add_llm_options(&llm, a);
  std::vector<std::string> reversed(flags.rbegin(), flags.rend());
  try {
    llm.parse(reversed);
  } catch (const CLI::ParseError& e) {
    fail("generate llm {}: {}", fmt::join(flags, " "), e.what());
  }
  if (!a->o.out_prefix.empty() || !a->o.network_out.empty() || !a->o.system_out.empty() || a->run) {
    fail("generate llm {}: --out, --network-out, --system-out and --run do not belong in a sweep (the "
         "iteration is built in memory)",
         fmt::join(flags, " "));
  }
  complete_options(*a, llm);
  return generate_llm_in_memory(a->o);
}

}  // namespace chakrasim::cli
