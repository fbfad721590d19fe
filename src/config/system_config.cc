#include "config/system_config.h"

#include <cmath>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "config/systolic_config.h"
#include "core/error.h"
#include "core/json_input.h"
#include "core/read_file.h"
#include "core/sim_time.h"
#include "system/algorithms.h"
#include "system/nccl/call_types.h"
#include "system/nccl/hardware.h"
#include "system/nccl/nccl_types.h"

namespace chakrasim::config {
namespace {

using Json = nlohmann::json;

struct Context {
  const std::string& source;
  const SystemFlags& flags;
  SystemConfig& out;
};

struct Param {
  const char* key;
  const char* type;
  const char* default_text;
  const char* meaning;
  std::function<void(const Json&, Context&)> apply;  // null: accepted, no effect
};

[[noreturn]] void bad_value(const Context& c, const char* key, const Json& v, const std::string& expected) {
  fail("{}: key \"{}\": value {} is invalid; expected {}", c.source, key, json_excerpt(v), expected);
}

std::string int_range(std::int64_t min, std::int64_t max) {
  return min > 0 ? fmt::format("an integer of at least {} (and at most {})", min, max)
                 : fmt::format("an integer, 0 or more (and at most {})", max);
}

// Integers are bounded by 2^32 - 1: every count and delay in the system JSON fits, and a larger
// value is a typo, not a setting.
std::int64_t get_int(const Context& c, const char* key, const Json& v, std::int64_t min) {
  constexpr std::int64_t kMax = 0xffffffffll;
  if (v.is_number_integer() || v.is_number_unsigned()) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(kMax)) {
      bad_value(c, key, v, int_range(min, kMax));
    }
    std::int64_t x = v.get<std::int64_t>();
    if (x >= min && x <= kMax) return x;
  } else if (v.is_number_float()) {
    double x = v.get<double>();
    if (x == std::floor(x) && x >= static_cast<double>(min) && x <= static_cast<double>(kMax)) {
      return static_cast<std::int64_t>(x);
    }
  }
  bad_value(c, key, v, int_range(min, kMax));
}

double get_number(const Context& c, const char* key, const Json& v) {
  if (v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0) return v.get<double>();
  bad_value(c, key, v, "a number, 0 or more");
}

// A share of a rate: above 0, at most 1.
double get_share(const Context& c, const char* key, const Json& v, const char* of = "the link's rate") {
  if (v.is_number() && v.get<double>() > 0 && v.get<double>() <= 1) return v.get<double>();
  bad_value(c, key, v, fmt::format("a share of {}, above 0 and at most 1", of));
}

bool get_flag(const Context& c, const char* key, const Json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer() || v.is_number_unsigned()) {
    std::int64_t x = v.get<std::int64_t>();
    if (x == 0 || x == 1) return x == 1;
  }
  bad_value(c, key, v, "0 or 1");
}

// A string naming something `check` accepts (it throws Error saying what is expected).
template <typename Check>
std::string get_name(const Context& c, const char* key, const Json& v, Check&& check) {
  if (!v.is_string()) bad_value(c, key, v, "a string");
  const std::string s = v.get<std::string>();
  try {
    check(s);
  } catch (const Error& e) {
    fail("{}: key \"{}\": {}", c.source, key, e.what());
  }
  return s;
}

// A window suffix of direct<W> / oneDirect<W>: the digits after the prefix, at least 1. (The
// reference hands up to five characters to stoi: it crashes on non-digits, hangs with 0 and
// takes -1 as the default; we accept only a positive number.)
bool parse_window(const std::string& digits, std::uint32_t& window) {
  if (digits.empty() || digits.size() > 9) return false;
  for (char ch : digits) {
    if (ch < '0' || ch > '9') return false;
  }
  window = static_cast<std::uint32_t>(std::stoul(digits));
  return window >= 1;
}

