// The alpha-beta model (collectives/model.h): NCCL's latency terms, and
// bandwidths from the bytes each algorithm moves over NVLink and the NICs.
// docs/collectives-model.md derives every line.
#include "collectives/model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "collectives/bandwidth.h"
#include "collectives/model_nccl_constants.h"
#include "base/error.h"

namespace perflab::collectives {
namespace {

namespace k = nccl_constants;
constexpr double kInf = std::numeric_limits<double>::infinity();

int idx(NcclAlgo a) { return static_cast<int>(a); }
int idx(NcclProto p) { return static_cast<int>(p); }

/// NCCL's log2i: floor(log2(n)), 0 for n <= 1.
int log2i(uint64_t n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

/// NCCL's node-count index into its per-channel tables: 1 node, 2, more.
int node_index(int nodes) { return nodes <= 2 ? nodes - 1 : 2; }

int steps(CollOp op, int n) {
  switch (op) {
    case CollOp::kAllReduce: return 2 * (n - 1);
    case CollOp::kAllGather:
    case CollOp::kReduceScatter: return n - 1;
    case CollOp::kBroadcast: return n;
  }
  return n;
}

std::string squash(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

/// Latency in us, NCCL 2.28.9 ncclTopoTuneModel (NVSwitch systems: the
/// intra-node hardware is NVLink).
double latency_us(CollOp op, NcclAlgo a, NcclProto p, const Topology& t, const LinkPreset& link) {
  const int n = t.ranks(), nodes = t.nodes, g = t.gpus_per_node;
  const int ns = steps(op, n);
  const bool simple = p == NcclProto::kSimple;
  const double base = k::kBaseLatencyUs[idx(a)][idx(p)];
  double intra = k::kNvlinkLatencyUs[idx(a)][idx(p)];
  // With one GPU per node latencies are fully exposed: NCCL takes the tree's.
  double inter = (g == 1 ? k::kNetLatencyUs[idx(NcclAlgo::kTree)][idx(p)] : k::kNetLatencyUs[idx(a)][idx(p)]) +
                 link.net_latency_us + (simple ? link.net_latency_us : 0.0);
  switch (a) {
    case NcclAlgo::kRing: {
      if (op == CollOp::kBroadcast) {
        // One pipelined pass (NCCL's sameChannels case): a single hop's latency.
        return base + (nodes == 1 ? k::kNvlinkLatencyUs : k::kNetLatencyUs)[idx(a)][idx(p)];
      }
      if (nodes > 1) intra = std::max(intra, k::kNetOverheadUs * (simple ? 3.0 : 1.0));
      const int inter_steps = nodes == 1 ? 0 : op == CollOp::kAllReduce ? 2 * (nodes - 1) : nodes - 1;
      return base + (ns - inter_steps) * intra + inter_steps * inter;
    }
    case NcclAlgo::kTree:
      return base + 2 * ((g - 1) * intra + log2i(static_cast<uint64_t>(nodes)) * inter);
    case NcclAlgo::kCollNetDirect:
      return base + 2 * (std::min(1, g - 1) * intra + (g - 1) * k::kCollNetArityUs) + inter;
    case NcclAlgo::kCollNetChain:
      return base + 2 * (g - 1) * intra + inter;
    case NcclAlgo::kNvls:
      return intra + (nodes > 1 ? inter : 0.0);
    case NcclAlgo::kNvlsTree:
      return base + intra + 2 * log2i(static_cast<uint64_t>(nodes)) * inter;
    case NcclAlgo::kPat:
      break;
  }
  return kInf;
}

/// Algorithm bandwidth in GB/s. Byte counts per GPU and direction: ring
/// all-reduce 2(n-1)/n of the message, NVLS (multimem reduce + multicast
/// store) (g+1)/g over NVLink, CollNet and NVLS across nodes one message per
/// node through its g NICs, trees twice that between nodes (NCCL's 0.5
/// ratio) except at 2 nodes.
double algbw_gbs(CollOp op, NcclAlgo a, NcclProto p, const Topology& t, const LinkPreset& link) {
  const int n = t.ranks(), nodes = t.nodes, g = t.gpus_per_node, ni = node_index(nodes);
  const double nv = link.nvlink_gbs();
  const double net = g * link.nic_gbs();  // one node's NICs together
  const double ch = link.channels;
  // The ring's bottleneck link: NVLink, or (across nodes) the node's NICs,
  // each carrying one of the g rings.
  const double ring_bus = nodes == 1 ? nv : std::min(nv, net);
  const double ratio = static_cast<double>(n) / steps(op, n);
  switch (a) {
    case NcclAlgo::kRing: {
      double bus = ring_bus;
      if (p == NcclProto::kLL) bus = std::min(k::kLlMaxBw[ni], bus * k::kRingLLFactor);
      if (p == NcclProto::kLL128) bus = std::min(bus * k::kRingLL128Factor, ch * k::kPerChMaxRingLL128Bw[ni]);
      return bus * ratio;
    }
    case NcclAlgo::kTree: {
      double bus = std::min(ring_bus * k::kTreeFactor, ch * k::kPerChMaxTreeBw[ni]);
      if (p == NcclProto::kLL) bus = std::min(bus * k::kTreeLLFactor, k::kLlMaxBw[ni]);
      if (p == NcclProto::kLL128) {
        bus = std::min(bus * (nodes == 1 ? k::kTreeLL128FactorOneNode : k::kTreeLL128FactorNodes),
                       ch * k::kPerChMaxTreeLL128Bw[ni]);
      }
      return bus * k::kTreeRatio;
    }
    case NcclAlgo::kCollNetDirect: {
      // Inside the node a reduce-scatter and an all-gather over NVLink; one
      // message per node through the NICs, reduced in the switches.
      const double intra = g > 1 ? nv * g / (2.0 * (g - 1)) : kInf;
      return k::kCollNetDirectHopper * std::min(intra, net);
    }
    case NcclAlgo::kCollNetChain: {
      // A chain through the node: every GPU sends the message up and down.
      const double intra = g > 1 ? nv / 2.0 : kInf;
      return std::min(intra, net);
    }
    case NcclAlgo::kNvls: {
      const double eff = k::kNvlsEfficiencyHopper;
      if (op == CollOp::kAllReduce) return std::min(eff * nv * g / (g + 1.0), nodes > 1 ? net : kInf);
      return eff * nv * g / (g - 1.0);  // all_gather / reduce_scatter, one node
    }
    case NcclAlgo::kNvlsTree: {
      const double intra = k::kNvlsEfficiencyHopper * nv * g / (g + 1.0);
      const double inter = nodes == 2 ? net : net / 2.0;
      return std::min({intra, inter, ch * k::kPerChMaxNvlsTreeBw[ni] * ratio});
    }
    case NcclAlgo::kPat:
      break;
  }
  return 0;
}

}  // namespace

std::string_view coll_op_name(CollOp op) {
  switch (op) {
    case CollOp::kAllReduce: return "all_reduce";
    case CollOp::kAllGather: return "all_gather";
    case CollOp::kReduceScatter: return "reduce_scatter";
    case CollOp::kBroadcast: return "broadcast";
  }
  return "?";
}

std::optional<CollOp> parse_coll_op(std::string_view text) {
  const std::string s = squash(text);
  for (CollOp op : {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kBroadcast}) {
    if (s == squash(coll_op_name(op))) return op;
  }
  return std::nullopt;
}

std::optional<NcclAlgo> parse_model_algo(std::string_view text) {
  if (squash(text) == "sharp") return NcclAlgo::kCollNetChain;
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front()))) return std::nullopt;
  std::string upper;
  for (char c : text) upper += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return parse_nccl_algo(upper);
}

