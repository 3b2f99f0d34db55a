// The DLRM model on one GPU: the CUDA twin of CpuModel (model.h), built from
// the operators in kernels/cuda and initialised by copying a CpuModel's
// parameters, so that both start identical for a seed.
//
//   dense [B, num_dense] (rows padded: bottom_input_width) -> bottom MLP (Linear+ReLU, cuBLASLt) -> x [B, D]
//   ids   [B, T]         -> EmbeddingForward (all tables, one allocation) -> e [B, T, D]
//   (x, e) -> InteractionForward -> top MLP -> logits -> BceWithLogits (loss stays on the device)
//   (fused, one GPU: no EmbeddingForward and no e; the interaction reads the
//   ids' rows from the tables itself, forward and backward)
//   backward: top MLP, InteractionBackward, bottom MLP; optimizer: SgdUpdate over every dense
//   parameter (one flat allocation) and EmbeddingBackwardSgd (deduplicated sparse update).
//
// Precision (fixed at construction):
//   kTf32  every Linear tensor fp32, GEMMs on TF32 tensor cores (fp32 accumulate).
//   kBf16  the Linear layers store x, W, b, y and their gradients in bf16 (fp32
//          accumulate); the master weights and the SGD are fp32 (SgdUpdate
//          reads the GEMMs' bf16 gradients and writes the bf16 copies the
//          GEMMs read). The interaction reads the bottom MLP's bf16 output
//          and the embeddings (gathered as bf16 when the model trains its
//          own tables; fp32 when serving), computes in fp32 and writes the
//          top MLP's bf16 input; backward the same way round, the embedding
//          gradient bf16 (the sparse update's input, below). The loss (or the fused
//          head) reads bf16 and writes a bf16 gradient (fp32/double
//          arithmetic). The tables stay fp32; the one cast left in a step is
//          the dense input's.
//          The embedding gradient is bf16 too (written by the interaction,
//          rounded to nearest even, and read by the sparse update; the CPU
//          emulation rounds it there as well), and summed per row in fp32.
//          Across ranks the embeddings and their gradients are exchanged
//          as bf16 and the dense gradient is all-reduced in
//          bf16: NCCL rounds each partial sum to bf16 on the way, so with R
//          ranks a gradient carries up to R - 1 bf16 roundings (at most 2^-8
//          relative each) where an fp32 all-reduce of bf16 values had none;
//          the master weights and the SGD stay fp32.
// Fused: fused epilogues, as CudaModelOptions::epilogues says: cuBLASLt's
// (bias+ReLU with a bitmask forward; DRELU_BGRAD on the dgrad of the layer
// above and BGRADB on wgrad, chained as linear.h describes) or our own
// passes (bias_act.h: bias+ReLU in one pass, dReLU+bias-gradient in one), and
// the top MLP's last layer (K -> 1), the loss and that
// layer's backward in one kernel (kernels/cuda/logit_head.h, when the layer
// below is at most 2048 wide: four launches become one, x read once), and
// on one GPU without a communicator the embedding lookup inside the
// interaction's kernels (InteractionLookup: no gather launch, and the
// [B, T, D] tensor neither written nor read back; the forward writes the
// update's sort keys as the gather did; bit for bit the gathered results),
// versus separate bias/ReLU/bias-gradient kernels, the last layer's GEMMs
// around the loss kernel, and the gather.
//
// Across ranks (CudaModelOptions::comm, an NCCL communicator of P ranks):
// the same step as ShardedModel's model parallel one (sharded_model.h), on
// the device. This rank stores only its tables (place_tables); a step
//   1. picks its tables' ids out of the global batch and looks them up for
//      all B samples: [B, T_r, D], already per-peer segments (sample-major);
//   2. exchanges them (one grouped NCCL send/receive, this rank included)
//      into per-peer segments of its n_r samples, unpacked to [n_r, T, D]
//      (exchange_layout.h; cuda_exchange.h);
//   3. runs the bottom MLP, interaction, top MLP and BCE on its n_r samples,
//      the loss gradient scaled n_r / B, and backward;
//   4. packs the embedding gradients into per-peer segments and sends them
//      back the reverse way: the owner gets [B, T_r, D] for its tables;
//   5. all-reduces (sum) the flat dense gradient (fp32; bf16 in bf16), then the dense SGD
//      and the owner's sparse SGD over all B samples.
// Every buffer and every transfer list is made at construction and NCCL
// calls are stream-ordered, so the step stays capturable. With one rank it
// computes what the model without a communicator computes, bit for bit:
// the same kernels but the lookup (a gather, where the fused model without
// a communicator looks up inside the interaction), the exchanges copies
// through NCCL, the all-reduce of one rank.
//
// Every step has the batch size given at construction (the cuBLASLt plans are
// made for it). train_step and forward_logits only enqueue work on the given
// stream: nothing allocates, and with EmbeddingUpdateMode::kSyncFree nothing
// synchronises with the host, so a whole step can be captured in a CUDA graph
// (the learning rate is read from device memory, learning_rate()).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/communicator.h"
#include "harness/launch_plan.h"
#include "kernels/cuda/bce.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/interaction.h"
#include "kernels/cuda/linear.h"
#include "kernels/cuda/logit_head.h"
#include "kernels/cuda/raii.h"
#include "kernels/cuda/sgd.h"
#include "kernels/cuda/transpose.h"
#include "workloads/dlrm/exchange_layout.h"
#include "workloads/dlrm/dense_layout.h"
#include "workloads/dlrm/model.h"
#include "workloads/dlrm/sharded_model.h"