// One token of an implementation list (§1.3), as the rows of the algorithm table spell them:
// <token>, one<Token> where the row has a flat form, <token><W> where it takes a window.
// Returns false for an unknown token.
bool parse_algorithm(const std::string& token, system::AlgorithmChoice& choice) {
  std::string name = token;
  if (token.size() > 3 && token.rfind("one", 0) == 0 && token[3] >= 'A' && token[3] <= 'Z') {
    choice.one_flat = true;
    name = static_cast<char>(token[3] - 'A' + 'a') + token.substr(4);  // oneRing -> ring
  }
  const auto& rows = system::algorithms();
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const system::AlgorithmInfo& row = rows[k];
    if (!row.in_lists || (choice.one_flat && !row.flat_form) || name.rfind(row.token, 0) != 0) continue;
    const std::string suffix = name.substr(std::string(row.token).size());
    if (!suffix.empty() && !(row.takes_window && parse_window(suffix, choice.window))) continue;
    choice.kind = static_cast<system::AlgorithmKind>(k);
    return true;
  }
  return false;
}

std::vector<system::AlgorithmChoice> get_implementation(const Context& c, const char* key, const Json& v) {
  if (!v.is_array() || v.empty()) bad_value(c, key, v, "a non-empty list of algorithm names, one per dimension");
  std::vector<system::AlgorithmChoice> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Json& t = v[i];
    if (!t.is_string()) {
      fail("{}: key \"{}\"[{}]: value {} is invalid; expected an algorithm name such as \"ring\"", c.source, key, i,
           json_excerpt(t));
    }
    const std::string token = t.get<std::string>();
    system::AlgorithmChoice choice;
    if (!parse_algorithm(token, choice)) {
      fail("{}: key \"{}\"[{}]: algorithm \"{}\" is unknown; expected {}", c.source, key, i, token,
           system::list_tokens_text());
    }
    out.push_back(choice);
  }
  return out;
}

void set_custom(Context& c, const char* key, const Json& v, system::CollectiveKind kind) {
  if (!v.is_array() || v.size() != 1 || !v[0].is_string() || v[0].get<std::string>().empty()) {
    bad_value(c, key, v, "a list of exactly one path prefix of the algorithm's per-rank ETs, e.g. [\"algo/custom\"]");
  }
  c.out.system.custom_prefixes[static_cast<std::size_t>(kind)] = v[0].get<std::string>();
}

void set_implementation(Context& c, const char* key, const Json& v, system::CollectiveKind kind) {
  c.out.system.implementations[static_cast<std::size_t>(kind)] = get_implementation(c, key, v);
}