double bus_factor(CollOp op, int nranks) {
  // nccl-tests' factors live once, in collectives/bandwidth.h.
  switch (op) {
    case CollOp::kAllReduce: return busbw_factor(Collective::kAllReduce, nranks);
    case CollOp::kAllGather: return busbw_factor(Collective::kAllGather, nranks);
    case CollOp::kReduceScatter: return busbw_factor(Collective::kReduceScatter, nranks);
    case CollOp::kBroadcast: return busbw_factor(Collective::kBroadcast, nranks);
  }
  return 1.0;
}

void validate_topology(const Topology& topo, const LinkPreset& link) {
  if (topo.nodes <= 0) throw UsageError(fmt::format("--nodes must be at least 1, got {}", topo.nodes));
  if (topo.gpus_per_node <= 0 || topo.gpus_per_node > 72) {
    throw UsageError(fmt::format("--gpus-per-node must be in [1, 72], got {}", topo.gpus_per_node));
  }
  if (topo.nodes > (1 << 20) / topo.gpus_per_node) {
    throw UsageError(fmt::format("{} nodes x {} GPUs is more than 2^20 ranks", topo.nodes, topo.gpus_per_node));
  }
  if (topo.ranks() < 2) throw UsageError("the model needs at least 2 GPUs in all (a single rank moves no data)");
  if (topo.nodes > 1 && link.nic_gbps <= 0) {
    throw UsageError(fmt::format("link preset '{}' is one node (no network); for {} nodes use {}-hdr or {}-ndr",
                                 link.name, topo.nodes, link.name, link.name));
  }
}

