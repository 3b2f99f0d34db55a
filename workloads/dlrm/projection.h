// DLRM's communication at scales this machine does not have: per iteration
// the embedding all-to-all (forward vectors, backward gradients) and the
// MLP gradient all-reduce, predicted by the collectives workload's at-scale
// model (collectives/model.h, docs/collectives-model.md) at 8 GPUs (one
// node of 8 H100 on NVSwitch), 64 and 512 GPUs (8 and 64 such nodes, one
// InfiniBand NDR 400 rail per GPU), with and without in-network reduction.
//
// Weak scaling: every GPU keeps the run's per-rank batch. The tables are
// taken as split evenly over the GPUs (row- or column-wise once there are
// more GPUs than tables, as the MLPerf submissions do; perflab's own
// placement is table-wise), so each GPU's all-to-all buffer is its samples'
// T rows of D values. The bytes per value follow the run's precision: a bf16
// cuda run exchanges bf16 rows forward, fp32 gradients backward, and
// all-reduces bf16 gradients. A hybrid embedding's measured byte reduction
// is applied as measured. Pure: no I/O, no communicator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/dlrm/model.h"

namespace perflab::dlrm {

/// One scale of the projection.
struct ScaleProjection {
  int nodes = 1;
  int gpus_per_node = 8;
  std::string link;                ///< Preset without in-network reduction ("h100", "h100-ndr").
  int64_t global_batch = 0;        ///< per-GPU batch x GPUs
  double all_to_all_bytes = 0;     ///< Per GPU, forward (embedding rows): nccl-tests' all-to-all size.
  double all_to_all_us = 0;        ///< Forward.
  double all_to_all_backward_bytes = 0;  ///< Per GPU, backward (their gradients).
  double all_to_all_backward_us = 0;
  double all_reduce_bytes = 0;     ///< The MLP gradients.
  std::string all_reduce_algo;     ///< NCCL's fastest without SHARP or NVLS (ring or tree).
  double all_reduce_us = 0;
  std::string sharp_link;          ///< Preset with in-network reduction ("h100" has NVLS, "h100-ndr-sharp").
  std::string sharp_algo;          ///< The fastest with it (NVLS, CollNet, NVLS tree, or still ring/tree).
  double sharp_all_reduce_us = 0;
  int gpus() const { return nodes * gpus_per_node; }
  /// The 2 all-to-alls + the all-reduce, with nothing overlapped.
  double communication_us(bool sharp) const {
    return all_to_all_us + all_to_all_backward_us + (sharp ? sharp_all_reduce_us : all_reduce_us);
  }
};

/// Bytes per value of what the step moves: the embedding rows forward, their
/// gradients backward, the dense gradient all-reduced. fp32 everywhere, but
/// a bf16 run on the cuda backend: {2, 2, 2} (CudaModel, cuda_model.h: the
/// rows, their gradients and the dense gradients all bf16).
struct ValueBytes {
  int forward = 4;
  int backward = 4;
  int all_reduce = 4;
};

struct Projection {
  int64_t per_gpu_batch = 0;
  ValueBytes values;
  double exchange_scale = 1;  ///< 1 for model parallel; 1 - the hybrid embedding's measured reduction.
  std::vector<ScaleProjection> scales;
};

/// The projection for `shape` at a per-GPU batch of `per_gpu_batch` (> 0),
/// at 8, 64 and 512 GPUs. `hybrid_reduction`: the measured fraction of
/// all-to-all bytes the hybrid embedding saved (nullopt: model parallel).
Projection project_communication(const ModelShape& shape, int64_t per_gpu_batch,
                                 std::optional<double> hybrid_reduction = std::nullopt, ValueBytes values = {});

/// As recorded in the step plan's data facts ("projection"), with the model
/// and the assumptions in words.
nlohmann::json projection_json(const Projection& projection);

}  // namespace perflab::dlrm
