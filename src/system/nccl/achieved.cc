#include "system/nccl/achieved.h"

#include <algorithm>
#include <limits>

#include "system/nccl/call_channels.h"
#include "system/nccl/msccl.h"
#include "system/nccl/p2p_channels.h"

namespace chakrasim::system::nccl {

double bus_factor(Collective c, std::uint32_t ranks) {
  const double n = ranks;
  switch (c) {
    case Collective::kAllReduce: return 2 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv: return 1;
  }
  return 1;
}

namespace {

// A call large enough for NCCL's largest chunks: what algorithm_gb_per_s reports.
constexpr std::uint64_t kLargeCallBytes = std::uint64_t{1} << 40;

// How many times a node's NICs carry an all-reduce's buffer out (and in) in NCCL's two trees.
double tree_network_sends(std::uint32_t nodes) { return nodes <= 2 ? 1.0 : 2.0; }

}  // namespace

AchievedModel::AchievedModel(const Machine& machine, const Enabled& enabled, Efficiencies efficiencies)
    : tuning_(machine, enabled), efficiencies_(efficiencies) {}

double AchievedModel::algorithm_gb_per_s(Collective c, Algorithm a, Protocol p) const {
  const Machine& m = tuning_.machine();
  constexpr double kUnlimited = std::numeric_limits<double>::infinity();
  const double gpus = m.gpus_per_node;
  const double scale_up = m.gpus_per_node > 1 ? m.scale_up_gb_per_s() : kUnlimited;
  // What a node's NICs carry out (and in) together.
  const double network = m.nodes > 1 ? nics_gb_per_s(nic_share()) : kUnlimited;
  // Across nodes each ring leaves a node once, by a NIC: of its G hops in a node G - 1 cross the
  // GPUs' links. With a NIC a GPU (or two) NCCL's rings leave by every GPU alike, so a GPU's links
  // carry (G - 1) / G of its sends; with fewer NICs the GPUs away from them carry all of theirs.
  const bool exits_spread = m.nodes > 1 && gpus > 1 && m.nics_per_node % m.gpus_per_node == 0;
  const double ring_links = exits_spread ? scale_up * ring_share() * gpus / (gpus - 1) : scale_up * ring_share();
  const double ring_bus = std::min(ring_links, network);
  double simple = 0;
  switch (a) {
    case Algorithm::kRing:
    case Algorithm::kPat:
      // Every GPU sends and receives bus-factor x bytes, over its links and its node's NICs.
      simple = ring_bus / bus_factor(c, m.ranks());
      break;
    case Algorithm::kTree:
      // Each GPU of a chain sends the buffer up and down: twice; so does a node of two trees,
      // once each as inner node and leaf, except with two nodes (each the other's leaf: once).
      simple = std::min(scale_up * ring_share() / 2, network / tree_network_sends(m.nodes));
      break;
    case Algorithm::kNvls:
    case Algorithm::kNvlsTree:
      // What a large call reaches: the NVLink side less its per-loop cost, or the NICs.
      simple = std::min(nvls_nvlink_gb_per_s(c, a) * nvls_time(c, a, kLargeCallBytes).nvlink_share,
                        nvls_network_gb_per_s(a));
      break;
    case Algorithm::kMsccl:
      // All-pairs: each GPU's links carry bus-factor x bytes, at the schedule's share of them for
      // the protocol (msccl.h), not NCCL's ratios.
      return scale_up * msccl_link_share(p) / bus_factor(c, m.ranks());
    case Algorithm::kCollNetDirect:
    case Algorithm::kCollNetChain: {
      // Reduce-scatter and all-gather within the node, the network reducing the rest.
      const double intra = gpus > 1 ? scale_up * ring_share() * gpus / (2 * (gpus - 1)) : kUnlimited;
      simple = std::min(intra, network);
      break;
    }
  }
  if (p == Protocol::kSimple) return simple;
  // LL and LL128 as NCCL's own model has them against Simple (LL: half of each store is a flag,
  // polled at a ceiling; LL128: 8 bytes a line), whichever of them NCCL_PROTO leaves on.
  const double base = tuning_.unswitched_bandwidth(c, a, Protocol::kSimple);
  const double ratio =
      base > 0 ? tuning_.unswitched_bandwidth(c, a, p) / base : (p == Protocol::kLL ? 0.5 : 120.0 / 128.0);
  return simple * std::min(1.0, ratio);
}

double AchievedModel::ring_share() const { return efficiencies_.ring.value_or(tuning_.machine().gpu->ring_efficiency); }

double AchievedModel::all_to_all_share(std::uint64_t bytes) const {
  const Machine& m = tuning_.machine();
  if (!m.gpu->nvswitch || m.gpus_per_node < 3) return ring_share();
  const double peak = efficiencies_.all_to_all.value_or(m.gpu->all_to_all_efficiency);
  const double channels = p2p_op_channels(m, comm_channels(), bytes / m.ranks());
  return peak * (1 - efficiencies_.all_to_all_channel_loss / channels);
}

double AchievedModel::all_to_all_first_step_us(Protocol p, std::uint64_t bytes) const {
  return nccl::all_to_all_first_step_us(tuning_.machine(), p, comm_channels(), bytes,
                                        efficiencies_.p2p_channel_gb_per_s);
}

double AchievedModel::nvls_link_share(Algorithm a) const {
  const double nvls = efficiencies_.nvls.value_or(tuning_.machine().gpu->nvls_efficiency);
  return nvls * (a == Algorithm::kNvlsTree ? efficiencies_.nvls_tree : 1.0);
}

double AchievedModel::nvls_nvlink_gb_per_s(Collective c, Algorithm a) const {
  const Machine& m = tuning_.machine();
  if (m.gpus_per_node < 2) return std::numeric_limits<double>::infinity();
  // The switch reduces and multicasts: an all-reduce sends the buffer and receives a GPU's
  // share, then the reverse, bytes x (1 + 1/G) each way; a gather or scatter, bytes once.
  const double gpus = m.gpus_per_node;
  return m.gpu->scale_up_gb_per_s() * nvls_link_share(a) * (c == Collective::kAllReduce ? gpus / (gpus + 1) : 1.0);
}

double AchievedModel::nvls_network_gb_per_s(Algorithm a) const {
  const Machine& m = tuning_.machine();
  if (m.nodes < 2) return std::numeric_limits<double>::infinity();
  // Across nodes: the network reduces (CollNet) and the node sends the buffer once each way;
  // NVLS-tree's trees send it twice.
  const double nics = nics_gb_per_s(nic_share());
  return a == Algorithm::kNvls ? nics : nics / tree_network_sends(m.nodes);
}

NvlsTime AchievedModel::nvls_time(Collective c, Algorithm a, std::uint64_t bytes) const {
  const Machine& m = tuning_.machine();
  const NvlsChunking chunking =
      nvls_chunking(m, a, tuning_.graph(Algorithm::kNvls).channels, bytes,
                    tuning_.bandwidth(Collective::kAllReduce, Algorithm::kNvls, Protocol::kSimple));
  return nccl::nvls_time(chunking, nvls_stages(c, a, m.nodes), bytes, nvls_nvlink_gb_per_s(c, a),
                         nvls_network_gb_per_s(a),
                         efficiencies_.nvls_chunk_us.value_or(m.gpu->nvls_chunk_us) * chunking.heads);
}

double AchievedModel::own_shard_copy_us(Collective c, Algorithm a, std::uint64_t bytes) const {
  if (c != Collective::kAllGather || a != Algorithm::kRing || tuning_.enabled().in_place) return 0;
  const Machine& m = tuning_.machine();
  return static_cast<double>(bytes) / m.ranks() / (1000 * m.gpu->hbm_gb_per_s);
}

double AchievedModel::tree_messages_us(Protocol p, std::uint64_t bytes) const {
  const Machine& m = tuning_.machine();
  if (m.nodes < 2) return 0;
  const TreeMessages t = tree_messages(m, p, comm_channels(), bytes);
  double us = t.messages * efficiencies_.tree_message_us.value_or(m.gpu->tree_message_us);
  // A channel's share goes up the tree and comes down again, and its LL lines (twice the data)
  // are read by a send proxy each way before they leave; the channels' proxies read side by side.
  if (p == Protocol::kLL) us += 2 * 2 * static_cast<double>(bytes) / t.channels * efficiencies_.ll_proxy_scan_ns / 1000;
  return us;
}

std::uint32_t AchievedModel::comm_channels() const {
  const Graph& ring = tuning_.graph(Algorithm::kRing);
  return nccl::comm_channels(tuning_.machine(), ring.channels, ring.bw_intra);
}

double AchievedModel::p2p_channels_us(Collective c, Protocol p, std::uint64_t bytes) const {
  const double channel_gb_per_s = p == Protocol::kLL ? ll_channel_gb_per_s() / 2 : efficiencies_.p2p_channel_gb_per_s;
  return nccl::p2p_channels_us(tuning_.machine(), c, p, comm_channels(), bytes, channel_gb_per_s);
}

double AchievedModel::ll_channel_gb_per_s() const {
  return efficiencies_.ll_channel * tuning_.ring_ll128_channel_gb_per_s();
}

double AchievedModel::ll_channels_us(Collective c, Algorithm a, Protocol p, std::uint64_t bytes) const {
  return nccl::ll_channels_us(c, a, p, tuning_.machine().ranks(), comm_channels(), bytes, ll_channel_gb_per_s());
}

double AchievedModel::nics_gb_per_s(double share) const {
  const Machine& m = tuning_.machine();
  return m.nics_per_node * m.nic->line_gb_per_s * share;
}

double AchievedModel::nic_share() const { return efficiencies_.nic.value_or(tuning_.machine().nic->efficiency); }

double AchievedModel::nic_p2p_share() const {
  const NicPreset& nic = *tuning_.machine().nic;
  return efficiencies_.nic_p2p.value_or(nic.p2p_efficiency * nic_share() / nic.efficiency);
}

double AchievedModel::p2p_gb_per_s(Collective c, Protocol p, std::uint64_t bytes) const {
  const Machine& m = tuning_.machine();
  const double n = m.ranks(), gpus = m.gpus_per_node;
  const double wire = p == Protocol::kLL ? 0.5 : p == Protocol::kLL128 ? 120.0 / 128.0 : 1.0;
  if (c == Collective::kAllToAll) {
    const double scale_up = m.scale_up_gb_per_s() * all_to_all_share(bytes);
    // Per byte of a GPU's buffer: (G-1)/n of it over its links, the rest over the node's NICs,
    // which carry G GPUs' worth. With PXN across nodes a GPU's links also carry its pieces for
    // the other rails to their rail's GPU: (G-1)/G of the buffer in all.
    const bool pxn = m.pxn && m.nodes > 1;
    double seconds_per_gb = (pxn ? (gpus - 1) / gpus : (gpus - 1) / n) / scale_up;
    if (m.nodes > 1) seconds_per_gb = std::max(seconds_per_gb, gpus * (n - gpus) / n / nics_gb_per_s(nic_p2p_share()));
    return seconds_per_gb > 0 ? wire / seconds_per_gb : std::numeric_limits<double>::infinity();
  }
  // Send/receive to the next rank: through the switches all of a GPU's links, over a mesh the one
  // link to the peer; one NIC where the pair straddles two nodes.
  const double scale_up = (m.gpu->nvswitch ? m.gpu->scale_up_gb_per_s() : m.gpu->link_gb_per_s) * ring_share();
  const double link = m.nodes > 1 ? std::min(scale_up, m.nic->line_gb_per_s * nic_p2p_share()) : scale_up;
  return link * wire;
}

std::optional<double> AchievedModel::time_us(Collective c, Algorithm a, Protocol p, std::uint64_t bytes) const {
  const auto b = static_cast<double>(bytes);
  if (c == Collective::kAllToAll || c == Collective::kSendRecv) {
    // The links or, for a send/receive below 512 MiB, the few channels NCCL gives each peer.
    const double data_us = std::max(b / (1000 * p2p_gb_per_s(c, p, bytes)), p2p_channels_us(c, p, bytes));
    const double first_step_us = c == Collective::kAllToAll ? all_to_all_first_step_us(p, bytes) : 0.0;
    const Machine& m = tuning_.machine();
    return tuning_.p2p_latency_us(p) + m.added_latency_us(true, m.p2p_ops(c == Collective::kAllToAll)) + first_step_us +
           data_us;
  }
  if (a == Algorithm::kMsccl) {  // no NCCL bandwidth: the schedule the call takes, if any
    const MscclSchedule* s = tuning_.msccl_schedule(c, bytes);
    if (s == nullptr || s->protocol != p) return std::nullopt;
  } else if (tuning_.bandwidth(c, a, p) <= 0) {
    return std::nullopt;
  }
  if (a == Algorithm::kNvls || a == Algorithm::kNvlsTree) {
    const NvlsTime t = nvls_time(c, a, bytes);
    return latency_us(c, a, p) + tuning_.machine().added_latency_us(false) + t.fill_us + t.transfer_us;
  }
  const double messages_us = a == Algorithm::kTree ? tree_messages_us(p, bytes) : 0.0;
  // The links or, for a small LL call, its few channels: whichever is slower.
  const double data_us = std::max(b / (1000 * algorithm_gb_per_s(c, a, p)), ll_channels_us(c, a, p, bytes));
  return latency_us(c, a, p) + tuning_.machine().added_latency_us(false) + messages_us + data_us +
         own_shard_copy_us(c, a, bytes);
}

double AchievedModel::latency_us(Collective c, Algorithm a, Protocol p) const {
  if (a == Algorithm::kMsccl) return msccl_latency_us(p);
  const double levels_us = a == Algorithm::kNvlsTree ? tuning_.nvls_tree_levels_latency_us(p) : 0.0;
  // A slower LL step than NCCL's constant shows where NCCL's latency has not already allowed for
  // it: a ring across nodes paces its steps in a node by the network's posts when those are slower.
  const TuningModel::IntraSteps steps = tuning_.intra_steps(c, a, p);
  const double ll_steps_us =
      p == Protocol::kLL ? steps.count * std::max(0.0, tuning_.machine().gpu->ll_step_latency_us - steps.slack_us)
                         : 0.0;
  return tuning_.latency_us(c, a, p) - levels_us + ll_steps_us;
}

Timing AchievedModel::time(Collective c, std::uint64_t bytes) const {
  const TuningModel::Choice choice = tuning_.choose(c, bytes);
  return {*time_us(c, choice.algorithm, choice.protocol, bytes), choice};
}

}  // namespace chakrasim::system::nccl
