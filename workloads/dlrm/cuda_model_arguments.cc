// CudaModel's operator arguments (cuda_model.h), built from its buffers in
// the model's stored types: what the step hands each kernel. Host-only; the
// constructor checks them once (check_operators), every step builds them
// again (plain structs, no allocation).
#include "kernels/cuda/bce.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/interaction.h"
#include "kernels/cuda/logit_head.h"
#include "kernels/cuda/sgd.h"
#include "workloads/dlrm/cuda_model.h"
#include "workloads/dlrm/cuda_model_parts.h"

namespace perflab::dlrm {

namespace kc = perflab::kernels::cuda;
using model_parts::as;

kc::EmbeddingArguments CudaModel::embedding_arguments(const int32_t* ids) {
  const bool sharded = options_.comm != nullptr;
  kc::EmbeddingArguments e;
  e.batch = options_.batch;  // every global sample: the lookups and updates of the own tables
  e.num_tables = static_cast<int>(mine_.size());
  e.dim = shape_.embed_dim;
  e.total_rows = total_rows_;
  e.tables = tables_.data();
  e.table_row_offsets = table_offsets_.data();
  e.ids = ids;
  // With lookup_fused_ no gather runs and out stays null.
  e.out = sharded ? static_cast<void*>(looked_up_.data())
          : lookup_fused_ ? nullptr
          : bf16_embeddings() ? static_cast<void*>(emb_bf16_.data()) : emb_.data();
  e.out_type = bf16_embeddings() ? kc::EmbeddingOutputType::kBFloat16 : kc::EmbeddingOutputType::kFloat32;
  // The embedding gradients: this GPU's own, or across ranks those its
  // tables received (bf16 in a bf16 model either way).
  if (bf16_embedding_gradients()) {
    e.grad_bf16 = sharded ? reinterpret_cast<const __nv_bfloat16*>(grad_in_.data()) : as<__nv_bfloat16>(demb_bf16_);
  } else {
    e.grad = sharded ? reinterpret_cast<const float*>(grad_in_.data()) : demb_.data();
  }
  e.lr_device = lr_.data();
  e.mode = options_.update_mode;
  // The gather writes the update's sort keys: one launch fewer per step. An
  // evaluation's forward writes them too, unread (the next step's forward
  // writes its own before its update).
  e.keys_in_forward = true;
  return e;
}

kc::InteractionArguments CudaModel::interaction_arguments(int64_t batch, const int32_t* ids) {
  kc::InteractionArguments a;
  a.batch = batch;
  a.num_tables = num_tables_;
  a.dim = shape_.embed_dim;
  a.x = bottom_.back()->y.data();  // the bottom MLP's output, in the model's type
  if (lookup_fused_) {
    // The rows straight from the tables (bf16 models: rounded as loaded, the
    // gather's values); the forward writes the update's sort input, as the
    // gather would with keys_in_forward.
    a.lookup.tables = tables_.data();
    a.lookup.table_row_offsets = table_offsets_.data();
    a.lookup.ids = ids;
    a.lookup.sort = lookup_sort_;  // check_operators found it
  } else {
    a.emb = bf16_embeddings() ? static_cast<const void*>(emb_bf16_.data()) : emb_.data();
  }
  a.out = bf16_ ? static_cast<void*>(inter_bf16_.data()) : inter_.data();  // the top MLP's input
  a.dout = bf16_ ? static_cast<const void*>(dinter_bf16_.data()) : dinter_.data();
  a.dx = bottom_.back()->dy.data();
  if (bf16_embedding_gradients()) {
    a.demb_bf16 = as<__nv_bfloat16>(demb_bf16_);
  } else {
    a.demb = demb_.data();
  }
  a.out_stride = top_in_;
  a.tensor_cores = options_.interaction_tensor_cores;
  a.activations = bf16_ ? kc::InteractionType::kBFloat16 : kc::InteractionType::kFloat32;
  a.embeddings = bf16_embeddings() ? kc::InteractionType::kBFloat16 : kc::InteractionType::kFloat32;
  // x is the bottom MLP's last ReLU: dx leaves as that layer's dL/dz, which
  // mlp_layer_modes builds it to expect (dy_relu_applied).
  a.dx_relu = true;
  return a;
}

kc::BceArguments CudaModel::loss_arguments(const float* labels) {
  kc::BceArguments a;
  a.n = local_;
  // The top MLP's last layer's output and gradient, [B, 1], in the model's type.
  if (bf16_) {
    a.logits_bf16 = reinterpret_cast<const __nv_bfloat16*>(top_.back()->y.data());
    a.dlogit_bf16 = reinterpret_cast<__nv_bfloat16*>(top_.back()->dy.data());
  } else {
    a.logits = reinterpret_cast<const float*>(top_.back()->y.data());
    a.dlogit = reinterpret_cast<float*>(top_.back()->dy.data());
  }
  a.labels = labels;
  a.loss_accumulator = loss_state_.data();
  a.nonfinite_flag = reinterpret_cast<int32_t*>(loss_state_.data() + 1);
  a.step_counter = reinterpret_cast<int32_t*>(loss_state_.data() + 2);
  // Across ranks the gradient and the loss are this rank's share of the
  // global batch's mean (n_r / B of it); options.batch == n_r otherwise.
  a.mean_over = options_.batch;
  a.done_counter = reinterpret_cast<uint32_t*>(loss_state_.data() + 3);
  return a;
}

kc::LogitHeadArguments CudaModel::head_arguments(const float* labels, float* logits) {
  const Layer& head = *top_.back();
  const Layer& below = *top_[top_.size() - 2];
  kc::LogitHeadArguments a;
  a.n = local_;
  a.k = head.args.in_features;
  a.bf16 = bf16_;
  a.x = below.y.data();  // its ReLU output
  a.w = head.args.w;
  a.bias = head.args.b;
  a.logits = logits;
  a.labels = labels;
  a.dx = head.args.dx;  // the layer below's dy: its dL/dz (it is built with dy_is_pre_activation)
  a.dw = head.args.dw;
  a.db = head.args.db;
  a.db_below = head.args.input_db;  // the layer below's db
  a.loss_accumulator = loss_state_.data();
  a.nonfinite_flag = reinterpret_cast<int32_t*>(loss_state_.data() + 1);
  a.step_counter = reinterpret_cast<int32_t*>(loss_state_.data() + 2);
  a.mean_over = options_.batch;  // as loss_arguments
  a.done_counter = reinterpret_cast<uint32_t*>(loss_state_.data() + 3);
  return a;
}

kc::SgdArguments CudaModel::dense_update(const DenseRange& range) {
  const int64_t first = range.first;
  kc::SgdArguments a;
  a.count = range.count;
  a.weights = dense_.data() + first;
  if (bf16_) {
    a.gradients_bf16 = as<__nv_bfloat16>(grad_bf16_) + first;
    a.weights_bf16 = as<__nv_bfloat16>(dense_bf16_) + first;
  } else {
    a.gradients = grad_.data() + first;
  }
  a.lr_device = lr_.data();
  return a;
}

}  // namespace perflab::dlrm