std::string unavailable_reason(CollOp op, NcclAlgo a, NcclProto p, const Topology& t, const LinkPreset& link) {
  const std::string name(nccl_algo_name(a));
  if (t.ranks() < 2) return "a single rank moves no data";
  if (a == NcclAlgo::kPat) return "PAT is not modelled";
  if (a == NcclAlgo::kRing) return {};
  if (op == CollOp::kBroadcast) return "NCCL runs broadcast with RING only";
  const bool all_reduce = op == CollOp::kAllReduce;
  if (!all_reduce && a != NcclAlgo::kNvls) return fmt::format("{} is modelled for all_reduce only", name);
  std::string structural;
  switch (a) {
    case NcclAlgo::kCollNetDirect:
    case NcclAlgo::kCollNetChain:
      if (!link.sharp) structural = fmt::format("CollNet needs SHARP; preset '{}' has none", link.name);
      else if (t.nodes < 2) structural = "CollNet needs at least 2 nodes (NCCL_COLLNET_NODE_THRESHOLD, default 2)";
      break;
    case NcclAlgo::kNvls:
      if (!link.nvls) structural = fmt::format("NVLS needs NVSwitch multicast; preset '{}' has none", link.name);
      else if (t.gpus_per_node < 2) structural = "NVLS needs at least 2 GPUs per node";
      else if (!all_reduce && t.nodes > 1) structural = "NVLS all_gather/reduce_scatter across nodes is not modelled";
      else if (t.nodes > 1 && !link.sharp) structural = "NVLS across nodes needs CollNet (SHARP); NVLS_TREE runs without it";
      break;
    case NcclAlgo::kNvlsTree:
      if (!link.nvls) structural = fmt::format("NVLS needs NVSwitch multicast; preset '{}' has none", link.name);
      else if (t.gpus_per_node < 2) structural = "NVLS needs at least 2 GPUs per node";
      else if (t.nodes < 2) structural = "NVLS_TREE needs at least 2 nodes";
      break;
    default:
      break;
  }
  if (!structural.empty()) return structural;
  if (p != NcclProto::kSimple && a != NcclAlgo::kTree) return fmt::format("{} runs only SIMPLE", name);
  return {};
}

