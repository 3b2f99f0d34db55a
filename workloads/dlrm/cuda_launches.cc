// CudaModel's step as declared launches (see cuda_launches.h). Mirrors
// CudaModel::train_step's order on one stream; with side streams the same
// launches run, the weight-gradient GEMMs beside the data gradients and the
// update's sort (declared here in the optimizer) from the interaction on (on
// one GPU, sync-free, the update too, from the interaction's backward: still
// declared in the optimizer).
// A GPU test checks the launches against CUPTI's count.
#include "workloads/dlrm/cuda_launches.h"

#include <fmt/format.h>

#include "kernels/cuda/bce.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/interaction.h"
#include "kernels/cuda/logit_head.h"
#include "kernels/cuda/sgd.h"
#include "kernels/cuda/transpose.h"
#include "workloads/dlrm/sharded_model.h"

namespace perflab::dlrm {
namespace {

namespace kc = kernels::cuda;
using kernels::append_launches;
using kernels::LaunchList;

LaunchList labelled(LaunchList list, const std::string& prefix) {
  for (kernels::KernelLaunch& k : list) k.label = prefix + ": " + k.label;
  return list;
}

/// The operators' own declarations of the casts, labelled with what they cast.
LaunchList cast_to_bf16(double n, const std::string& what) {
  kc::CastArguments a;
  a.count = static_cast<int64_t>(n);
  return labelled(kc::CastFloatToBf16::launches(a), what);
}

/// NCCL on one rank copies (a send to itself, an all-reduce of one) and
/// launches no kernel: only several ranks declare its kernels.
void add_nccl(LaunchList& list, int ranks, const std::string& what, double bytes) {
  if (ranks > 1) list.push_back({"ncclDevKernel", "NCCL " + what, "", {bytes, 0, ""}});
}

/// fused_head() for the top MLP's widths.
bool fused_head_of(const std::vector<int>& top, const CudaModelOptions& o) {
  const size_t n = top.size();
  return o.fused && n >= 2 && top[n - 2] <= kc::LogitHead::kMaxFeatures;
}

}  // namespace

bool fused_head(const ModelShape& shape, const CudaModelOptions& o) { return fused_head_of(shape.top_mlp, o); }

bool split_head(const ModelShape& shape, const CudaModelOptions& o, bool sharded, int64_t local) {
  return fused_head(shape, o) && o.side_streams && !sharded && !o.external_embeddings && local <= kSplitHeadMaxBatch;
}

std::vector<kc::LinearArguments> mlp_layer_modes(const std::vector<int>& widths, int64_t in,
                                                 bool bottom, int64_t batch,
                                                 const CudaModelOptions& options) {
  std::vector<kc::LinearArguments> layers;
  const size_t n = widths.size();
  // cuBLASLt's epilogues chain the backward (linear.h); our own do not,
  // except into the fused head, which applies the dReLU of the layer below
  // and writes its db itself (logit_head.h).
  const bool chain = options.fused && options.epilogues == kc::Epilogues::kCublasLt;
  const bool head = !bottom && fused_head_of(widths, options);
  for (size_t l = 0; l < n; ++l) {
    kc::LinearArguments a;
    const bool relu = bottom || l + 1 < n;  // the top MLP's last layer gives the logit
    a.batch = batch;
    a.in_features = in;
    a.out_features = widths[l];
    a.precision = options.precision;
    a.activation = relu ? kc::Activation::kRelu : kc::Activation::kNone;
    a.fused = options.fused;
    a.epilogues = options.epilogues;
    // Fused chain (linear.h): a ReLU layer with a layer above gets dL/dz from
    // that layer's dgrad (DRELU_BGRAD), which also writes its db.
    a.dy_is_pre_activation = relu && l + 1 < n && (chain || (head && l + 2 == n));
    // Every layer above the first reads a ReLU output (the layer below is ReLU).
    a.dx_applies_input_relu = l > 0 && (chain || (head && l + 1 == n));
    // The bottom MLP's last layer gets its dy from the interaction's
    // backward, which applies this layer's dReLU as it writes it
    // (InteractionArguments::dx_relu): no dReLU launch of its own.
    a.dy_relu_applied = bottom && l + 1 == n;
    // Every Linear layer with a data-gradient GEMM (not the data's layer,
    // not the fused head's), in a model that trains.
    a.dgrad_reads_w_t = options.dgrad_weights_transposed && !options.external_embeddings && (!bottom || l > 0) &&
                        !(head && l + 1 == n);
    // The weight gradient from dz transposed where the input is wide (not
    // where cuBLASLt's BGRADB epilogue sums db on that GEMM: Linear refuses).
    a.wgrad_reads_dy_t = options.wgrad_dy_transposed && !options.external_embeddings &&
                         in >= kWgradTransposedMinInput && !(head && l + 1 == n) &&
                         !(chain && !a.dy_is_pre_activation);
    layers.push_back(a);
    in = widths[l];
  }
  return layers;
}

int transposed_dz_layers(const ModelShape& shape, const CudaModelOptions& o) {
  int n = 0;
  for (bool bottom : {true, false}) {
    for (const kc::LinearArguments& a :
         mlp_layer_modes(bottom ? shape.bottom_mlp : shape.top_mlp,
                         bottom ? bottom_input_width(shape) : top_input_width(shape), bottom, o.batch, o)) {
      n += a.wgrad_reads_dy_t;
    }
  }
  return n;
}

bool lookup_in_interaction(const CudaModelOptions& o, bool sharded) {
  return o.fused && !sharded && !o.external_embeddings;
}

LaunchPlan train_step_launches(const ModelShape& shape, const CudaModelOptions& o, int ranks,
                               int rank) {
  const bool bf16 = o.precision == kc::Precision::kBf16;
  const bool sharded = ranks > 0;
  const int tables = static_cast<int>(shape.table_sizes.size());
  const int64_t dim = shape.embed_dim;
  const int64_t local =
      sharded ? slice_first(o.batch, ranks, rank + 1) - slice_first(o.batch, ranks, rank) : o.batch;
  const auto b = static_cast<double>(local);
  const int64_t width = top_input_width(shape);  // the interaction's rows, padded
  const std::vector<kc::LinearArguments> bottom =
      mlp_layer_modes(shape.bottom_mlp, bottom_input_width(shape), true, local, o);
  const std::vector<kc::LinearArguments> top =
      mlp_layer_modes(shape.top_mlp, width, false, local, o);

  // The own tables' lookups for every sample of the (global) batch.
  int own = tables;
  int64_t own_rows = 0;
  for (int64_t rows : shape.table_sizes) own_rows += rows;
  if (sharded) {
    const TablePlacement placement = place_tables(shape.table_sizes, ranks);
    own = static_cast<int>(placement.tables_of[static_cast<size_t>(rank)].size());
    own_rows = 0;
    for (int t : placement.tables_of[static_cast<size_t>(rank)])
      own_rows += shape.table_sizes[static_cast<size_t>(t)];
  }
  kc::EmbeddingArguments emb;
  emb.batch = o.batch;
  emb.num_tables = own;
  emb.dim = dim;
  emb.total_rows = own_rows;
  emb.mode = o.update_mode;
  emb.keys_in_forward = true;  // CudaModel::embedding_arguments: the gather writes the sort keys
  // CudaModel::bf16_embeddings(): a bf16 model gathers bf16 rows, and
  // across ranks exchanges them as bf16; their gradients are bf16 too
  // (CudaModel::bf16_embedding_gradients), on one GPU and across ranks.
  const bool bf16_embeddings = bf16 && !o.external_embeddings;
  emb.out_type = bf16_embeddings ? kc::EmbeddingOutputType::kBFloat16 : kc::EmbeddingOutputType::kFloat32;
  const double exchanged = b * tables * static_cast<double>(dim) * (bf16_embeddings ? 2 : sizeof(float));
  const double exchanged_gradients = b * tables * static_cast<double>(dim) * (bf16_embeddings ? 2 : sizeof(float));

  LaunchPlan plan;
  LaunchList forward;
  // dgrad_weights_transposed: the data-gradient GEMMs' weights transposed
  // at the step's start (CudaModel::train_step; beside the forward with side
  // streams), the layers in launches of up to kMaxTransposeMatrices.
  std::vector<kc::TransposeMatrix> transposed;
  for (const auto* layers : {&bottom, &top}) {
    for (const kc::LinearArguments& a : *layers) {
      if (a.dgrad_reads_w_t) transposed.push_back({nullptr, nullptr, a.out_features, a.in_features});
    }
  }
  for (const kc::TransposeBatch& t : kc::transpose_batches(transposed, bf16 ? 2 : sizeof(float))) {
    append_launches(forward, labelled(kc::TransposeMatrices::launches(t), "data-gradient GEMMs' weights"), "");
  }
  if (bf16 && !o.dense_input_bf16)
    // Batches of fp32 padded rows (DeviceBatch::dense_stride): cast whole;
    // the training pipeline's come in bf16 (dense_input_bf16): no cast.
    append_launches(forward,
                    cast_to_bf16(b * static_cast<double>(bottom_input_width(shape)), "dense input (padded rows)"),
                    "");
  for (size_t l = 0; l < bottom.size(); ++l) {
    append_launches(
        forward,
        labelled(kc::Linear::forward_launches(bottom[l]), fmt::format("bottom layer {}", l)), "");
  }
  if (sharded) {
    forward.push_back({"select_kernel",
                       "the own tables' ids",
                       "",
                       {static_cast<double>(o.batch) * (tables + own) * sizeof(int32_t), 0, ""}});
  }
  const bool lookup = lookup_in_interaction(o, sharded);
  if (!lookup) append_launches(forward, kc::EmbeddingForward::launches(emb), "");
  if (sharded) {
    add_nccl(forward, ranks, "send/receive: embeddings", exchanged);
    forward.push_back(
        {"move_kernel<false", "unpack the received embeddings", "", {2 * exchanged, 0, ""}});
  }
  kc::InteractionArguments inter{local, tables, dim};  // its work is the unpadded width's
  inter.tensor_cores = o.interaction_tensor_cores;
  // In bf16 the interaction reads and writes the MLPs' bf16 buffers: no casts.
  inter.activations = bf16 ? kc::InteractionType::kBFloat16 : kc::InteractionType::kFloat32;
  inter.embeddings = bf16_embeddings ? kc::InteractionType::kBFloat16 : kc::InteractionType::kFloat32;
  if (lookup) {
    // The rows read from the tables and the sort keys written by the
    // interaction's forward (any non-null pointers say so; nothing runs).
    static const float tables_marker = 0;
    static uint32_t keys_marker = 0;
    inter.lookup.tables = &tables_marker;
    inter.lookup.sort.keys = &keys_marker;
  }
  kc::InteractionArguments inter_backward = inter;
  inter_backward.lookup.sort = {};  // the backward writes no sort input
  // CudaModel::bf16_embedding_gradients(): a bf16 model writes the
  // embedding gradient in bf16, and the update reads it so.
  static __nv_bfloat16 gradient_marker{};
  if (bf16_embeddings) {
    inter_backward.demb_bf16 = &gradient_marker;
    emb.grad_bf16 = &gradient_marker;
  }
  append_launches(forward, kc::interaction_launches(inter, false), "");
  // Fused: the top MLP's last layer runs inside the loss's kernel
  // (CudaModel::fused_head_, kernels/cuda/logit_head.h).
  const bool head = fused_head(shape, o);
  const size_t top_linear = top.size() - (head ? 1 : 0);
  for (size_t l = 0; l < top_linear; ++l) {
    append_launches(forward,
                    labelled(kc::Linear::forward_launches(top[l]), fmt::format("top layer {}", l)),
                    "");
  }
  append_launches(plan, forward, "forward");

  if (head) {
    kc::LogitHeadArguments h;
    h.n = local;
    h.k = top.back().in_features;
    h.bf16 = bf16;
    // Split, both launches are the loss's here, though the sums run on the
    // weight gradients' stream inside the backward (after the first top
    // layer's GEMMs; CudaModel::backward): a declaration's phase is its
    // label, the profile matches kernels by name.
    append_launches(plan,
                    split_head(shape, o, sharded, local) ? kc::LogitHead::train_split_launches(h)
                                                         : kc::LogitHead::train_launches(h),
                    "loss");
  } else {
    kc::BceArguments bce;
    bce.n = local;
    // CudaModel gives the loss its block counter (one launch); any non-null
    // pointer says so here, where nothing runs.
    static uint32_t counter_marker = 0;
    bce.done_counter = &counter_marker;
    // In bf16 it reads the last layer's bf16 logits and writes its bf16 dlogit.
    static const __nv_bfloat16 logits_marker{};
    if (bf16) bce.logits_bf16 = &logits_marker;
    append_launches(plan, kc::BceWithLogits::launches(bce), "loss");
  }

  // Side streams on one GPU: each layer's SGD after its backward
  // (CudaModel::sgd_in_backward), over its weight and bias.
  const bool sgd_in_backward = o.side_streams && !sharded;
  static const __nv_bfloat16 bf16_marker{};  // any non-null pointer: the bytes are bf16's
  const auto sgd_of = [&](double count) {
    kc::SgdArguments sgd;
    sgd.count = static_cast<int64_t>(count);
    if (bf16) {
      sgd.gradients_bf16 = &bf16_marker;
      sgd.weights_bf16 = const_cast<__nv_bfloat16*>(&bf16_marker);  // the bf16 copy is written too
    }
    return sgd;
  };
  // Each layer's weight and bias, padded, as CudaModel lays them out.
  const DenseLayout layout = dense_layout(shape);
  const auto layer_params = [&](bool bottom_mlp, size_t l) {
    return static_cast<double>(layout.layer(bottom_mlp, l).count);
  };
  const auto layer_sgd = [&](LaunchList& list, bool bottom_mlp, size_t l) {
    if (!sgd_in_backward) return;
    const std::string name = fmt::format("{} layer {}", bottom_mlp ? "bottom" : "top", l);
    append_launches(list, labelled(kc::SgdUpdate::launches(sgd_of(layer_params(bottom_mlp, l)), bf16), name), "");
  };
  LaunchList backward;
  for (size_t l = top_linear; l-- > 0;) {
    append_launches(
        backward,
        labelled(kc::Linear::backward_launches(top[l], true), fmt::format("top layer {}", l)), "");
    layer_sgd(backward, false, l);
  }
  append_launches(backward, kc::interaction_launches(inter_backward, true), "");
  if (sharded) {
    backward.push_back(
        {"move_kernel<true", "pack the embedding gradients", "", {2 * exchanged_gradients, 0, ""}});
    add_nccl(backward, ranks, "send/receive: embedding gradients", exchanged_gradients);
  }
  for (size_t l = bottom.size(); l-- > 0;) {
    append_launches(backward,
                    labelled(kc::Linear::backward_launches(bottom[l], l > 0),
                             fmt::format("bottom layer {}", l)),
                    "");
    layer_sgd(backward, true, l);
  }
  append_launches(plan, backward, "backward");

  const auto dense = static_cast<double>(layout.count);
  LaunchList optimizer;
  // In bf16 the all-reduce and the SGD take the GEMMs' bf16 gradients.
  if (sharded) add_nccl(optimizer, ranks, "all-reduce: dense gradients", dense * (bf16 ? 2 : sizeof(float)));
  // What the optimizer still updates: everything, or with the layers
  // updated in the backward only the fused head's weight and bias.
  const kc::SgdArguments sgd = sgd_of(sgd_in_backward ? (head ? layer_params(false, top.size() - 1) : 0.0) : dense);
  // Fused: the dense SGD runs in the sparse update's launch (CudaModel::update_parameters).
  if (sgd.count == 0) {
    // nothing left
  } else if (o.fused) {
    emb.dense = &sgd;
  } else {
    append_launches(optimizer, kc::SgdUpdate::launches(sgd, bf16), "");
  }
  append_launches(optimizer, kc::EmbeddingBackwardSgd::launches(emb), "");
  append_launches(plan, optimizer, "optimizer");
  return plan;
}

}  // namespace perflab::dlrm