// Every key of the system JSON, one row each, in the order --help-system lists them. Long
// because it is the whole table: each row is a few lines of data and a small setter, and keeping
// them in one list is what makes the parser, its errors and its help agree.
const std::vector<Param>& params() {
  using system::CollectiveKind;
  static const std::vector<Param> kParams = {
      {"scheduling-policy", "LIFO | FIFO | EXPLICIT", "LIFO",
       "priority of new collectives: LIFO favours the newest, FIFO the oldest, EXPLICIT reads the "
       "node's comm_priority",
       [](const Json& v, Context& c) {
         const std::string s = v.is_string() ? v.get<std::string>() : "";
         if (s == "LIFO") c.out.system.scheduling_policy = system::SchedulingPolicy::kLifo;
         else if (s == "FIFO") c.out.system.scheduling_policy = system::SchedulingPolicy::kFifo;
         else if (s == "EXPLICIT") c.out.system.scheduling_policy = system::SchedulingPolicy::kExplicit;
         else bad_value(c, "scheduling-policy", v, "\"LIFO\", \"FIFO\" or \"EXPLICIT\"");
       }},
      {"collective-optimization", "baseline | localBWAware", "baseline",
       "multi-dimensional all-reduce: baseline runs a full all-reduce per dimension; localBWAware "
       "reduce-scatters up, all-reduces the last dimension, all-gathers down",
       [](const Json& v, Context& c) {
         const std::string s = v.is_string() ? v.get<std::string>() : "";
         if (s == "baseline") c.out.system.collective_optimization = system::CollectiveOptimization::kBaseline;
         else if (s == "localBWAware")
           c.out.system.collective_optimization = system::CollectiveOptimization::kLocalBwAware;
         else bad_value(c, "collective-optimization", v, "\"baseline\" or \"localBWAware\"");
       }},
      {"endpoint-delay", "integer, ns", "10",
       "fixed delay charged before every collective step (times --injection-scale, truncated)",
       [](const Json& v, Context& c) {
         const auto ns = get_int(c, "endpoint-delay", v, 0);
         c.out.system.endpoint_delay_ns = ticks_from_ns(static_cast<double>(ns) * c.flags.injection_scale, [&] {
           return fmt::format("{}: \"endpoint-delay\" {} x --injection-scale {}", c.source, ns,
                              c.flags.injection_scale);
         });
       }},
      {"active-chunks-per-dimension", "integer >= 1", "1",
       "chunks running at once per queue: ceil(value / --num-queues-per-dim)",
       [](const Json& v, Context& c) {
         c.out.system.active_chunks_per_dimension =
             static_cast<std::uint32_t>(get_int(c, "active-chunks-per-dimension", v, 1));
       }},
      {"preferred-dataset-splits", "integer >= 1", "required", "chunks per collective",
       [](const Json& v, Context& c) {
         c.out.system.preferred_dataset_splits =
             static_cast<std::uint64_t>(get_int(c, "preferred-dataset-splits", v, 1));
       }},
      {"local-mem-bw", "number, GB/s (10^9 B/s)", "0 (no reduction cost)",
       "local memory bandwidth: reduction cost 3 x floor(bytes / bw) per reducing step, and the "
       "roofline's memory slope",
       [](const Json& v, Context& c) {
         c.out.system.local_mem_bw_gb_per_s = get_number(c, "local-mem-bw", v);
         c.out.compute.local_mem_bw_gb_per_s = c.out.system.local_mem_bw_gb_per_s;
       }},
      {"peak-perf", "number, TFLOP/s", "0", "roofline compute ceiling",
       [](const Json& v, Context& c) { c.out.compute.peak_perf_tflops = get_number(c, "peak-perf", v); }},
      {"mfu-peak-perf", "number, TFLOP/s", "peak-perf",
       "the data-sheet peak the run summary's MFU is measured against (chakrasim; peak-perf is the roofline's "
       "achievable ceiling)",
       [](const Json& v, Context& c) { c.out.compute.mfu_peak_tflops = get_number(c, "mfu-peak-perf", v); }},
      {"roofline-enabled", "0 | 1", "0",
       "time GPU compute nodes by the roofline from num_ops and tensor_size instead of their duration",
       [](const Json& v, Context& c) {
         c.out.compute.model = get_flag(c, "roofline-enabled", v) ? "roofline" : "replay";
       }},
      {"systolic", "object", "none",
       "time GPU compute nodes that carry a shape on systolic arrays (docs/systolic.md): {\"preset\": \"tpu-v4\"} "
       "and any of rows, cols, arrays, dataflow, clock-mhz, word-bytes, ifmap-/filter-/ofmap-sram-kib, "
       "dram-gb-per-s, memory-stalls",
       [](const Json& v, Context& c) {
         c.out.compute.systolic = parse_systolic(v, c.source);
         c.out.compute.model = "systolic";
       }},
      {"replay-only", "0 | 1", "0", "replay every node for its recorded duration",
       [](const Json& v, Context& c) { c.out.replay_only = get_flag(c, "replay-only", v); }},
      {"all-reduce-implementation", "list of algorithm names", "none",
       "algorithm per logical dimension for all-reduce: ring, direct, direct<W> (W messages in "
       "flight), halvingDoubling, doubleBinaryTree, or oneRing, oneDirect, oneDirect<W>, "
       "oneHalvingDoubling (one ring of every NPU, ending the list); the list length is the "
       "number of logical dimensions",
       [](const Json& v, Context& c) {
         set_implementation(c, "all-reduce-implementation", v, CollectiveKind::kAllReduce);
       }},
      {"all-gather-implementation", "list of algorithm names", "none", "as above, for all-gather",
       [](const Json& v, Context& c) {
         set_implementation(c, "all-gather-implementation", v, CollectiveKind::kAllGather);
       }},
      {"reduce-scatter-implementation", "list of algorithm names", "none", "as above, for reduce-scatter",
       [](const Json& v, Context& c) {
         set_implementation(c, "reduce-scatter-implementation", v, CollectiveKind::kReduceScatter);
       }},
      {"all-to-all-implementation", "list of algorithm names", "none", "as above, for all-to-all",
       [](const Json& v, Context& c) {
         set_implementation(c, "all-to-all-implementation", v, CollectiveKind::kAllToAll);
       }},
      {"all-reduce-implementation-custom", "list of one path prefix", "none",
       "a custom all-reduce: per-rank algorithm ETs PREFIX.<rank>.et (paths relative to the working "
       "directory); takes precedence over all-reduce-implementation",
       [](const Json& v, Context& c) {
         set_custom(c, "all-reduce-implementation-custom", v, CollectiveKind::kAllReduce);
       }},
      {"all-gather-implementation-custom", "list of one path prefix", "none", "as above, for all-gather",
       [](const Json& v, Context& c) {
         set_custom(c, "all-gather-implementation-custom", v, CollectiveKind::kAllGather);
       }},
      {"reduce-scatter-implementation-custom", "list of one path prefix", "none", "as above, for reduce-scatter",
       [](const Json& v, Context& c) {
         set_custom(c, "reduce-scatter-implementation-custom", v, CollectiveKind::kReduceScatter);
       }},
      {"all-to-all-implementation-custom", "list of one path prefix", "none", "as above, for all-to-all",
       [](const Json& v, Context& c) {
         set_custom(c, "all-to-all-implementation-custom", v, CollectiveKind::kAllToAll);
       }},
      {"broadcast-by-duration", "0 | 1", "1 (0 with collectives nccl or nccl-traffic)",
       "1: a BROADCAST node waits for its recorded duration, as in the reference; 0: it runs on the system "
       "layer as the all-gather that moves the same bytes over every link as NCCL's ring broadcast (and, with "
       "the NCCL model, as NCCL's broadcast)",
       [](const Json& v, Context& c) {
         c.out.system.broadcast_by_duration = get_flag(c, "broadcast-by-duration", v);
         c.out.system.broadcast_by_duration_given = true;
       }},
      {"collectives", "astra-sim | nccl | nccl-traffic", "astra-sim",
       "how collectives are timed: ASTRA-sim's chunked phases over the network; NCCL's choice of algorithm and "
       "protocol timed by the NCCL model, without traffic; or NCCL's choice run as its traffic on the network "
       "(docs/nccl.md; the nccl-* keys describe the machine)",
       [](const Json& v, Context& c) {
         const std::string s = v.is_string() ? v.get<std::string>() : "";
         if (s == "astra-sim") c.out.system.collectives = system::CollectiveModel::kAstraSim;
         else if (s == "nccl") c.out.system.collectives = system::CollectiveModel::kNccl;
         else if (s == "nccl-traffic") c.out.system.collectives = system::CollectiveModel::kNcclTraffic;
         else bad_value(c, "collectives", v, "\"astra-sim\", \"nccl\" or \"nccl-traffic\"");
       }},
      {"nccl-gpu", "string", "H100", "NCCL model: the GPU preset",
       [](const Json& v, Context& c) {
         c.out.system.nccl.gpu = get_name(c, "nccl-gpu", v, [](const std::string& s) { system::nccl::gpu_preset(s); });
       }},
      {"nccl-gpus-per-node", "integer >= 1", "the network's first dimension, up to the GPU's domain",
       "NCCL model: GPUs per node (NPU r is in node r / this)",
       [](const Json& v, Context& c) {
         c.out.system.nccl.gpus_per_node = static_cast<std::uint32_t>(get_int(c, "nccl-gpus-per-node", v, 1));
       }},
      {"nccl-nic", "string", "the GPU's usual NIC", "NCCL model: the NIC preset",
       [](const Json& v, Context& c) {
         c.out.system.nccl.nic = get_name(c, "nccl-nic", v, [](const std::string& s) { system::nccl::nic_preset(s); });
       }},
      {"nccl-nics-per-node", "integer >= 1", "one per GPU", "NCCL model: NICs per node",
       [](const Json& v, Context& c) {
         c.out.system.nccl.nics_per_node = static_cast<std::uint32_t>(get_int(c, "nccl-nics-per-node", v, 1));
       }},
      {"nccl-algo", "string", "all", "NCCL model: NCCL_ALGO (e.g. \"Ring\", \"^NVLS\")",
       [](const Json& v, Context& c) {
         c.out.system.nccl.algo = get_name(c, "nccl-algo", v, [](const std::string& s) {
           system::nccl::Enabled e;
           system::nccl::apply_enable_list(e, s, true, "NCCL_ALGO");
         });
       }},
      {"nccl-proto", "string", "all", "NCCL model: NCCL_PROTO (e.g. \"Simple\", \"^LL128\")",
       [](const Json& v, Context& c) {
         c.out.system.nccl.proto = get_name(c, "nccl-proto", v, [](const std::string& s) {
           system::nccl::Enabled e;
           system::nccl::apply_enable_list(e, s, false, "NCCL_PROTO");
         });
       }},
      {"nccl-nvls", "0 | 1", "1", "NCCL model: NCCL_NVLS_ENABLE",
       [](const Json& v, Context& c) { c.out.system.nccl.nvls = get_flag(c, "nccl-nvls", v); }},
      {"nccl-collnet", "0 | 1", "0", "NCCL model: NCCL_COLLNET_ENABLE (the network reduces: SHARP)",
       [](const Json& v, Context& c) { c.out.system.nccl.collnet = get_flag(c, "nccl-collnet", v); }},
      {"nccl-platform-latency-us", "number, us", "0",
       "NCCL model: added to every call's time, not to NCCL's choice (an 8-byte call's measured time less the "
       "model's)",
       [](const Json& v, Context& c) {
         c.out.system.nccl.platform_latency_us = get_number(c, "nccl-platform-latency-us", v);
       }},
      {"nccl-ring-efficiency", "number in (0, 1]", "the GPU preset's (0.816; B200, GB200 0.738)",
       "NCCL model: the share of NVLink's rate rings reach (docs/nccl.md, calibrating)",
       [](const Json& v, Context& c) { c.out.system.nccl.ring_efficiency = get_share(c, "nccl-ring-efficiency", v); }},
      {"nccl-nic-efficiency", "number in (0, 1]", "the NIC preset's (NDR 0.96)",
       "NCCL model: the share of a NIC's line rate NCCL's collectives reach",
       [](const Json& v, Context& c) { c.out.system.nccl.nic_efficiency = get_share(c, "nccl-nic-efficiency", v); }},
      {"nccl-nic-p2p-efficiency", "number in (0, 1]",
       "the NIC preset's (NDR 0.92; with nccl-nic-efficiency set, the preset's ratio to it)",
       "NCCL model: the share of a NIC's line rate all-to-all and send/receive reach",
       [](const Json& v, Context& c) {
         c.out.system.nccl.nic_p2p_efficiency = get_share(c, "nccl-nic-p2p-efficiency", v);
       }},
      {"nccl-nvls-efficiency", "number in (0, 1]", "the GPU preset's (0.744)",
       "NCCL model: the share of NVLink's rate NVLS reaches, before each loop's fixed cost",
       [](const Json& v, Context& c) { c.out.system.nccl.nvls_efficiency = get_share(c, "nccl-nvls-efficiency", v); }},
      {"nccl-nvls-tree-efficiency", "number in (0, 1]", "0.91",
       "NCCL model: NVLS-tree's NVLink side across nodes, as a share of NVLS's rate in one node",
       [](const Json& v, Context& c) {
         c.out.system.nccl.nvls_tree_efficiency = get_share(c, "nccl-nvls-tree-efficiency", v, "NVLS's NVLink rate");
       }},
      {"nccl-nvls-chunk-us", "number, us", "the GPU preset's (0.6; B200, GB200 1.217)",
       "NCCL model: NVLS's fixed cost per chunk of a loop",
       [](const Json& v, Context& c) { c.out.system.nccl.nvls_chunk_us = get_number(c, "nccl-nvls-chunk-us", v); }},
      {"nccl-tree-message-us", "number, us", "the GPU preset's (0.27; B200, GB200 0.548)",
       "NCCL model: a tree's fixed cost per network message",
       [](const Json& v, Context& c) { c.out.system.nccl.tree_message_us = get_number(c, "nccl-tree-message-us", v); }},
      {"nccl-ll-channel-efficiency", "number in (0, 1]", "0.327",
       "NCCL model: an LL channel's data rate, as a share of NCCL's per-channel LL128 ceiling for the GPU",
       [](const Json& v, Context& c) {
         c.out.system.nccl.ll_channel_efficiency =
             get_share(c, "nccl-ll-channel-efficiency", v, "NCCL's per-channel LL128 ceiling");
       }},
      {"nccl-ll-proxy-scan-ns", "number, ns", "0.3",
       "NCCL model: what a send proxy takes to read a byte of LL's lines before they cross the network",
       [](const Json& v, Context& c) {
         c.out.system.nccl.ll_proxy_scan_ns = get_number(c, "nccl-ll-proxy-scan-ns", v);
       }},
      {"nccl-p2p-channel-gb-per-s", "number above 0, GB/s", "21",
       "NCCL model: a send or receive's channel's data rate (NCCL gives each peer a few channels)",
       [](const Json& v, Context& c) {
         const double rate = get_number(c, "nccl-p2p-channel-gb-per-s", v);
         if (!(rate > 0)) bad_value(c, "nccl-p2p-channel-gb-per-s", v, "a rate in GB/s, above 0");
         c.out.system.nccl.p2p_channel_gb_per_s = rate;
       }},
      {"nccl-all-to-all-efficiency", "number in (0, 1]", "the GPU preset's (0.776; A100 0.742)",
       "NCCL model: the share of NVLink's rate an all-to-all through the NVSwitches reaches with many channels a "
       "peer",
       [](const Json& v, Context& c) {
         c.out.system.nccl.all_to_all_efficiency = get_share(c, "nccl-all-to-all-efficiency", v);
       }},
      {"nccl-pxn", "0 | 1", "1",
       "NCCL model: PXN, as NCCL_PXN_DISABLE=0 (all-to-all across nodes goes through the GPU on the destination's "
       "rail)",
       [](const Json& v, Context& c) { c.out.system.nccl.pxn = get_flag(c, "nccl-pxn", v); }},
      {"nccl-datatype", "string", "float",
       "NCCL model: the element type of the run's collectives, as nccl-tests names it (bfloat16, half, ...): it "
       "decides which algorithms NCCL may run",
       [](const Json& v, Context& c) {
         c.out.system.nccl.datatype = get_name(c, "nccl-datatype", v, [](const std::string& s) {
           if (!system::nccl::parse_data_type(s)) throw Error("expected one of " + system::nccl::data_type_names());
         });
       }},
      {"nccl-reduce-op", "string", "sum",
       "NCCL model: the reduction of the run's reducing collectives (sum, prod, max, min, avg, mulsum): it decides "
       "which algorithms NCCL may run",
       [](const Json& v, Context& c) {
         c.out.system.nccl.reduce_op = get_name(c, "nccl-reduce-op", v, [](const std::string& s) {
           if (!system::nccl::parse_reduce_op(s)) throw Error("expected one of " + system::nccl::reduce_op_names());
         });
       }},
      {"model-shared-bus", "0 | 1", "0", "LogGP shared-bus model (not supported yet: must be 0)",
       [](const Json& v, Context& c) {
         if (get_flag(c, "model-shared-bus", v))
           fail("{}: key \"model-shared-bus\": the shared-bus model is not supported yet; expected 0", c.source);
       }},
      {"trace-enabled", "0 | 1", "0", "accepted for compatibility; no effect", nullptr},
      {"track-local-mem", "0 | 1", "0", "accepted for compatibility; no effect yet", nullptr},
      {"local-mem-trace-filename", "string", "local_mem_trace", "accepted for compatibility; no effect yet", nullptr},
      {"boost-mode", "integer", "-", "ignored, as by the reference since 2.0", nullptr},
      {"intra-dimension-scheduling", "string", "-", "ignored, as by the reference (not parsed there)", nullptr},
      {"inter-dimension-scheduling", "string", "-", "ignored, as by the reference (not parsed there)", nullptr},
      {"local-reduction-delay", "integer", "1", "used only by the shared-bus model", nullptr},
      {"L", "number", "0", "shared-bus LogGP latency (shared-bus model only)", nullptr},
      {"o", "number", "0", "shared-bus LogGP overhead (shared-bus model only)", nullptr},
      {"g", "number", "0", "shared-bus LogGP gap (shared-bus model only)", nullptr},
      {"G", "number", "0", "shared-bus LogGP gap per byte (shared-bus model only)", nullptr},
  };
  return kParams;
}

}  // namespace