std::optional<Prediction> predict(CollOp op, NcclAlgo algo, NcclProto proto, uint64_t bytes,
                                  const Topology& topo, const LinkPreset& link, const Calibration& calibration) {
  if (!unavailable_reason(op, algo, proto, topo, link).empty()) return std::nullopt;
  Prediction pr;
  pr.op = op;
  pr.algo = algo;
  pr.proto = proto;
  pr.bytes = bytes;
  double lat = latency_us(op, algo, proto, topo, link);
  double bw = algbw_gbs(op, algo, proto, topo, link);
  if (!(bw > 0) || !std::isfinite(bw)) return std::nullopt;
  // Per-size terms, as NCCL's getAlgoTime applies them.
  const int log_size = log2i(bytes >> 6);
  if (algo == NcclAlgo::kTree && op == CollOp::kAllReduce && log_size < 23) {
    bw *= nccl_constants::kTreeCorrection[idx(proto)][log_size];
  }
  if (algo == NcclAlgo::kRing && proto == NcclProto::kSimple && topo.nodes > 1 && op == CollOp::kAllReduce &&
      static_cast<double>(bytes) / (link.channels * static_cast<double>(topo.ranks())) >=
          nccl_constants::kRingPlateauBytes) {
    lat *= nccl_constants::kRingPlateau;
  }
  if (auto it = calibration.find({op, algo}); it != calibration.end()) {
    lat *= it->second.latency_scale;
    bw /= it->second.transfer_scale;
  }
  pr.terms = {lat, bw};
  pr.time_us = lat + static_cast<double>(bytes) / (1000.0 * bw);
  pr.algbw_gbs = static_cast<double>(bytes) / (1000.0 * pr.time_us);
  pr.busbw_gbs = pr.algbw_gbs * bus_factor(op, topo.ranks());
  return pr;
}

std::optional<Prediction> predict_best_protocol(CollOp op, NcclAlgo algo, uint64_t bytes, const Topology& topo,
                                                const LinkPreset& link, const Calibration& calibration) {
  std::optional<Prediction> best;
  for (NcclProto p : {NcclProto::kLL, NcclProto::kLL128, NcclProto::kSimple}) {
    auto pr = predict(op, algo, p, bytes, topo, link, calibration);
    if (pr && (!best || pr->time_us < best->time_us)) best = pr;
  }
  return best;
}

AllToAllPrediction predict_all_to_all(uint64_t bytes, const Topology& topo, const LinkPreset& link) {
  validate_topology(topo, link);
  const int n = topo.ranks(), g = topo.gpus_per_node;
  const int ring = idx(NcclAlgo::kRing), simple = idx(NcclProto::kSimple);
  const auto rounds = [](int peers) { return (peers + k::kP2pPeersPerBatch - 1) / k::kP2pPeersPerBatch; };
  AllToAllPrediction pr;
  pr.bytes = bytes;
  const double share = static_cast<double>(bytes) / n;  // to each peer
  pr.nvlink_bytes = share * (g - 1);
  pr.network_bytes = share * (n - g);
  pr.terms.latency_us = k::kBaseLatencyUs[ring][simple] + rounds(g - 1) * k::kNvlinkLatencyUs[ring][simple] +
                        rounds(n - g) * (k::kNetLatencyUs[ring][simple] + 3 * k::kNetOverheadUs);
  // Per GPU: its node-local shares over NVLink and its remote shares
  // through its rail's NIC, concurrently; the slower one sets the time.
  const double nvlink_us = pr.nvlink_bytes / (1000.0 * link.nvlink_gbs());
  const double network_us = n > g ? pr.network_bytes / (1000.0 * link.nic_gbs()) : 0.0;
  const double transfer_us = std::max(nvlink_us, network_us);
  pr.terms.algbw_gbs = transfer_us > 0 ? static_cast<double>(bytes) / (1000.0 * transfer_us) : kInf;
  pr.time_us = pr.terms.latency_us + transfer_us;
  pr.algbw_gbs = static_cast<double>(bytes) / (1000.0 * pr.time_us);
  pr.busbw_gbs = pr.algbw_gbs * busbw_factor(Collective::kAllToAll, n);
  return pr;
}

}  // namespace perflab::collectives