namespace perflab::dlrm {

/// How a CudaModel runs; fixed at construction.
struct CudaModelOptions {
  int64_t batch = 0;  ///< Samples in every step and every forward_logits call.
  kernels::cuda::Precision precision = kernels::cuda::Precision::kTf32;
  /// Fused epilogues (epilogues below), the fused last layer + loss
  /// (fused_head()) and, without a communicator, the lookup inside the interaction
  /// (lookup_in_interaction()); or separate bias/ReLU kernels, the last
  /// layer's GEMMs and the gather.
  bool fused = true;
  /// Fused: whose kernels run the MLP layers' bias, ReLU and their
  /// gradients (kernels/cuda/linear.h's Epilogues): cuBLASLt's epilogues
  /// chained through DRELU_BGRAD, or our own passes (own: forward and
  /// backward; own_backward: the backward, the forward in cuBLASLt's
  /// RELU_BIAS epilogue).
  kernels::cuda::Epilogues epilogues = kernels::cuda::Epilogues::kCublasLt;
  kernels::cuda::EmbeddingUpdateMode update_mode = kernels::cuda::EmbeddingUpdateMode::kSyncFree;
  /// Model-parallel embeddings over this communicator's ranks (device
  /// buffers: NCCL; see the file comment); batch is then the global batch.
  /// Null: every table on this GPU, no exchange. Must outlive the model.
  collectives::Communicator* comm = nullptr;
  /// With comm: each embedding exchange on a second stream, forked from
  /// and joined back into the step's stream with events, so the bottom MLP
  /// (forward and backward) runs while the embeddings and their gradients
  /// travel. Off: everything in order on the step's stream.
  bool overlap = false;
  /// Times each GEMM's cuBLASLt heuristic candidates at setup on random
  /// operands and keeps the fastest (gemm_choices()); off: the heuristic's
  /// first, the same algorithm on every run.
  bool tune_gemms = false;
  /// With tune_gemms: each GEMM's candidates widened first by the other
  /// algorithm ids' configurations (kernels/cuda/linear_plan.h's
  /// LtGemm::search), up to kSearchMostCandidates a GEMM.
  bool search_gemms = false;
  /// Serving (workloads/dlrm/serve/cuda_engine.h): no tables on this GPU;
  /// the caller writes each batch's embeddings to embedding_input() and
  /// forward_logits starts at the bottom MLP and the interaction. Forward
  /// only: train_step refuses. One GPU (no comm).
  bool external_embeddings = false;
  /// The interaction on TF32 tensor cores (kernels/cuda/interaction.h:
  /// InteractionArguments::tensor_cores; needs T + 1 <= 32 and dim % 16 == 0)
  /// instead of fp32 CUDA cores.
  bool interaction_tensor_cores = false;
  /// Training: independent work on two more streams, forked from and joined
  /// back into the step's stream with events (captured with it under CUDA
  /// graphs): each MLP layer's weight-gradient GEMM beside the data-gradient
  /// chain, on one GPU followed there by the layer's SGD once its dx GEMM
  /// has read its weights (joined before the optimizer, which then updates
  /// only the fused head's weight and bias), and the embedding update's sort
  /// from the interaction on, beside the top MLP, the loss and the backward;
  /// on one GPU with the sync-free update the update itself follows there
  /// once the interaction's backward is done, beside the bottom MLP's
  /// backward (updates_beside), else it waits for the sort in the optimizer.
  /// Off: all in order on the step's stream. The same arithmetic and the
  /// same bits either way (up to kSplitHeadMaxBatch samples the fused head
  /// is two launches, its sums on the weight gradients' stream:
  /// split_head_).
  bool side_streams = false;
  /// Training with side streams: the weight-gradient streams the MLP layers
  /// take turns on, 1 or 2 (in the backward's order, the layers alternate:
  /// the top MLP's last layer and the fused head's sums, the dgrad
  /// transposes beside the forward on the first), each with its own cuBLASLt
  /// workspace and join. The same bits either way.
  int wgrad_streams = 1;
  /// Training: every MLP layer with a data-gradient GEMM reads a copy of its
  /// weights transposed there (kernels/cuda/linear.h: dgrad_reads_w_t),
  /// written at the start of each training step by one launch for up to
  /// 16 layers (kernels/cuda/transpose.h), on the weight gradients' stream with
  /// side streams, beside the forward, and joined before the backward. Off:
  /// the data-gradient GEMMs read the weights themselves ("NN").
  bool dgrad_weights_transposed = false;
  /// Training: every MLP layer whose input is at least
  /// kWgradTransposedMinInput wide computes its weight gradient from dz
  /// transposed (kernels/cuda/linear.h: wgrad_reads_dy_t), written by one
  /// launch just before that GEMM, on its stream; each such layer holds a
  /// [out, B] buffer for it. Off: the weight-gradient GEMMs read dz as the
  /// data gradient does.
  bool wgrad_dy_transposed = false;
  /// bf16: the training steps' batches bring their dense rows already in
  /// bf16, padded to dense_input_width() (DeviceBatch::dense_bf16), so the
  /// declared step launches no cast (train_step refuses a batch without
  /// them). Other batches (evaluation's) may still come in fp32.
  bool dense_input_bf16 = false;
  /// Set: the embedding tables are drawn on the device from this seed
  /// (CpuModel's initial tables under the same seed, bit for bit:
  /// init_random.h), so the constructor's `init` need hold none
  /// (EmbeddingStorage::kExternal): no host tables to fill and upload.
  /// Unset: the tables are copied from `init`.
  std::optional<uint64_t> table_seed;
};

/// One GEMM's choice when CudaModelOptions::tune_gemms is on.
struct GemmTuning {
  std::string layer;  ///< "bottom 0 (13 -> 512)", ...
  kernels::cuda::GemmChoice choice;
};

/// "tf32" or "bf16", "fused" or "unfused", "sync-free" or "synchronising".
std::string describe(const CudaModelOptions& options);

/// Device pointers to one batch (options.batch samples), as a Dataset lays
/// it out. Across ranks, dense and labels are this rank's slice only
/// (CudaModel::local_batch() samples from first_sample()); ids are global.
struct DeviceBatch {
  const float* dense = nullptr;   ///< [local batch, num_dense] rows dense_stride apart; 16-byte aligned (cuBLASLt).
  const int32_t* ids = nullptr;   ///< [batch, num_tables], each inside its table (not checked).
  const float* labels = nullptr;  ///< [local batch]; only train_step reads it.
  /// Floats from one row of dense to the next: 0 or num_dense (copied into
  /// padded rows each step), or CudaModel::dense_input_width() with zero
  /// padding (read in place); any other value is refused.
  int64_t dense_stride = 0;
  /// Instead of dense: the rows already in bf16, dense_input_width() wide
  /// with zero padding, 16-byte aligned; a bf16 model reads them in place
  /// (an fp32 model refuses them).
  const void* dense_bf16 = nullptr;
};

/// The loss accumulated on the device since the last take_loss.
struct DeviceLoss {
  double sum = 0;          ///< Sum of the per-step mean losses.
  bool nonfinite = false;  ///< Some step's mean loss was not finite.
  /// Which: steps since the previous take_loss before the first non-finite
  /// one (counted on the device); -1 when all were finite.
  int64_t first_nonfinite = -1;
};

class CudaModel {
 public:
  /// Copies `init`'s parameters to the current device and plans every layer.
  /// Throws UsageError when an operator cannot run this shape (with its
  /// reason) and CudaError on a CUDA failure. Synchronises once (setup).
  CudaModel(CpuModel& init, const CudaModelOptions& options);
  ~CudaModel();
  CudaModel(const CudaModel&) = delete;
  CudaModel& operator=(const CudaModel&) = delete;

