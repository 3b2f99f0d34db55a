// The DLRM model on one GPU, built: the parameter layout and the copy from a
// CpuModel, the MLP layers and their GEMM plans, every operator checked
// against its real arguments, and the GEMMs timed when tuning is asked for.
// The step's passes are in cuda_model.cc.
#include "workloads/dlrm/cuda_model.h"
#include "workloads/dlrm/cuda_model_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <utility>

#include "base/error.h"
#include "kernels/cpu/interaction.h"
#include "kernels/cuda/bce.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/interaction.h"
#include "kernels/cuda/linear_plan.h"
#include "kernels/cuda/sgd.h"
#include "workloads/dlrm/cuda_convert.h"
#include "workloads/dlrm/cuda_launches.h"
#include "workloads/dlrm/cuda_exchange.h"

namespace perflab::dlrm {

using model_parts::as;
using model_parts::count;

namespace {

namespace kc = perflab::kernels::cuda;

static_assert(kDenseSlotAlignment * 2 % kc::kLinearPointerAlignment == 0, "bf16 slots must stay aligned");

void require(const kc::Status& status, const std::string& what) {
  if (!status) throw UsageError(fmt::format("dlrm cuda: {}: {}", what, status.reason()));
}

}  // namespace

std::string describe(const CudaModelOptions& o) {
  return fmt::format("{}, {}, {}", o.precision == kc::Precision::kBf16 ? "bf16" : "tf32",
                     !o.fused                                     ? "unfused"
                     : o.epilogues == kc::Epilogues::kCublasLt ? "fused"
                                                               : fmt::format("fused, {} epilogues", kc::epilogues_name(o.epilogues)),
                     o.update_mode == kc::EmbeddingUpdateMode::kSyncFree ? "sync-free"
                                                                         : "synchronising");
}

CudaModel::CudaModel(CpuModel& init, const CudaModelOptions& options)
    : shape_(init.shape()), options_(options) {
  if (options_.batch < 1) throw UsageError("dlrm cuda: the batch must hold at least one sample");
  bf16_ = options_.precision == kc::Precision::kBf16;
  num_tables_ = static_cast<int>(shape_.table_sizes.size());
  interaction_width_ = kernels::cpu::interaction_output_width(num_tables_, shape_.embed_dim);
  top_in_ = top_input_width(shape_);
  bottom_in_ = bottom_input_width(shape_);
  const int64_t dim = shape_.embed_dim;
  local_ = options_.batch;
  if (options_.comm != nullptr) {
    collectives::Communicator& comm = *options_.comm;
    if (!comm.device_buffers()) {
      throw UsageError(fmt::format("dlrm cuda: the embedding exchange needs device buffers (NCCL), not a {} "
                                   "communicator", comm.kind()));
    }
    if (options_.batch < comm.size()) {
      throw UsageError(fmt::format("dlrm cuda: batch_size {} cannot be split over {} ranks (every rank needs a "
                                   "sample)", options_.batch, comm.size()));
    }
    placement_ = place_tables(shape_.table_sizes, comm.size());
    mine_ = placement_.tables_of[static_cast<size_t>(comm.rank())];
    first_ = slice_first(options_.batch, comm.size(), comm.rank());
    local_ = slice_first(options_.batch, comm.size(), comm.rank() + 1) - first_;
  } else {
    mine_.resize(static_cast<size_t>(num_tables_));
    std::iota(mine_.begin(), mine_.end(), 0);
  }
  const int64_t batch = local_;  // the MLPs', the interaction's and the loss's samples
  lookup_fused_ = lookup_in_interaction(options_, options_.comm != nullptr);
  cublasLtHandle_t handle = nullptr;
  PERFLAB_CUBLAS_CHECK(cublasLtCreate(&handle));
  lt_.reset(handle);

  // Dense parameters: CpuModel's order (bottom then top, weight then bias),
  // padded offsets (dense_layout.h), copied from the CPU model.
  layout_ = dense_layout(shape_);
  dense_ = Buffer<float>(pack_dense(layout_, init.dense_parameters()));
  // The GEMMs' gradients, which the SGD reads: fp32, or bf16 in bf16. The
  // padding between tensors is never written: it stays the 0 written here.
  if (bf16_) {
    dense_bf16_ = Buffer<uint16_t>(count(layout_.count));
    grad_bf16_ = Buffer<uint16_t>(count(layout_.count));
    grad_bf16_.zero();
  } else {
    grad_ = Buffer<float>(count(layout_.count));
    grad_.zero();
  }
  // Room for every weight's transposed copy at its own offset (build_mlp
  // says which layers read one; the biases' slots stay unused). Every byte
  // 0xff, a NaN in fp32 and in bf16, until train_step writes the copies:
  // a step that read one it had not written would fail the gate.
  if (options_.dgrad_weights_transposed && !options_.external_embeddings) {
    weights_t_ = Buffer<uint8_t>(count(layout_.count) * (bf16_ ? 2 : sizeof(float)));
    PERFLAB_CUDA_CHECK(cudaMemset(weights_t_.data(), 0xff, weights_t_.bytes()));  // sync outside the iteration: setup
  }

  // The tables on this GPU in one allocation; the k-th starts at row offsets[k].
  std::vector<int64_t> offsets;
  for (int t : mine_) {
    offsets.push_back(total_rows_);
    total_rows_ += shape_.table_sizes[static_cast<size_t>(t)];
  }
  if (options_.external_embeddings && options_.comm != nullptr) {
    throw UsageError("dlrm cuda: external embeddings (serving) run on one GPU, without a communicator");
  }
  if (!options_.external_embeddings) tables_ = Buffer<float>(count(total_rows_ * dim));
  for (size_t k = 0; k < mine_.size() && !options_.external_embeddings; ++k) {
    const int t = mine_[k];
    const int64_t rows = shape_.table_sizes[static_cast<size_t>(t)];
    if (options_.table_seed) {  // drawn here, on the default stream (synchronised below)
      fill_embedding_table(tables_.data() + offsets[k] * dim, rows, dim, *options_.table_seed, t, nullptr);
      continue;
    }
    PERFLAB_CUDA_CHECK(cudaMemcpy(tables_.data() + offsets[k] * dim, init.embedding_row(t, 0),  // sync outside the iteration: setup: initial tables
                                  count(rows * dim) * sizeof(float), cudaMemcpyHostToDevice));
  }
  table_offsets_ = Buffer<int64_t>(offsets);
  lr_ = Buffer<float>(std::vector<float>{0.0f});
  loss_state_ = Buffer<float>(static_cast<size_t>(3 + kc::LogitHead::kCounters));
  loss_state_.zero();

  if (lookup_fused_) {
    // No gathered [batch, T, dim] tensor: the interaction reads the tables.
  } else if (bf16_embeddings()) {
    emb_bf16_ = Buffer<uint16_t>(count(batch * num_tables_ * dim));
  } else {
    emb_ = Buffer<float>(count(batch * num_tables_ * dim));
    if (options_.external_embeddings) emb_.zero();  // rows a short batch leaves unwritten stay finite
  }
  if (bf16_embedding_gradients()) {
    demb_bf16_ = Buffer<uint16_t>(count(batch * num_tables_ * dim));
  } else {
    demb_ = Buffer<float>(count(batch * num_tables_ * dim));
  }
  // The bottom MLP's input, in rows of bottom_in_ (13 -> 16) whose padding
  // columns stay the zero written here (and again after tune_gemms): bf16
  // always, fp32 when the dense features need padding.
  if (!bf16_ && bottom_in_ != shape_.num_dense) {
    dense_in_ = Buffer<float>(count(batch * bottom_in_));
    dense_in_.zero();
  }
  if (bf16_) {
    dense_in_bf16_ = Buffer<uint16_t>(count(batch * bottom_in_));
    dense_in_bf16_.zero();
    // The interaction writes the first interaction_width_ columns of each
    // top_in_-wide row: the padding stays the zero written here (and again
    // after tune_gemms, which fills it), in inter_bf16_ and inter_ alike.
    inter_bf16_ = Buffer<uint16_t>(count(batch * top_in_));
    inter_bf16_.zero();
    dinter_bf16_ = Buffer<uint16_t>(count(batch * top_in_));
  } else {
    inter_ = Buffer<float>(count(batch * top_in_));
    inter_.zero();
    dinter_ = Buffer<float>(count(batch * top_in_));
  }

  build_mlp(shape_.bottom_mlp, bottom_in_, /*bottom=*/true);
  // Fused: the last layer (K -> 1), the loss and that layer's backward are
  // one kernel (kernels/cuda/logit_head.h); its Layer keeps only its
  // parameter and gradient slots (no Linear, no buffers).
  fused_head_ = fused_head(shape_, options_);
  build_mlp(shape_.top_mlp, top_in_, /*bottom=*/false);
  // The weights the data-gradient GEMMs read transposed (build_mlp gave
  // those layers their copies' places), in launches.
  std::vector<kc::TransposeMatrix> transposed;
  for (bool bottom : {true, false}) {
    for (size_t l = 0; l < mlp_layers(bottom); ++l) {
      const kc::LinearArguments& a = (bottom ? bottom_ : top_)[l]->args;
      if (a.dgrad_reads_w_t) {  // W [out, in] -> [in, out]
        transposed.push_back({a.w, transposed_weights(layout_.weight(bottom, l)), a.out_features, a.in_features});
      }
    }
  }
  transposes_ = kc::transpose_batches(transposed, bf16_ ? 2 : sizeof(float));
  // The top MLP's input is the interaction output, in the model's type.
  kc::LinearArguments& top0 = top_.front()->args;
  top0.x = bf16_ ? static_cast<void*>(inter_bf16_.data()) : inter_.data();
  top0.dx = bf16_ ? static_cast<void*>(dinter_bf16_.data()) : dinter_.data();

  if (options_.comm != nullptr) setup_exchange();
  check_operators();
  if (options_.side_streams && !options_.external_embeddings) {
    wgrad_stream_ = std::make_unique<kc::Stream>();
    wgrad_fork_ = std::make_unique<kc::Event>();
    wgrad_join_ = std::make_unique<kc::Event>();
    wgrad_workspace_ = Buffer<uint8_t>(kc::kLinearCublasWorkspaceBytes);
    wgrad_side_ = {wgrad_stream_->get(), wgrad_workspace_.data(), wgrad_fork_->get()};
    if (options_.wgrad_streams != 1 && options_.wgrad_streams != 2) {
      throw UsageError(fmt::format("dlrm cuda: wgrad_streams must be 1 or 2, not {}", options_.wgrad_streams));
    }
    if (options_.wgrad_streams == 2 && mlp_layers(true) + mlp_layers(false) < 2) {
      throw UsageError("dlrm cuda: wgrad_streams=2 needs two MLP layers with weight gradients to take turns");
    }
    if (options_.wgrad_streams == 2) {
      wgrad_stream2_ = std::make_unique<kc::Stream>();
      wgrad_fork2_ = std::make_unique<kc::Event>();
      wgrad_join2_ = std::make_unique<kc::Event>();
      wgrad_workspace2_ = Buffer<uint8_t>(kc::kLinearCublasWorkspaceBytes);
      wgrad_side2_ = {wgrad_stream2_->get(), wgrad_workspace2_.data(), wgrad_fork2_->get()};
    }
    sgd_fork_ = std::make_unique<kc::Event>();
    sort_stream_ = std::make_unique<kc::Stream>();
    sort_fork_ = std::make_unique<kc::Event>();
    sort_join_ = std::make_unique<kc::Event>();
    update_fork_ = std::make_unique<kc::Event>();
    int device = 0, sms = 0;
    PERFLAB_CUDA_CHECK(cudaGetDevice(&device));
    PERFLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    beside_sgd_blocks_ = 2 * int64_t{sms};
  }
  split_head_ = split_head(shape_, options_, options_.comm != nullptr, local_);  // needs the side streams above
  if (split_head_) {
    head_join_ = std::make_unique<kc::Event>();
    head_workspace_ = Buffer<uint8_t>(kc::LogitHead::workspace_bytes(head_arguments(loss_state_.data(), nullptr)));
  }
  if (bf16_) {
    kc::CastFloatToBf16::run({layout_.count, dense_.data(), as<__nv_bfloat16>(dense_bf16_)},
                             nullptr, nullptr);
  }
  if (options_.tune_gemms) {
    transpose_weights(nullptr);  // tuning runs the data-gradient GEMMs on them
    tune_gemms();
    if (bf16_) {  // their padding columns again (nothing else writes them)
      inter_bf16_.zero();
      dense_in_bf16_.zero();
    }
  }
  kc::counted_stream_synchronize(nullptr);  // setup: the uploads and the cast are done
}

/// Random operands in every activation and gradient the GEMMs read (each
/// layer's y and dy, the first layers' inputs), then each layer's GEMMs
/// timed and their fastest kept. What the timing writes (activations,
/// gradients, ReLU masks) every step writes again before reading; the
/// weights are never written.
void CudaModel::tune_gemms() {
  constexpr int kRepetitions = 5;
  const size_t element = bf16_ ? 2 : 4;
  uint64_t seed = 1;
  auto fill = [&](void* p, size_t bytes) { fill_uniform(p, static_cast<int64_t>(bytes / element), bf16_, seed++, nullptr); };
  for (bool bottom : {true, false}) {
    for (size_t l = 0; l < mlp_layers(bottom); ++l) {
      Layer& layer = bottom ? *bottom_[l] : *top_[l];
      fill(layer.y.data(), layer.y.bytes());
      fill(layer.dy.data(), layer.dy.bytes());
    }
  }
  // The bottom MLP's input is the batch's (set per step), and the fp32 top
  // MLP's is the interaction output, whose padding columns must stay zero:
  // stand-ins for both. In bf16 the layers read the cast's buffer and the
  // interaction's output, filled in place (the constructor zeroes both
  // again after tuning).
  kc::DeviceBuffer<uint8_t> dense_in(bf16_ ? 0 : count(local_ * bottom_in_) * element);
  kc::DeviceBuffer<uint8_t> top_in(bf16_ ? 0 : count(local_ * top_in_) * element);
  if (bf16_) {
    fill(dense_in_bf16_.data(), dense_in_bf16_.bytes());
    fill(inter_bf16_.data(), inter_bf16_.bytes());
  } else {
    fill(dense_in.data(), dense_in.bytes());
    fill(top_in.data(), top_in.bytes());
  }
  for (bool bottom : {true, false}) {
    auto& layers = bottom ? bottom_ : top_;
    int64_t in = bottom ? bottom_in_ : top_in_;
    for (size_t l = 0; l < mlp_layers(bottom); ++l) {
      kc::LinearArguments a = layers[l]->args;
      if (bottom && l == 0) a.x = bf16_ ? static_cast<const void*>(dense_in_bf16_.data()) : dense_in.data();
      if (!bottom && l == 0 && !bf16_) a.x = top_in.data();
      const std::string name = fmt::format("{} {} ({} -> {})", bottom ? "bottom" : "top", l, in, a.out_features);
      for (kc::GemmChoice& c :
           layers[l]->linear->tune(a, workspace_.data(), nullptr, kRepetitions, options_.search_gemms)) {
        gemm_choices_.push_back({name, std::move(c)});
      }
      in = a.out_features;
    }
  }
}

void CudaModel::build_mlp(const std::vector<int>& widths, int64_t in, bool bottom) {
  std::vector<std::unique_ptr<Layer>>& layers = bottom ? bottom_ : top_;
  const size_t element_bytes = bf16_ ? 2 : 4;
  const std::vector<kc::LinearArguments> modes = mlp_layer_modes(widths, in, bottom, local_, options_);
  for (size_t l = 0; l < modes.size(); ++l) {
    auto layer = std::make_unique<Layer>();
    kc::LinearArguments& a = layer->args;
    a = modes[l];
    const int64_t out = widths[l];
    // The fused head (fused_head_) runs inside the loss's kernel.
    const bool head = !bottom && fused_head_ && l + 1 == modes.size();

    if (!head) {
      layer->y = kc::DeviceBuffer<uint8_t>(count(local_ * out) * element_bytes);
      layer->dy = kc::DeviceBuffer<uint8_t>(count(local_ * out) * element_bytes);
    }
    const size_t aux_bytes = head ? 0 : kc::Linear::aux_bytes(a);
    if (aux_bytes > 0) layer->aux = kc::DeviceBuffer<uint8_t>(aux_bytes);
    const DenseSlot& w = layout_.weight(bottom, l);
    const DenseSlot& b = layout_.bias(bottom, l);
    layer->params = layout_.layer(bottom, l);  // the bias follows the weight (dense_layout checks)
    a.w = weights(w);
    if (a.dgrad_reads_w_t) a.w_t = transposed_weights(w);
    a.b = weights(b);
    a.dw = gradients(w);
    a.db = gradients(b);
    a.y = head ? nullptr : layer->y.data();
    a.dy = head ? nullptr : layer->dy.data();
    a.aux = aux_bytes > 0 ? layer->aux.data() : nullptr;
    if (a.wgrad_reads_dy_t) {
      layer->dy_t = kc::DeviceBuffer<uint8_t>(count(local_ * out) * element_bytes);
      a.dy_t = layer->dy_t.data();
    }
    if (l > 0) {
      Layer& below = *layers[l - 1];
      a.x = below.y.data();
      a.dx = below.dy.data();
      if (a.dx_applies_input_relu) {
        a.input_aux = below.aux.data();
        a.input_db = below.args.db;
      }
    }
    const std::string name = fmt::format("{} layer {} ({} -> {})", bottom ? "bottom" : "top", l, in, out);
    if (!head) {
      require(kc::Linear::can_implement(a), name);
      layer->linear = std::make_unique<kc::Linear>(lt_.get(), a);
      require(layer->linear->status(), name);
    }
    layers.push_back(std::move(layer));
    in = out;
  }
}

/// Checks every operator against its real arguments and sizes the shared
/// workspace (the largest any of them needs).
void CudaModel::check_operators() {
  const int64_t batch = local_;
  size_t workspace = 0;
  for (bool bottom : {true, false}) {
    for (size_t l = 0; l < mlp_layers(bottom); ++l) {
      workspace = std::max(workspace, kc::Linear::workspace_bytes((bottom ? bottom_ : top_)[l]->args));
    }
  }
  if (!options_.external_embeddings) {  // serving: no tables here, the caller fills emb_
    // any non-null ids pointer: checked per call
    const kc::EmbeddingArguments emb = embedding_arguments(reinterpret_cast<const int32_t*>(loss_state_.data()));
    if (!lookup_fused_) require(kc::EmbeddingForward::can_implement(emb), "embedding forward");
    require(kc::EmbeddingBackwardSgd::can_implement(emb), "embedding update");
    if (options_.fused) {  // the dense SGD in the update's launch
      kc::EmbeddingArguments both = emb;
      const kc::SgdArguments dense = dense_update();
      both.dense = &dense;
      require(kc::EmbeddingBackwardSgd::can_implement(both), "embedding and dense update");
    }
    // The update's own workspace: the gather (or the interaction, with the
    // lookup fused in) writes its sort keys there
    // (keys_in_forward) and the GEMMs in between must not touch it.
    update_workspace_ = Buffer<uint8_t>(kc::EmbeddingBackwardSgd::workspace_bytes(emb));
    // Where the interaction writes the update's sort input when it looks the
    // rows up itself: fixed for the model's life, found once here.
    if (lookup_fused_) lookup_sort_ = kc::embedding_sort_input(emb, update_workspace_.data());
  }

  // any non-null ids pointer: checked per call
  const kc::InteractionArguments inter =
      interaction_arguments(batch, reinterpret_cast<const int32_t*>(loss_state_.data()));
  require(kc::InteractionForward::can_implement(inter), "interaction forward");
  require(kc::InteractionBackward::can_implement(inter), "interaction backward");

  // Any non-null labels and logits pointers: checked per step.
  if (fused_head_) {
    const kc::LogitHeadArguments head = head_arguments(loss_state_.data(), loss_state_.data());
    require(kc::LogitHead::can_implement(head, true), "last layer and loss");
    require(kc::LogitHead::can_implement(head, false), "last layer (evaluation)");
    workspace = std::max(workspace, kc::LogitHead::workspace_bytes(head));
  } else {
    const kc::BceArguments bce = loss_arguments(loss_state_.data());
    require(kc::BceWithLogits::can_implement(bce), "loss");
    workspace = std::max(workspace, kc::BceWithLogits::workspace_bytes(bce));
  }

  require(kc::SgdUpdate::can_implement(dense_update()), "dense update");
  for (const kc::TransposeBatch& t : transposes_) {
    require(kc::TransposeMatrices::can_implement(t), "the weights' transposed copies");
  }
  workspace_ = kc::DeviceBuffer<uint8_t>(workspace);
}

}  // namespace perflab::dlrm
