// DLRM's communication at 8, 64 and 512 GPUs (workloads/dlrm/projection.h).
#include "workloads/dlrm/projection.h"

#include <fmt/format.h>

#include "collectives/model.h"
#include "base/error.h"

namespace perflab::dlrm {
namespace {

using collectives::CollOp;
using collectives::NcclAlgo;

struct Scale {
  int nodes;
  const char* link;
  const char* sharp_link;
};
// 8 H100 per node; NVSwitch's NVLS is the one-node in-network reduction.
constexpr Scale kScales[] = {{1, "h100", "h100"}, {8, "h100-ndr", "h100-ndr-sharp"}, {64, "h100-ndr", "h100-ndr-sharp"}};
constexpr int kGpusPerNode = 8;

/// The fastest all-reduce among `algos` that run on this machine (NCCL's
/// rule: least predicted time over algorithms and protocols).
std::optional<collectives::Prediction> best_all_reduce(uint64_t bytes, const collectives::Topology& topo,
                                                       const collectives::LinkPreset& link,
                                                       std::initializer_list<NcclAlgo> algos) {
  std::optional<collectives::Prediction> best;
  for (NcclAlgo a : algos) {
    auto p = collectives::predict_best_protocol(CollOp::kAllReduce, a, bytes, topo, link);
    if (p && (!best || p->time_us < best->time_us)) best = p;
  }
  return best;
}

}  // namespace

Projection project_communication(const ModelShape& shape, int64_t per_gpu_batch,
                                 std::optional<double> hybrid_reduction, ValueBytes values) {
  if (per_gpu_batch <= 0) throw UsageError(fmt::format("projection: per-GPU batch {} must be positive", per_gpu_batch));
  Projection out;
  out.per_gpu_batch = per_gpu_batch;
  out.values = values;
  out.exchange_scale = hybrid_reduction ? 1.0 - *hybrid_reduction : 1.0;
  const double tables = static_cast<double>(shape.table_sizes.size());
  const double a2a_values = static_cast<double>(per_gpu_batch) * tables * shape.embed_dim * out.exchange_scale;
  const double a2a_bytes = a2a_values * values.forward, a2a_backward_bytes = a2a_values * values.backward;
  const auto ar_bytes = static_cast<uint64_t>(dense_parameter_count(shape)) * static_cast<uint64_t>(values.all_reduce);
  for (const Scale& s : kScales) {
    ScaleProjection p;
    p.nodes = s.nodes;
    p.gpus_per_node = kGpusPerNode;
    p.link = s.link;
    p.sharp_link = s.sharp_link;
    const collectives::Topology topo{s.nodes, kGpusPerNode};
    const collectives::LinkPreset& plain = collectives::find_link_preset(s.link);
    const collectives::LinkPreset& sharp = collectives::find_link_preset(s.sharp_link);
    p.global_batch = per_gpu_batch * topo.ranks();
    p.all_to_all_bytes = a2a_bytes;
    p.all_to_all_us = collectives::predict_all_to_all(static_cast<uint64_t>(a2a_bytes), topo, plain).time_us;
    p.all_to_all_backward_bytes = a2a_backward_bytes;
    p.all_to_all_backward_us =
        collectives::predict_all_to_all(static_cast<uint64_t>(a2a_backward_bytes), topo, plain).time_us;
    p.all_reduce_bytes = static_cast<double>(ar_bytes);
    // --sharp off sets NCCL_COLLNET_ENABLE=0 and NCCL_NVLS_ENABLE=0: ring or tree.
    const auto off = best_all_reduce(ar_bytes, topo, plain, {NcclAlgo::kRing, NcclAlgo::kTree});
    const auto on = best_all_reduce(ar_bytes, topo, sharp,
                                    {NcclAlgo::kRing, NcclAlgo::kTree, NcclAlgo::kCollNetDirect,
                                     NcclAlgo::kCollNetChain, NcclAlgo::kNvls, NcclAlgo::kNvlsTree});
    if (!off || !on) throw Error("projection: no all-reduce algorithm runs on the projected machine");
    p.all_reduce_algo = collectives::nccl_algo_name(off->algo);
    p.all_reduce_us = off->time_us;
    p.sharp_algo = collectives::nccl_algo_name(on->algo);
    p.sharp_all_reduce_us = on->time_us;
    out.scales.push_back(p);
  }
  return out;
}

nlohmann::json projection_json(const Projection& projection) {
  nlohmann::json scales = nlohmann::json::array();
  for (const ScaleProjection& p : projection.scales) {
    scales.push_back({{"gpus", p.gpus()},
                      {"nodes", p.nodes},
                      {"gpus_per_node", p.gpus_per_node},
                      {"link", p.link},
                      {"global_batch", p.global_batch},
                      {"all_to_all_bytes", p.all_to_all_bytes},
                      {"all_to_all_us", p.all_to_all_us},
                      {"all_to_all_backward_bytes", p.all_to_all_backward_bytes},
                      {"all_to_all_backward_us", p.all_to_all_backward_us},
                      {"all_reduce_bytes", p.all_reduce_bytes},
                      {"all_reduce_algorithm", p.all_reduce_algo},
                      {"all_reduce_us", p.all_reduce_us},
                      {"sharp_link", p.sharp_link},
                      {"sharp_all_reduce_algorithm", p.sharp_algo},
                      {"sharp_all_reduce_us", p.sharp_all_reduce_us},
                      {"communication_us", p.communication_us(false)},
                      {"sharp_communication_us", p.communication_us(true)}});
  }
  return {{"model", "perflab model's alpha-beta model (docs/collectives-model.md): all-to-all as NCCL "
                    "point-to-point, all-reduce at NCCL's fastest algorithm"},
          {"assumptions", "weak scaling at this run's per-rank batch; tables split evenly over the GPUs; "
                          "communication only, nothing overlapped; H100 SXM, 8 per node on NVSwitch, one "
                          "InfiniBand NDR 400 rail per GPU"},
          {"per_gpu_batch", projection.per_gpu_batch},
          {"exchange_scale", projection.exchange_scale},
          {"value_bytes",
           {{"forward", projection.values.forward},
            {"backward", projection.values.backward},
            {"all_reduce", projection.values.all_reduce}}},
          {"scales", scales}};
}

}  // namespace perflab::dlrm