  const CudaModelOptions& options() const { return options_; }
  const ModelShape& shape() const { return shape_; }

  /// Samples this rank's MLPs see per step (options.batch without a
  /// communicator), and the first of them in the global batch.
  int64_t local_batch() const { return local_; }
  int64_t first_sample() const { return first_; }
  /// Whether this GPU holds table `table` (every table without a communicator).
  bool owns(int table) const;
  /// Floats of the flat dense parameter (and gradient) buffer, padding
  /// included: what the gradient all-reduce moves.
  int64_t dense_count() const { return layout_.count; }
  /// The bottom MLP's padded input width (bottom_input_width): a batch whose
  /// dense rows are this far apart, padding zero, needs no copy.
  int64_t dense_input_width() const { return bottom_in_; }
  /// Bytes the dense gradient all-reduce moves: dense_count() values, fp32
  /// or (bf16) the GEMMs' bf16 gradients.
  size_t gradient_all_reduce_bytes() const {
    return static_cast<size_t>(layout_.count) * (bf16_ ? 2 : sizeof(float));
  }
  /// This model's communicator (null without one).
  collectives::Communicator* communicator() const { return options_.comm; }

  /// Every GEMM's timed candidates and choice (empty unless tune_gemms).
  const std::vector<GemmTuning>& gemm_choices() const { return gemm_choices_; }

