// What one CudaModel training step launches, declared from the model's
// shape and options without a device: the layer modes CudaModel builds its
// MLPs with (one function, used by both), and the step's kernels in order,
// by phase, with their work (kernels/launch.h). The profiler matches them
// to what CUPTI records; tests/workloads/dlrm/dlrm_launches_test.cc holds
// the count per phase, so a change that adds launches says how many and
// where. Built with CUDA only (the operators' declarations live beside
// their run()).
#pragma once

#include <cstdint>
#include <vector>

#include "harness/launch_plan.h"
#include "kernels/cuda/linear.h"
#include "workloads/dlrm/cuda_model.h"
#include "workloads/dlrm/dense_layout.h"
#include "workloads/dlrm/dlrm_benchmark.h"
#include "workloads/dlrm/model.h"

namespace perflab::dlrm {

/// Whether the top MLP's last layer, the loss and that layer's backward run
/// as one kernel (kernels/cuda/logit_head.h): fused, a layer below it, and
/// that layer's width within the kernel's limit.
bool fused_head(const ModelShape& shape, const CudaModelOptions& options);

/// Up to this many samples a GPU, a fused head with side streams runs as
/// two launches (split_head).
inline constexpr int64_t kSplitHeadMaxBatch = 2048;

/// Whether the fused head runs as LogitHead::train_rows on the step's stream
/// and train_sums on the weight gradients' (kernels/cuda/logit_head.h): a
/// fused head, side streams, one GPU (no communicator), a training model,
/// and a batch small enough (kSplitHeadMaxBatch) that the step is a chain of
/// latencies, where the head's cross-block sums (its counters, fences and
/// the loss's publication) are off the chain. The fused head took 14.3 us
/// at bf16 batch 512 on an H200 (1590d6a's kernels.md); how much of that the
/// sums are is not measured (a count of its serial round trips puts most of
/// it there: an estimate). Past it the fused kernel stays:
/// the GPU is full either way, and the split reads x twice.
bool split_head(const ModelShape& shape, const CudaModelOptions& options, bool sharded, int64_t local);

/// Whether the embedding lookup runs inside the interaction's kernels
/// (kernels/cuda/interaction.h's InteractionLookup: no gather launch and no
/// [batch, T, dim] tensor written and read back, forward or backward): fused,
/// every table on this GPU with no exchange (no communicator), and the
/// model's own tables (not a serving model's external embeddings).
bool lookup_in_interaction(const CudaModelOptions& options, bool sharded);

/// Shape and modes (no pointers) of each layer of an MLP of `widths` fed
/// `in` features over `batch` samples: ReLU on every bottom layer and on
/// every top layer but the last; fused, the dReLU/bias-gradient chain of
/// kernels/cuda/linear.h; the bottom MLP's last layer with dy_relu_applied
/// (the interaction's backward applies its dReLU: CudaModel sets dx_relu).
std::vector<kernels::cuda::LinearArguments> mlp_layer_modes(const std::vector<int>& widths,
                                                            int64_t in, bool bottom, int64_t batch,
                                                            const CudaModelOptions& options);

/// The layers of both MLPs whose weight gradients read dz transposed
/// (wgrad_reads_dy_t in mlp_layer_modes).
int transposed_dz_layers(const ModelShape& shape, const CudaModelOptions& options);

/// The kernels CudaModel::train_step enqueues, in order. `ranks`: the
/// communicator's size, 0 without one (every table on this GPU, no
/// exchange; options.comm is not read); `rank`: this GPU's.
LaunchPlan train_step_launches(const ModelShape& shape, const CudaModelOptions& options,
                               int ranks = 0, int rank = 0);

}  // namespace perflab::dlrm
