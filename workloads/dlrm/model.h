// The DLRM model on the CPU: bottom MLP over the dense features, one
// embedding table per categorical feature, dot interaction, top MLP, and a
// sigmoid + binary cross-entropy loss, trained with plain SGD (dense and
// sparse embedding updates at one learning rate).
//
//   dense [B, num_dense] -> bottom MLP (Linear+ReLU on every layer) -> x [B, D]
//   ids   [B, T]         -> embeddings                               -> e [B, T, D]
//   (x, e) -> dot interaction -> [B, D + (T+1)T/2]
//          -> top MLP (Linear+ReLU on all but the last layer)       -> logit [B]
//
// Built from the kernels in kernels/cpu. Initialisation is a pure function of
// the seed (independent of thread count); training is bit-reproducible for
// the same seed, batches and thread count. Buffers grow to the largest batch
// seen and are reused, so the steady training path does not allocate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/default_init_allocator.h"
#include "kernels/cpu/embedding.h"
#include "workloads/dlrm/batch.h"

namespace perflab::dlrm {

/// Layer sizes of a DLRM. Checked by CpuModel's constructor.
struct ModelShape {
  int num_dense = 13;                ///< Dense features per sample.
  std::vector<int64_t> table_sizes;  ///< Rows of each embedding table (T tables).
  int embed_dim = 16;                ///< D: embedding width, also the bottom MLP's output.
  std::vector<int> bottom_mlp;       ///< Layer widths; the last must equal embed_dim.
  std::vector<int> top_mlp;          ///< Layer widths; the last must be 1 (the logit).
};

/// Trainable floats of a model of this shape: MLP weights and biases plus
/// every embedding row.
int64_t parameter_count(const ModelShape& shape);
/// The MLPs' share of parameter_count: weights and biases, no embedding row.
int64_t dense_parameter_count(const ModelShape& shape);

/// Forward FLOPs per sample: 2 x the multiply-adds of the MLP GEMMs and of the
/// interaction's dot products (bias adds and activations not counted).
double forward_flops_per_sample(const ModelShape& shape);

/// FLOPs of one training iteration on `batch` samples: forward plus
/// backward, the backward counted as twice the forward (dgrad and wgrad).
double training_flops_per_iteration(const ModelShape& shape, int64_t batch);

/// A lower bound on the bytes one training iteration moves to and from
/// memory, with `value_bytes` per stored value (4 for fp32):
///   embeddings: every looked-up row read in the forward pass and read and
///     written by the sparse update (3 x batch x tables x dim values; rows
///     shared within a batch are counted each time, so with heavy reuse the
///     true floor is lower);
///   dense parameters: read in forward, read in backward, read and written
///     by the update (4 x parameters);
///   inputs: dense features, ids and labels, read once (4 bytes each).
/// Activations are assumed to stay on chip.
double training_bytes_floor_per_iteration(const ModelShape& shape, int64_t batch, int value_bytes);

/// Fills `values` [rows, dim] with table `table`'s initial rows for `seed`:
/// U(-sqrt(1/rows), sqrt(1/rows)), the same values CpuModel starts from, so
/// a rank that owns only some tables initialises them exactly as one
/// process holding every table does.
void initialise_table(uint64_t seed, int table, int64_t rows, int64_t dim, float* values);

/// Where a CpuModel's embedding vectors come from.
enum class EmbeddingStorage {
  kTables,    ///< The model holds every table and looks ids up itself.
  kExternal,  ///< No tables: the caller fills embeddings_buffer() before each
              ///< pass (sharded_model.h: the tables live on several ranks).
};

/// The arithmetic a CpuModel trains in.
enum class CpuPrecision {
  kFp32,  ///< fp32 everywhere.
  /// bf16 emulated in fp32 storage, rounded where the CUDA bf16 path stores
  /// bf16 (kernels/cpu/bf16.h): the MLPs' GEMM operands (weights from fp32
  /// master weights, activations, gradients; accumulation in fp32), the
  /// dense input, the interaction's inputs and output, the logits and the
  /// embedding gradients (rounded to nearest even); the embedding tables
  /// hold bf16 values, updated with stochastic rounding (an update below
  /// half a bf16 step would otherwise always be lost, and a hot row's
  /// small steps with it). SGD, biases, the loss and the master weights
  /// stay fp32. Emulates the numbers, not the speed or the memory.
  kBf16,
};

/// A dense parameter tensor and its gradient (from the last forward_backward).
struct DenseParameter {
  std::string name;                 ///< "bottom.<layer>.weight", "top.<layer>.bias", ...
  float* value = nullptr;           ///< Row-major; weights are [out, in].
  const float* gradient = nullptr;  ///< Same layout as value.
  int64_t size = 0;                 ///< Floats in value and in gradient.
};

/// The DLRM model, trained and evaluated on the CPU.
class CpuModel {
 public:
  /// Builds and initialises the model, deterministically from `seed`: MLP
  /// weights ~ N(0, 2/(in+out)), biases ~ N(0, 1/out), embeddings ~
  /// U(-sqrt(1/rows), sqrt(1/rows)). Throws UsageError on an invalid shape.
  /// With EmbeddingStorage::kExternal no table is allocated and only the
  /// *_external passes may be used.
  CpuModel(ModelShape shape, uint64_t seed, EmbeddingStorage storage = EmbeddingStorage::kTables,
           CpuPrecision precision = CpuPrecision::kFp32);
  CpuModel(const CpuModel&) = delete;
  CpuModel& operator=(const CpuModel&) = delete;
  CpuModel(CpuModel&&) = default;
  CpuModel& operator=(CpuModel&&) = default;
  ~CpuModel() = default;