  /// The device float both SGD updates read as the learning rate.
  float* learning_rate() { return lr_.data(); }

  /// Enqueues one SGD step on `stream`: forward, loss (added to the device
  /// accumulator), backward, dense and sparse updates at *learning_rate().
  void train_step(const DeviceBatch& batch, cudaStream_t stream);

  /// What train_step enqueues, in order (cuda_launches.h).
  LaunchPlan step_launches() const;

  /// Enqueues the forward pass and copies the fp32 logits of the batch
  /// (local_batch() of them: this rank's samples) to `logits` (device
  /// memory). Touches no parameter and no loss. Across ranks it exchanges
  /// embeddings: every rank calls it.
  void forward_logits(const DeviceBatch& batch, float* logits, cudaStream_t stream);

  /// With CudaModelOptions::external_embeddings: the [batch, T, D] fp32
  /// buffer the next forward_logits reads as the batch's embeddings.
  float* embedding_input() {
    if (!options_.external_embeddings) throw std::logic_error("CudaModel::embedding_input: not a serving model");
    return emb_.data();
  }

  /// Reads the loss accumulator, the non-finite flag and the step counter
  /// (one counted host sync on `stream`) and resets them.
  DeviceLoss take_loss(cudaStream_t stream);

  /// Downloads dense parameter `index` (CpuModel::dense_parameters order) as
  /// fp32 master values (checks and tests only): waits for the whole device
  /// first, every stream of the model's included.
  std::vector<float> dense_parameter(size_t index) const;
  /// Downloads row `row` of embedding table `table` (after the whole device
  /// is done, as dense_parameter); across
  /// ranks only an own table's (std::out_of_range otherwise).
  std::vector<float> embedding_row(int table, int64_t row) const;
  /// Downloads every parameter into `out` (a CpuModel of the same shape:
  /// dense values and every table), synchronously: after training, to save
  /// it. One GPU only (across ranks a model holds only its own tables:
  /// std::logic_error).
  void copy_to(CpuModel& out) const;
  /// The first parameter tensor (dense, in CpuModel::dense_parameters order,
  /// then embedding tables) holding a NaN or an infinity, by name; "" when
  /// none. Downloads them (synchronous: after a divergence, never in a step).
  std::string first_nonfinite_tensor() const;

 private:
  struct Layer;