SystemConfig parse_system(const std::string& text, const std::string& source, const SystemFlags& flags) {
  const Json root = parse_json_input(text, source, "a JSON object of system keys");
  if (!root.is_object()) fail("{}: expected a JSON object of system keys", source);
  if (flags.num_queues_per_dim == 0)
    fail("--num-queues-per-dim: value 0 is invalid; expected an integer of at least 1");
  // Each queue is state per NPU and dimension; beyond this a run only wastes memory (a chunk
  // needs one queue) and queue indices would leave 32 bits.
  constexpr std::uint32_t kMaxQueuesPerDim = 65536;
  if (flags.num_queues_per_dim > kMaxQueuesPerDim)
    fail("--num-queues-per-dim: value {} is invalid; expected an integer from 1 to {}", flags.num_queues_per_dim,
         kMaxQueuesPerDim);
  if (!(flags.injection_scale >= 0) || !std::isfinite(flags.injection_scale))
    fail("--injection-scale: value {} is invalid; expected a number, 0 or more (finite)", flags.injection_scale);

  SystemConfig out;
  out.system.num_queues_per_dim = flags.num_queues_per_dim;
  out.system.endpoint_delay_ns = 10;  // the reference's default; --injection-scale applies only to an explicit key
  Context c{source, flags, out};
  std::set<std::string> known;
  for (const Param& p : params()) {
    known.insert(p.key);
    auto it = root.find(p.key);
    if (it != root.end() && p.apply) p.apply(*it, c);
  }
  if (!root.contains("preferred-dataset-splits")) {
    fail("{}: missing key \"preferred-dataset-splits\"; expected the number of chunks per collective "
         "(an integer of at least 1; the reference crashes without it)",
         source);
  }
  if (root.contains("systolic") && root.contains("roofline-enabled") &&
      get_flag(c, "roofline-enabled", root["roofline-enabled"])) {
    fail("{}: both \"systolic\" and roofline-enabled 1 are set; expected one compute model (the systolic model "
         "already times nodes without a shape by the roofline)",
         source);
  }
  // Without both slopes the roofline times every GPU compute node at 0 ns (the reference does).
  if (out.compute.model == "roofline") {
    for (const auto& [key, value] : {std::pair{"peak-perf", out.compute.peak_perf_tflops},
                                     std::pair{"local-mem-bw", out.compute.local_mem_bw_gb_per_s}}) {
      if (value <= 0) {
        fail("{}: roofline-enabled is 1, but \"{}\" is {}; expected a positive number (the roofline would time every "
             "GPU compute node at 0 ns)",
             source, key, root.contains(key) ? fmt::format("{}", value) : std::string("missing"));
      }
    }
  }
  if (!root.contains("local-mem-bw")) {
    out.warnings.push_back(
        fmt::format("{}: no \"local-mem-bw\": reductions cost 0 ns, as in the reference on x86", source));
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& key = it.key();
    if (known.count(key)) continue;
    if (key == "per-node-custom-implementation") {
      fail("{}: key \"{}\": per-node custom implementations are not supported yet; use the per-collective "
           "\"<collective>-implementation-custom\" keys",
           source, key);
    }
    out.warnings.push_back(fmt::format("{}: unknown key \"{}\" ignored", source, key));
  }
  return out;
}

SystemConfig load_system(const std::string& path, const SystemFlags& flags) {
  return parse_system(read_file(path, "system configuration", "the system configuration file"), path, flags);
}

std::string describe_system_keys() {
  std::string out;
  for (const Param& p : params()) {
    out += fmt::format("  {:<30} {:<26} default {}\n      {}\n", p.key, p.type, p.default_text, p.meaning);
  }
  return out;
}

}  // namespace chakrasim::config