  /// The shape the model was built with.
  const ModelShape& shape() const { return shape_; }
  CpuPrecision precision() const { return precision_; }

  /// Grows the activation and gradient buffers to hold `batch_size` samples
  /// now, so later calls with batches up to that size never allocate.
  void reserve_batch(int64_t batch_size);

  /// One SGD step: forward_backward then apply_gradients. Returns the mean
  /// BCE loss of the batch before the update. Throws UsageError on ids out
  /// of range or an empty batch.
  double train_step(const BatchView& batch, float learning_rate);

  /// Forward and backward pass; keeps the gradients (see dense_parameters
  /// and embedding_row_gradient) without changing any parameter. Returns the
  /// mean BCE loss.
  double forward_backward(const BatchView& batch);

  /// Applies the gradients of the last forward_backward once:
  /// p -= learning_rate * dp for the dense parameters and for each embedding
  /// row the batch touched (once per occurrence of its id). Throws
  /// std::logic_error when no gradients are pending.
  void apply_gradients(float learning_rate);

  /// Writes σ(logit) of each sample to probabilities [batch.size]. Does not
  /// disturb pending gradients. Labels are not read.
  void predict(const BatchView& batch, float* probabilities);

  /// Embedding vectors of the next external pass: [batch_size, T, D], for
  /// the caller to fill (grows the buffers like reserve_batch).
  float* embeddings_buffer(int64_t batch_size);

  /// The bottom MLP's forward pass on `batch` now, ahead of the
  /// embeddings (a sharded step runs it while they travel): the next
  /// external pass on this batch starts at the interaction.
  void forward_bottom_external(const BatchView& batch);

  /// Forward and backward pass on the embeddings the caller put in
  /// embeddings_buffer(batch.size) (batch.categorical is not read). The
  /// loss gradient is multiplied by `gradient_scale` (a rank's share of a
  /// larger batch: local samples / global samples), so every gradient is
  /// that share. Keeps the dense gradients (dense_gradients) and the
  /// embedding gradients (embedding_gradients) without changing any
  /// parameter. Returns the mean BCE loss of `batch`.
  double forward_backward_external(const BatchView& batch, double gradient_scale);

  /// The gradient of the loss with respect to each embedding vector of the
  /// last external pass: [batch, T, D].
  const float* embedding_gradients() const { return emb_grad_.data(); }

  /// Every dense gradient in one contiguous buffer (the layout of
  /// dense_parameters, in order), for an all-reduce in place.
  float* dense_gradients() { return dense_grad_.data(); }
  int64_t dense_count() const { return static_cast<int64_t>(dense_.size()); }

  /// p -= learning_rate * dp for the dense parameters only (after an
  /// external pass).
  void apply_dense_gradients(float learning_rate);

  /// As predict, on the embeddings in embeddings_buffer(batch.size).
  void predict_external(const BatchView& batch, float* probabilities);

  /// Trainable floats: MLP weights and biases plus every embedding row.
  int64_t parameter_count() const { return dlrm::parameter_count(shape_); }