  void build_mlp(const std::vector<int>& widths, int64_t in, bool bottom);
  void tune_gemms();
  void check_operators();
  const void* first_input(const DeviceBatch& batch) const;
  /// The batch's dense features into the bottom MLP's padded input rows
  /// (cast to bf16 in bf16); nothing when the rows need no padding or cast
  /// (cuda_model_input.cc, with first_input).
  void pad_dense_input(const DeviceBatch& batch, cudaStream_t stream);
  /// A training step's batch is the kind its declared launches assume
  /// (dense_input_bf16); throws std::logic_error otherwise.
  void check_step_input(const DeviceBatch& batch) const;
  /// `sort_ahead`: a training step's, which starts the update's sort on its
  /// stream once the interaction has written the keys (sorts_ahead()).
  void forward(const DeviceBatch& batch, cudaStream_t stream, bool sort_ahead = false);
  /// side_streams: whether the update's sort runs on its own stream, and
  /// the weight gradients' side stream (null when off).
  bool sorts_ahead() const { return sort_stream_ != nullptr; }
  const kernels::cuda::SideStream* wgrad_side() const { return wgrad_stream_ ? &wgrad_side_ : nullptr; }
  /// The weight-gradient stream of the backward's `turn`-th layer (0: the
  /// top MLP's last): with two (wgrad_streams), odd turns take the second.
  const kernels::cuda::SideStream* wgrad_side_for(size_t turn) const {
    return wgrad_stream2_ && turn % 2 == 1 ? &wgrad_side2_ : wgrad_side();
  }
  /// Side streams on one GPU: each MLP layer's SGD on the weight gradients'
  /// stream once its dx GEMM has read its weights (across ranks the
  /// gradients are all-reduced first, in the optimizer). The fused head's
  /// weight and bias stay in the update's launch.
  bool sgd_in_backward() const { return wgrad_stream_ != nullptr && options_.comm == nullptr; }
  /// Side streams on one GPU, sync-free: the embedding update (with the
  /// fused head's SGD in its launch) runs on the sort's stream as soon as
  /// the interaction's backward has written the embedding gradients, beside
  /// the bottom MLP's backward (and, split_head_, the head's sums on the
  /// weight gradients' stream); the optimizer only waits for it. (The
  /// synchronising update waits on the host for its sort: there it would
  /// hold back the bottom MLP's launches, so it stays in the optimizer.)
  bool updates_beside() const {
    return sgd_in_backward() && sorts_ahead() && options_.update_mode == kernels::cuda::EmbeddingUpdateMode::kSyncFree;
  }
  /// The layer's SGD on `side`, the stream its weight gradient ran on.
  void update_layer(const Layer& layer, cudaStream_t stream, const kernels::cuda::SideStream& side);
  /// dgrad_weights_transposed: the layers' weights transposed into their
  /// copies on `stream` (train_step puts it on the weight gradients' stream
  /// beside the forward, when there is one).
  void transpose_weights(cudaStream_t stream);
  /// Where a layer's transposed weights live: weights_t_ at the slot's offset.
  void* transposed_weights(const DenseSlot& s);
  /// The embedding update and what is left of the dense SGD, on `stream`
  /// (after the sort's stream, or on it).
  void update_parameters(const DeviceBatch& batch, cudaStream_t stream);
  /// The lookups (and across ranks their exchange) into emb_ or emb_bf16_,
  /// on `stream` (not called with lookup_fused_: the interaction looks up).
  void embeddings(const DeviceBatch& batch, cudaStream_t stream);
  bool overlapped() const { return side_ != nullptr; }
  /// The side stream waits for `stream`'s work so far; `stream` for the side's.
  void fork(cudaStream_t stream);
  void join(cudaStream_t stream);
  void backward(const DeviceBatch& batch, cudaStream_t stream);
  void optimizer(const DeviceBatch& batch, cudaStream_t stream);
  void* weights(const DenseSlot& s);
  void* gradients(const DenseSlot& s);
  void setup_exchange();
  kernels::cuda::EmbeddingArguments embedding_arguments(const int32_t* ids);
  /// The interaction over `batch` samples, forward and backward pointers,
  /// in the model's stored types; with lookup_fused_ it reads the batch's
  /// `ids` rows from the tables (and its forward writes the update's sort
  /// input), else the gathered emb_ / emb_bf16_.
  kernels::cuda::InteractionArguments interaction_arguments(int64_t batch, const int32_t* ids);
  /// The loss on the top MLP's logits (bf16 in bf16), writing its dlogit.
  kernels::cuda::BceArguments loss_arguments(const float* labels);
  /// The fused last layer and loss (fused_head_): labels for a step,
  /// logits for an evaluation.
  kernels::cuda::LogitHeadArguments head_arguments(const float* labels, float* logits);
  /// The layers of an MLP that run as Linear layers: all, but the top MLP's
  /// last when fused_head_ (that Layer has no Linear and no buffers).
  size_t mlp_layers(bool bottom) const { return bottom ? bottom_.size() : top_.size() - (fused_head_ ? 1 : 0); }
  /// The dense SGD over the flat parameters (bf16 gradients in bf16).
  kernels::cuda::SgdArguments dense_update() { return dense_update({0, layout_.count}); }
  /// The update of one range of the flat buffers (a layer's: DenseLayout::layer).
  kernels::cuda::SgdArguments dense_update(const DenseRange& range);
  /// The gather writes bf16 embeddings (emb_bf16_; across ranks the
  /// exchanged rows are bf16 too): a bf16 model that trains its own tables.
  bool bf16_embeddings() const { return bf16_ && !options_.external_embeddings; }
  /// The interaction writes the embedding gradient in bf16, across ranks it
  /// goes back to the tables' owners in bf16, and the sparse update reads
  /// it so (half the bytes each way): a bf16 model that trains its tables.
  bool bf16_embedding_gradients() const { return bf16_embeddings(); }
  /// Bytes of one looked-up embedding element.
  size_t embedding_bytes() const { return bf16_embeddings() ? 2 : sizeof(float); }
  /// First row of own table `table` in tables_ (std::out_of_range when not own).
  int64_t own_first_row(int table) const;

