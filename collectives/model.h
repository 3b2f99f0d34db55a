// The at-scale collective model behind `perflab model`: predicted time and
// bus bandwidth of NCCL collectives at nodes x GPUs per node x message size
// x algorithm x protocol, for link presets (NVLink4/NVSwitch H100 and H200,
// InfiniBand HDR 200 and NDR 400 per GPU rail, with or without SHARP).
//
// An alpha-beta model: time = latency(op, algo, proto, topology) +
// bytes / algbw(op, algo, proto, topology, link). The latency terms are
// NCCL's own tuning model (src/graph/tuning.cc of NCCL 2.28.9: base and
// hardware latencies per algorithm and protocol, steps per algorithm, net
// overhead, the ring plateau and the tree correction); the bandwidths count
// the bytes each algorithm moves over NVLink and the NICs, with NCCL's
// per-algorithm and per-protocol factors. docs/collectives-model.md gives
// every formula and constant with its source, and the validation.
//
// Pure functions: no NCCL, CUDA or I/O here (calibration input is read in
// collectives/model_fit.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectives/nccl_log.h"  // NcclAlgo, NcclProto

namespace perflab::collectives {

/// The collectives the model predicts.
enum class CollOp { kAllReduce, kAllGather, kReduceScatter, kBroadcast };

/// "all_reduce", "all_gather", "reduce_scatter", "broadcast".
std::string_view coll_op_name(CollOp op);
/// perflab's name, NCCL's ("AllReduce") or without underscores, any case.
std::optional<CollOp> parse_coll_op(std::string_view text);
/// NCCL's algorithm from a name as users write it: NCCL's names in any case,
/// plus "sharp" for COLLNET_CHAIN.
std::optional<NcclAlgo> parse_model_algo(std::string_view text);

/// nccl-tests' bus-bandwidth factor (busbw = algbw * factor): all_reduce
/// 2(n-1)/n, all_gather and reduce_scatter (n-1)/n, broadcast 1.
double bus_factor(CollOp op, int nranks);

/// The machine: what links a GPU has. Bandwidths in GB/s (10^9 bytes/s),
/// one direction.
struct LinkPreset {
  std::string name;         ///< "h100-ndr-sharp"
  std::string description;  ///< One line for `--help` and the docs.
  std::string gpu;          ///< "H100", "H200"
  int nvlink_links = 18;           ///< NVLink4 links per GPU (H100/H200 SXM).
  double nvlink_link_gbs = 20.6;   ///< Per link: NCCL's SM90_NVLINK_BW (src/graph/topo.h).
  bool nvls = true;                ///< NVSwitch with multicast (NVLink SHARP).
  double nic_gbps = 0;             ///< Per GPU rail, Gb/s; 0: one node only.
  bool sharp = false;              ///< CollNet (SHARP plugin, SHARP-capable switches).
  double net_latency_us = 0;       ///< NCCL's graph latencyInter (the IB plugin reports 0).
  int channels = 16;               ///< Ring/tree channels, for NCCL's per-channel caps.
  /// Per GPU, all links: nvlink_links * nvlink_link_gbs (370.8 for H100).
  double nvlink_gbs() const { return nvlink_links * nvlink_link_gbs; }
  /// Per GPU rail: nic_gbps / 8.
  double nic_gbs() const { return nic_gbps / 8.0; }
};

/// Every preset: h100, h200 (one node), and <gpu>-hdr, <gpu>-ndr with and
/// without -sharp.
const std::vector<LinkPreset>& link_presets();
/// The preset named `name`; UsageError listing the names when there is none.
const LinkPreset& find_link_preset(std::string_view name);

/// nodes x GPUs per node, one rank per GPU.
struct Topology {
  int nodes = 1;
  int gpus_per_node = 8;
  int ranks() const { return nodes * gpus_per_node; }
};

/// Checks a topology against a preset: UsageError (one line) when nodes or
/// GPUs per node are not positive, there are fewer than 2 ranks, more than
/// 2^20 ranks, or several nodes on a preset with no network.
void validate_topology(const Topology& topo, const LinkPreset& link);

/// The two terms of one prediction.
struct AlphaBeta {
  double latency_us = 0;  ///< alpha
  double algbw_gbs = 0;   ///< 1/beta, in algorithm-bandwidth terms
};

/// Multipliers fitted from measurements (collectives/model_fit.h): latency
/// times `latency_scale`, transfer time times `transfer_scale`.
struct TermScales {
  double latency_scale = 1;
  double transfer_scale = 1;
};
/// Scales per (op, algorithm); a pair not present is not scaled.
using Calibration = std::map<std::pair<CollOp, NcclAlgo>, TermScales>;

/// One predicted point.
struct Prediction {
  CollOp op = CollOp::kAllReduce;
  NcclAlgo algo = NcclAlgo::kRing;
  NcclProto proto = NcclProto::kSimple;
  uint64_t bytes = 0;
  AlphaBeta terms;      ///< At this size (tree correction and ring plateau applied).
  double time_us = 0;   ///< terms.latency_us + bytes / (1000 * terms.algbw_gbs)
  double algbw_gbs = 0; ///< bytes / time, as nccl-tests reports it
  double busbw_gbs = 0; ///< algbw * bus_factor
};

/// Why NCCL would not run `algo` with `proto` for `op` on this machine
/// ("CollNet needs SHARP: the preset has none", "NVLS runs only SIMPLE"); empty
/// when it would.
std::string unavailable_reason(CollOp op, NcclAlgo algo, NcclProto proto, const Topology& topo,
                               const LinkPreset& link);

/// The model at one size; nullopt when unavailable_reason is not empty.
std::optional<Prediction> predict(CollOp op, NcclAlgo algo, NcclProto proto, uint64_t bytes,
                                  const Topology& topo, const LinkPreset& link,
                                  const Calibration& calibration = {});

/// The fastest protocol of `algo` at this size (NCCL's own choice rule:
/// least predicted time); nullopt when no protocol is available.
std::optional<Prediction> predict_best_protocol(CollOp op, NcclAlgo algo, uint64_t bytes,
                                                const Topology& topo, const LinkPreset& link,
                                                const Calibration& calibration = {});

/// NCCL's all-to-all (ncclSend/ncclRecv in a group; nccl-tests'
/// alltoall_perf): not a collective algorithm, so NCCL's tuning model does
/// not cover it and the terms below are perflab's estimate from NCCL's
/// constants (docs/collectives-model.md, "All-to-all"). `bytes` is
/// nccl-tests' size: the whole per-rank send buffer, bytes/n to each rank.
struct AllToAllPrediction {
  uint64_t bytes = 0;
  AlphaBeta terms;             ///< latency and the algorithm bandwidth it implies
  double nvlink_bytes = 0;     ///< Per GPU over NVLink: bytes·(g−1)/n
  double network_bytes = 0;    ///< Per GPU through its NIC rail: bytes·(n−g)/n
  double time_us = 0;          ///< latency + max(NVLink time, network time)
  double algbw_gbs = 0;        ///< bytes / time
  double busbw_gbs = 0;        ///< algbw · (n−1)/n, nccl-tests' all-to-all factor
};

/// The all-to-all estimate at one size: the peers are served in rounds of
/// NCCL_MAX_DEV_WORK_P2P_PER_BATCH (8) at once, each round of node-local
/// peers costing NCCL's ring SIMPLE NVLink step latency and each round of
/// remote peers its network step latency, after one base latency; the
/// NVLink and network shares travel at the same time. Throws UsageError for
/// a topology validate_topology refuses.
AllToAllPrediction predict_all_to_all(uint64_t bytes, const Topology& topo, const LinkPreset& link);

}  // namespace perflab::collectives
