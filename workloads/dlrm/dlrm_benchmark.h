// DLRM as a train-to-target benchmark: the data is prepared once (synthetic
// or converted Criteo), each seed trains a fresh model with SGD (CpuModel on
// the cpu backend, CudaModel on the cuda backend, see cuda_run.h) and is
// evaluated by exact ROC AUC on the held-out split.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "harness/run_context.h"
#include "harness/workload.h"
#include "workloads/dlrm/data/dataset.h"
#include "workloads/dlrm/model.h"
#include "workloads/dlrm/hybrid_embedding.h"
#include "workloads/dlrm/projection.h"
#include "workloads/dlrm/schedule.h"
#include "workloads/dlrm/serve/serve_options.h"
#include "workloads/dlrm/sharded_model.h"

#ifdef PERFLAB_DLRM_CUDA
#include "workloads/dlrm/cuda_nccl.h"
#endif

namespace perflab::dlrm {

/// Parses a layer list such as "512-256-128"; throws UsageError naming the
/// parameter when it is not a list of positive integers.
std::vector<int> parse_layers(const std::string& param, const std::string& text);

/// Bytes per value of what a step moves between ranks (projection.h's
/// ValueBytes): a bf16 run on the cuda backend exchanges bf16 rows forward
/// and bf16 gradients back and all-reduces bf16 dense gradients
/// (cuda_model.h); everything else moves fp32.
ValueBytes exchange_values(Backend backend, const std::string& precision);

/// What epilogues=auto picks: "own_backward" in both precisions (the
/// forward in cuBLASLt's RELU_BIAS epilogue, the backward as perflab's one
/// dReLU+bias-gradient pass). cuBLASLt runs its backward chain slowly: on an
/// H100 (docs/results/2026-11-26-h100-gpu-check, dle, batch 65,536) its TF32
/// RELU_AUX_BIAS and DRELU_BGRAD ran as separate passes (4.08 ms of a
/// 10.73 ms step), the bf16 DRELU_BGRAD as one (1.33 of 5.71 ms). Without
/// the aux output the TF32 forward epilogue is fused into the GEMM: on an
/// H200 (docs/results/2026-11-26-h200-gpu-check-c9d4b27) own_backward ran
/// 1.07x own at TF32 batch 65,536 (6.336 against 6.806 ms) and 1.06x in
/// samples/s at 512.
std::string auto_epilogues();

/// The smallest batch a rank at which interaction=auto puts a bf16
/// interaction on tensor cores. Below it a tensor-core warp does a whole
/// sample alone with about four warps a SM, and the CUDA-core kernels win.
/// From an H200 at the dle shape (docs/results/2026-11-27-h200-gpu-check-1590d6a,
/// forward + backward, CUPTI): CUDA cores 28.0 us at 512 and 1,629.5 at
/// 65,536, tensor cores 38.7 and 1,150.0; straight lines through the two
/// points cross near 1,930 samples. Two points only: gpu-check's
/// interaction step times 2,048 as well, to check it.
inline constexpr int64_t kTensorCoreInteractionMinBatch = 2048;

/// What interaction=auto picks: tensor cores for a bf16 model that trains
/// its tables on the cuda backend, with at least
/// kTensorCoreInteractionMinBatch samples a rank, where the shape fits the
/// WMMA kernels; CUDA cores otherwise. Measured at the dle shape: on an
/// H100 at batch 65,536 (docs/results/2026-11-26-h100-gpu-check) bf16
/// tensor cores 1.09x the step of CUDA cores, TF32 tensor cores 0.91x; on
/// an H200 (2026-11-27 run above) bf16 1.14x at 65,536 and 0.94x at 512,
/// TF32 0.92x at 65,536 and 0.94x at 512.
bool auto_interaction_tensor_cores(Backend backend, const std::string& precision, const ModelShape& shape,
                                   bool serving, int64_t rank_batch);

/// Everything the workload derives from its parameters.
struct DlrmSetup {
  ModelShape shape;
  LrSchedule schedule;
  int64_t batch_size = 0;
  /// "fp32" (cuda: TF32 GEMMs, fp32 storage) or "bf16" (cuda: bf16 storage
  /// from the gathered embeddings to the logits and the dense gradients,
  /// fp32 arithmetic, fp32 master weights and tables: cuda_model.h; cpu,
  /// one rank: bf16 numbers emulated, CpuPrecision::kBf16).
  std::string precision = "fp32";
  StepPlan step;
  TrainingPlan training;
  /// Several ranks: how the embeddings are split (with the hybrid
  /// embedding, the categories replicated on every rank) and whether the
  /// exchanges overlap compute.
  ShardingOptions sharding;
  /// cuda backend: time cuBLASLt's candidates per GEMM at setup
  /// (gemm_algorithms=tuned or searched) instead of taking the heuristic's first.
  bool tune_gemms = false;
  /// cuda backend: gemm_algorithms=searched: the candidates timed include
  /// the other algorithm ids' configurations (CudaModelOptions::search_gemms).
  bool search_gemms = false;
  /// cuda backend: the interaction on TF32 tensor cores (interaction=tensor_cores).
  bool interaction_tensor_cores = false;
  /// cuda backend, fused: whose MLP epilogues, "cublaslt", "own" or
  /// "own_backward" (epilogues=auto resolved: auto_epilogues).
  std::string epilogues = "cublaslt";
  /// cuda backend, training: the weight gradients and the update's sort on
  /// side streams (side_streams=auto or on; CudaModelOptions::side_streams).
  bool side_streams = true;
  /// cuda backend, training, side streams: how many streams the MLP layers'
  /// weight gradients (and on one GPU their SGD) take turns on, 1 or 2
  /// (wgrad_streams=1 or 2, or auto resolved: auto_wgrad_streams;
  /// CudaModelOptions::wgrad_streams).
  int wgrad_streams = 1;
  /// cuda backend, training: the data-gradient GEMMs read each layer's
  /// weights transposed, copied once a step (dgrad_weights=transposed, or
  /// auto resolved: auto_dgrad_weights_transposed;
  /// CudaModelOptions::dgrad_weights_transposed).
  bool dgrad_weights_transposed = false;
  /// cuda backend, training: the wide layers' weight gradients from dz
  /// transposed (wgrad_dy=transposed; auto: stored;
  /// CudaModelOptions::wgrad_dy_transposed).
  bool wgrad_dy_transposed = false;
  /// cuda backend, training: the step's own kernels launched with
  /// programmatic dependent launch (dependent_launch=on; auto: off), where
  /// the GPU has it (kernels/cuda/dependent_launch.h).
  bool dependent_launch = false;
  /// --mode inference: placement, cache and updates (serve/serve_options.h).
  ServeOptions serve;
  /// Training: where each seed's trained model is written (checkpoint.h;
  /// "{seed}" replaced); "" for nowhere.
  std::string save_model;
};

/// Several ranks: the table placement, the batch split, the frequent
/// categories of the hybrid embedding (from `train`'s first batches), and
/// the bytes each exchange moves per iteration (the hybrid's beside model
/// parallel's, with the reduction), into `facts`; `values`: the bytes of a
/// row's value forward and of its gradient's backward (exchange_values).
/// Throws UsageError when the tables or the batch cannot be split over `ranks`.
void add_rank_facts(int ranks, const DlrmSetup& setup, const Dataset& train, const ValueBytes& values,
                    nlohmann::json& facts);

/// What shapes the cuda backend's step beyond its parameters.
struct CudaStepChoices {
  bool training = true;      ///< A training step (not serving).
  bool fused = false;        ///< --fused in effect.
  bool lookup_fused = false; ///< The lookups inside the interaction (CudaModel's lookup_in_interaction).
  bool nccl = false;         ///< Embeddings exchanged over NCCL.
  bool sync_free = false;    ///< --sync-free in effect (the update waits on no host sync).
  bool split_head = false;   ///< The fused head as two launches (cuda_launches.h's split_head).
  /// wgrad_dy=transposed: the MLP layers whose weight gradients read dz
  /// transposed (cuda_launches.h's mlp_layer_modes).
  int wgrad_dy_layers = 0;
};

/// From this many samples a rank dgrad_weights=auto takes transposed copies
/// in TF32. Measured on an H200 at 32e4a50 (gpu-check's dgrad-weights step,
/// all toggles on, graphed), transposed over stored: 1.03x at 65,536 (the
/// step 0.19 ms faster: the data-gradient GEMMs' layout gap, 1.16x and
/// 1.15x their forward GEMMs at 1590d6a), 0.98x at 2,048 and 0.95x at 512,
/// where the copies (11-21 us of transposes beside the forward, whatever
/// the batch) cost more than the GEMMs' gap saves. The saving grows with
/// the batch, the copy's cost does not: a straight line through 65,536's
/// 0.19 ms meets 2,048's loss near 6,000 samples, so 8,192 (an estimate
/// between two measurements; the step also times 8,192 to check it).
inline constexpr int64_t kTransposedDgradMinBatch = 8192;

/// The narrowest input for which wgrad_dy_transposed transposes a layer's
/// dz for its weight gradient: the copy costs B·out elements read and
/// written, the GEMM's layout penalty grows with B·in·out. At the TF32
/// rates of an H200 at 1590d6a (batch 65,536: the weight gradients 1.38-1.73x
/// their forward GEMMs, the data gradients, one operand K-major, 1.15-1.16x;
/// about 400 TFLOP/s forward, 4.8 TB/s) the saving passes the copy's cost
/// from inputs of about 600: DLRM's 1024-wide inputs (the top MLP's layers
/// 1 and 2), not the 480-wide interaction output or the 512-wide inputs.
/// An estimate from those rates, not a measurement.
inline constexpr int64_t kWgradTransposedMinInput = 1024;

/// Up to this many samples a rank wgrad_streams=auto takes turns between
/// two weight-gradient streams. In the H200 traces at 32e4a50 (batch 512,
/// all toggles on, graphed) the one weight-gradient stream ran every
/// layer's weight gradient, split-K reduce and SGD one after another: the
/// bottom MLP's queued behind the top MLP's two largest (13.4 us each in
/// TF32), and that stream ended 18.7 us after the step's chain in TF32 (7.7
/// in bf16), of a 0.188 ms (0.134) step; with the layers alternating, each
/// layer's weight gradient can start as its dReLU pass ends. Above it the
/// step fills the GPU (99% busy at 65,536) and a second stream only adds
/// contention: one, as measured. Not yet measured with two (gpu-check's
/// dlrm-wgrad-streams step).
inline constexpr int64_t kTwoWgradStreamsMaxBatch = 2048;

/// wgrad_streams=auto: 2 up to kTwoWgradStreamsMaxBatch samples a rank, 1 above.
int auto_wgrad_streams(int64_t rank_batch);

/// dgrad_weights=auto: transposed copies for TF32 from
/// kTransposedDgradMinBatch samples a rank (a TF32 tensor-core GEMM on
/// Hopper takes its operands K-major only: kernels/cuda/transpose.h),
/// unless cuBLASLt's epilogues chain the backward (its DRELU_BGRAD
/// data-gradient GEMMs stay as measured); stored in bf16, whose tensor
/// cores take 16-bit operands either way round.
bool auto_dgrad_weights_transposed(const std::string& precision, const std::string& epilogues, int64_t rank_batch);

/// The cuda backend's step in the result: its precision and the
/// perflab_dlrm_interaction, _epilogues, _side_streams, _dgrad_weights,
/// _lookup and _precision hyperparameters, each saying what that choice ran.
void describe_cuda_step(const DlrmSetup& setup, const CudaStepChoices& choices, StepPlan& step);

class DlrmBenchmark final : public TrainableBenchmark {
 public:
  /// Prepares the data described by the context's parameters (throws
  /// UsageError for invalid parameters or data).
  explicit DlrmBenchmark(const RunContext& ctx);
  StepPlan step_plan() const override { return setup_.step; }
  TrainingPlan training() const override { return setup_.training; }
  std::unique_ptr<TrainableModel> start_model(uint64_t seed) override;
  /// --mode inference: the model initialised from `seed` (or loaded from
  /// serve_model) serving the held-out samples, its embeddings placed as
  /// the serving parameters say (workloads/dlrm/serve/).
  std::unique_ptr<InferenceEngine> start_inference(uint64_t seed, int max_batch) override;

 private:
  // The constructor's steps, in order.
  void read_backend_choices(const ParamValues& p, int ranks);
  std::optional<double> load_data(const ParamValues& p, nlohmann::json& data_facts);
  void read_model(const ParamValues& p, const RunContext& ctx);
  void choose_for_the_batch(const ParamValues& p, const RunContext& ctx);
  void plan_training(const ParamValues& p, const RunContext& ctx, std::optional<double> ceiling,
                     nlohmann::json data_facts);
  void describe_backend(const RunContext& ctx);

  collectives::Communicator& comm_;
  Backend backend_ = Backend::kCpu;
  ToggleSet toggles_;
  DlrmSetup setup_;
  bool nccl_ = false;  ///< cuda backend: embeddings and gradients over NCCL (exchange=nccl, or auto on several ranks)
#ifdef PERFLAB_DLRM_CUDA
  DlrmNccl nccl_comm_;  ///< The NCCL communicator every seed's model uses (null comm: one GPU).
#endif
  Dataset train_;
  Dataset eval_;
};

}  // namespace perflab::dlrm