  ModelShape shape_;
  CudaModelOptions options_;
  bool bf16_ = false;
  bool fused_head_ = false;  // the top MLP's last layer and the loss are one kernel (logit_head.h)
  /// The fused head as two launches, its sums on the weight gradients'
  /// stream (split_head in cuda_launches.h), with their own workspace (the
  /// step's is the next operators') and a join for the update.
  bool split_head_ = false;
  // The interaction reads the tables itself (lookup_in_interaction): no gather, no emb_.
  bool lookup_fused_ = false;
  int num_tables_ = 0;
  int64_t interaction_width_ = 0;  // the interaction's output width (dim + pairs)
  int64_t top_in_ = 0;             // its rows in the buffers, padded (top_input_width)
  int64_t bottom_in_ = 0;          // the dense features' rows, padded (bottom_input_width)
  int64_t total_rows_ = 0;  // rows of the tables on this GPU
  int64_t local_ = 0;       // samples of the MLPs: options.batch, or this rank's slice
  int64_t first_ = 0;       // the slice's first global sample
  std::vector<int> mine_;   // the tables on this GPU, ascending (all without a communicator)
  struct LtDeleter {
    void operator()(cublasLtContext* handle) const;
  };
  std::unique_ptr<cublasLtContext, LtDeleter> lt_;  // declared before the layers: outlives them

  template <typename T>
  using Buffer = kernels::cuda::DeviceBuffer<T>;

  // Parameters: every dense tensor in one flat allocation (dense_layout.h).
  DenseLayout layout_;
  Buffer<float> dense_;            // fp32 master values
  Buffer<float> grad_;             // the GEMMs' fp32 gradients (tf32 only)
  Buffer<uint16_t> dense_bf16_;    // bf16 copies the GEMMs read (bf16 only)
  Buffer<uint16_t> grad_bf16_;     // the GEMMs' bf16 gradients (bf16 only)
  // dgrad_weights_transposed: each weight the GEMMs read, transposed, at its
  // slot's offset (elements of the GEMMs' type); what one launch writes.
  Buffer<uint8_t> weights_t_;
  std::vector<kernels::cuda::TransposeBatch> transposes_;  // in launches of up to kMaxTransposeMatrices
  Buffer<float> tables_;           // [total_rows, D]
  Buffer<int64_t> table_offsets_;  // [T]
  Buffer<float> lr_;               // [1]
  Buffer<float> loss_state_;       // [0]: loss sum (float), [1]: non-finite flag, [2]: step counter (int32
                                   // bits), [3...]: the loss kernel's block counters (uint32 bits, left 0;
                                   // LogitHead::kCounters of them, BCE's one the first)