  /// Forward FLOPs per sample: 2 × the multiply-adds of the MLP GEMMs and of
  /// the interaction's dot products (bias adds and activations not counted).
  double flops_per_sample_forward() const { return forward_flops_per_sample(shape_); }

  /// Every dense parameter with its gradient, bottom layers first, weight
  /// before bias. The pointers stay valid for the model's lifetime.
  std::vector<DenseParameter> dense_parameters();

  /// After writing dense parameter values through dense_parameters() (a
  /// loaded checkpoint): refreshes what is derived from them (bf16: the
  /// rounded copies the GEMMs read).
  void dense_parameters_changed();

  /// Row `row` of embedding table `table`: embed_dim floats, writable.
  float* embedding_row(int table, int64_t row);

  /// The pending gradient (after forward_backward, before apply_gradients)
  /// of the loss with respect to one embedding row, summed over the samples
  /// that looked it up (zero when none did), into gradient [embed_dim]. For
  /// tests; O(batch). With `magnitude`, also Σ|per-sample gradient| per
  /// element [embed_dim]: the scale that rounding in the terms is relative
  /// to, where a hot row's terms cancel.
  void embedding_row_gradient(int table, int64_t row, float* gradient,
                              float* magnitude = nullptr) const;

 private:
  struct Layer {
    int64_t in = 0;
    int64_t out = 0;
    int64_t weight = 0;  // offset into dense_ / dense_grad_
    int64_t bias = 0;
    bool relu = true;
  };

  void build_layers(const std::vector<int>& widths, int64_t in, bool relu_on_last,
                    std::vector<Layer>& layers);
  void initialise(uint64_t seed);
  void check_batch(const BatchView& batch) const;
  void forward(const BatchView& batch, const int32_t* ids);
  void forward_dense(const BatchView& batch);  // on the embeddings in emb_out_
  void bottom_forward(const BatchView& batch);
  void require_tables(const char* call) const;
  void backward(const BatchView& batch);
  bool bf16() const { return precision_ == CpuPrecision::kBf16; }
  /// In bf16, v[0, n) rounded to bf16 in place; nothing in fp32.
  void store(float* v, int64_t n) const;
  /// The weights the GEMMs read: the fp32 master weights, or in bf16 their
  /// rounded copy.
  const float* gemm_weights(const Layer& layer) const;

  ModelShape shape_;
  EmbeddingStorage storage_ = EmbeddingStorage::kTables;
  CpuPrecision precision_ = CpuPrecision::kFp32;
  std::vector<float> dense_bf16_;   // bf16: dense_ rounded, refreshed after each update
  std::vector<float> dense_input_;  // bf16: the batch's dense features rounded
  uint64_t rounding_key_ = 0;       // bf16: the stochastic rounding's key (from the seed)
  uint64_t updates_ = 0;            // bf16: embedding updates so far (a fresh draw each)
  int num_tables_ = 0;
  int64_t interaction_width_ = 0;

  std::vector<Layer> bottom_;
  std::vector<Layer> top_;
  std::vector<float> dense_;       // every MLP weight and bias
  std::vector<float> dense_grad_;  // same layout
  /// Not zeroed when sized: initialise() fills every value in parallel, so
  /// each thread first-touches its own pages (no single-threaded memset of
  /// the tables, 0.88 GB at the dle preset, before the fill).
  std::vector<std::vector<float, DefaultInitAllocator<float>>> tables_;
  std::vector<float*> table_rows_;  // tables_[t].data(), for the kernels

  // Per-batch buffers, each holding capacity_ rows of its width.
  int64_t capacity_ = 0;
  std::vector<std::vector<float>> bottom_act_;  // output of each bottom layer
  std::vector<std::vector<float>> bottom_grad_;
  std::vector<std::vector<float>> top_act_;  // output of each top layer; last = logits
  std::vector<std::vector<float>> top_grad_;
  std::vector<float> emb_out_;      // [B, T, D]
  std::vector<float> emb_grad_;     // [B, T, D]
  std::vector<float> interaction_;  // [B, interaction_width_]
  std::vector<float> interaction_grad_;
  std::vector<int32_t> ids_;   // the ids of the batch whose gradients are pending
  int64_t pending_batch_ = 0;  // samples in that batch; 0 when nothing is pending
  int64_t bottom_ready_ = 0;   // samples forward_bottom_external ran the bottom MLP on; 0: none
  kernels::cpu::EmbeddingUpdateScratch update_scratch_;  // reused by every step
};

}  // namespace perflab::dlrm