  std::vector<std::unique_ptr<Layer>> bottom_, top_;
  std::vector<GemmTuning> gemm_choices_;

  // Activations and gradients outside the Linear layers.
  Buffer<float> emb_;                 // [B, T, D] fp32 (unless bf16_embeddings())
  Buffer<uint16_t> emb_bf16_;         // [B, T, D] bf16 (bf16_embeddings())
  Buffer<float> demb_;                // [B, T, D]; or, bf16_embedding_gradients():
  Buffer<uint16_t> demb_bf16_;        // [B, T, D] bf16
  Buffer<float> inter_, dinter_;      // [B, W] tf32 only
  Buffer<float> dense_in_;            // [B, bottom_in_]: fp32, when num_dense needs padding
  // bf16 only.
  Buffer<uint16_t> dense_in_bf16_;    // [B, bottom_in_]: the cast input
  Buffer<uint16_t> inter_bf16_;       // [B, W]: the interaction's output, the top MLP's input
  Buffer<uint16_t> dinter_bf16_;      // [B, W]: its gradient

  Buffer<uint8_t> workspace_;  // shared by every operator (they run one after another)
  // The embedding update's alone: the gather (or, lookup_fused_, the
  // interaction) writes its sort keys there.
  Buffer<uint8_t> update_workspace_;
  // With lookup_fused_: where the sort input lies in update_workspace_.
  kernels::cuda::EmbeddingSortInput lookup_sort_;

  // Across ranks (options.comm): the exchange's buffers and transfer lists.
  TablePlacement placement_;
  Buffer<int32_t> own_columns_;       // [T_r]: the own tables' columns of the ids
  Buffer<ExchangeSlot> slots_dev_;    // [T]: exchange_slots of the placement
  Buffer<int32_t> own_ids_;           // [B, T_r]
  // [B, T_r, D]: own lookups (fp32, or bf16 with bf16_embeddings(): the
  // exchange moves bf16), and their gradients from every rank (the same type).
  Buffer<uint8_t> looked_up_;
  Buffer<uint8_t> grad_in_;
  // [n_r, T, D] in per-peer segments: received rows and the gradients sent (looked_up_'s type).
  Buffer<uint8_t> received_;
  Buffer<uint8_t> grad_out_;
  std::vector<collectives::PeerTransfer> forward_transfers_, backward_transfers_;
  std::unique_ptr<kernels::cuda::Stream> side_;        // overlap: the exchanges' stream
  std::unique_ptr<kernels::cuda::Event> fork_, join_;  // overlap: its fork and join

  // side_streams: the weight gradients' stream (its own cuBLASLt workspace,
  // a fork event per layer's use, a join), and the update's stream (its
  // sort from the forward, the update from the interaction's backward).
  std::unique_ptr<kernels::cuda::Stream> wgrad_stream_, sort_stream_;
  std::unique_ptr<kernels::cuda::Event> wgrad_fork_, wgrad_join_, sgd_fork_, sort_fork_, sort_join_, update_fork_;
  std::unique_ptr<kernels::cuda::Event> head_join_;  // split_head_: the head's sums are done
  Buffer<uint8_t> head_workspace_;                                // split_head_
  Buffer<uint8_t> wgrad_workspace_;
  kernels::cuda::SideStream wgrad_side_;
  // wgrad_streams = 2: the second weight-gradient stream, its workspace,
  // fork and join (the layers take turns; wgrad_side_for).
  std::unique_ptr<kernels::cuda::Stream> wgrad_stream2_;
  std::unique_ptr<kernels::cuda::Event> wgrad_fork2_, wgrad_join2_;
  Buffer<uint8_t> wgrad_workspace2_;
  kernels::cuda::SideStream wgrad_side2_;
  /// The blocks a layer's SGD beside the backward may take (two a SM; see
  /// update_layer).
  int64_t beside_sgd_blocks_ = 0;
};

}  // namespace perflab::dlrm
