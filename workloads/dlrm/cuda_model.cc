// The DLRM model on one GPU: the forward, loss, backward and optimizer
// passes built from kernels/cuda, and the training step that runs them. The
// model is built (layout, layers, checks, tuning) in cuda_model_setup.cc.
#include "workloads/dlrm/cuda_model.h"
#include "workloads/dlrm/cuda_model_parts.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "base/error.h"
#include "harness/phase.h"
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

}  // namespace

void CudaModel::LtDeleter::operator()(cublasLtContext* handle) const { cublasLtDestroy(handle); }

CudaModel::~CudaModel() = default;

void* CudaModel::weights(const DenseSlot& s) {
  return bf16_ ? static_cast<void*>(dense_bf16_.data() + s.offset) : dense_.data() + s.offset;
}

void* CudaModel::transposed_weights(const DenseSlot& s) {
  return weights_t_.data() + count(s.offset) * (bf16_ ? 2 : sizeof(float));
}

void CudaModel::transpose_weights(cudaStream_t stream) {
  for (const kc::TransposeBatch& t : transposes_) kc::TransposeMatrices::run(t, stream);
}

void* CudaModel::gradients(const DenseSlot& s) {
  return bf16_ ? static_cast<void*>(grad_bf16_.data() + s.offset) : grad_.data() + s.offset;
}

void CudaModel::forward(const DeviceBatch& batch, cudaStream_t stream, bool sort_ahead) {
  ScopedPhase phase("forward");
  const int64_t b = local_;
  void* ws = workspace_.data();
  if (overlapped()) {
    // The lookups and their exchange on the side stream while the bottom
    // MLP runs here (they share no buffer and no workspace).
    fork(stream);
    embeddings(batch, side_->get());
  }
  {
    ScopedPhase range("bottom MLP");
    pad_dense_input(batch, stream);
    for (size_t l = 0; l < bottom_.size(); ++l) {
      kc::LinearArguments a = bottom_[l]->args;
      if (l == 0) a.x = first_input(batch);
      bottom_[l]->linear->forward(a, ws, stream);
    }
  }
  if (overlapped()) {
    join(stream);  // the embeddings have arrived
  } else if (!options_.external_embeddings && !lookup_fused_) {
    embeddings(batch, stream);
  }
  {
    ScopedPhase range(lookup_fused_ ? "interaction (with the lookups)" : "interaction");
    kc::InteractionForward::run(interaction_arguments(b, batch.ids), nullptr, stream);
  }
  if (sort_ahead) {
    // The keys are written (keys_in_forward: the gather, on this stream or
    // joined into it above, or the interaction wrote them; across ranks from
    // this rank's own ids): the update's sort from here on its own stream,
    // into the update's workspace, which nothing on this stream touches
    // until the update waits for it (or, updates_beside, follows it there).
    ScopedPhase range("update: sort (side stream)");
    kc::stream_waits_for(sort_stream_->get(), stream, sort_fork_->get());
    kc::EmbeddingBackwardSgd::sort(embedding_arguments(options_.comm == nullptr ? batch.ids : own_ids_.data()),
                                   update_workspace_.data(), sort_stream_->get());
    PERFLAB_CUDA_CHECK(cudaEventRecord(sort_join_->get(), sort_stream_->get()));
  }
  {
    ScopedPhase range("top MLP");
    for (size_t l = 0; l < mlp_layers(false); ++l) top_[l]->linear->forward(top_[l]->args, ws, stream);
  }
}

void CudaModel::backward(const DeviceBatch& batch, cudaStream_t stream) {
  ScopedPhase range("backward");
  const int64_t b = local_;
  void* ws = workspace_.data();
  // With side streams each layer's weight gradient runs beside the next
  // layers' data gradients; nothing overwrites a layer's x or dy before the
  // join below (each layer's dReLU works in place on its own dy).
  // With two weight-gradient streams the layers take turns (wgrad_side_for),
  // in the backward's order: a layer's weight gradient need not wait behind
  // the layer above's.
  const kc::SideStream* wgrad = wgrad_side();
  size_t turn = 0;
  for (size_t l = mlp_layers(false); l-- > 0; ++turn) {
    const kc::SideStream* side = wgrad_side_for(turn);
    top_[l]->linear->backward(top_[l]->args, ws, stream, side);
    if (split_head_ && l + 1 == mlp_layers(false)) {
      // The split head's sums (train_step ran its rows on this stream) on
      // the weight gradients' stream after the layer below's weight
      // gradient, whose fork followed the rows: launched after that
      // layer's dx GEMM, the chain's next kernel, so they do not take the
      // SMs before it. The layer's update below reads their db_below; the
      // embedding update reads the head's dw and db (head_join_);
      // take_loss runs after the step's join.
      kc::LogitHead::train_sums(head_arguments(batch.labels, nullptr), head_workspace_.data(), side->stream);
      PERFLAB_CUDA_CHECK(cudaEventRecord(head_join_->get(), side->stream));
    }
    if (sgd_in_backward()) update_layer(*top_[l], stream, *side);
  }
  kc::InteractionArguments inter = interaction_arguments(b, batch.ids);
  inter.lookup.sort = {};  // the forward wrote the update's sort input
  kc::InteractionBackward::run(inter, nullptr, stream);
  if (updates_beside()) {
    // The embedding gradients are written, and the fused head's dW (by the
    // loss on this stream, or with split_head_ by its sums on the weight
    // gradients' stream: head_join_): the update on its sort's stream while
    // the bottom MLP's backward runs here. That backward touches none of
    // what the update reads or writes (the tables, the embedding gradients,
    // the update's workspace, the head's parameters); the optimizer joins
    // the update back.
    ScopedPhase update("update (side stream)");
    kc::stream_waits_for(sort_stream_->get(), stream, update_fork_->get());
    if (split_head_) PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(sort_stream_->get(), head_join_->get(), 0));
    update_parameters(batch, sort_stream_->get());
    PERFLAB_CUDA_CHECK(cudaEventRecord(sort_join_->get(), sort_stream_->get()));
  }
  if (options_.comm != nullptr) {
    // The embedding gradients go back to the tables' owners: with overlap on
    // the side stream while the bottom MLP's backward runs here.
    ScopedPhase exchange("exchange: embedding gradients");
    if (overlapped()) fork(stream);
    cudaStream_t s = overlapped() ? side_->get() : stream;
    const bool bf16 = bf16_embedding_gradients();
    pack_segments(b, num_tables_, shape_.embed_dim, slots_dev_.data(),
                  bf16 ? static_cast<const void*>(demb_bf16_.data()) : demb_.data(), grad_out_.data(), bf16, s);
    options_.comm->set_stream(s);
    options_.comm->send_recv(backward_transfers_.data(), backward_transfers_.size(),
                             bf16 ? collectives::DataType::kBFloat16 : collectives::DataType::kFloat32);
  }
  for (size_t l = bottom_.size(); l-- > 0; ++turn) {
    kc::LinearArguments a = bottom_[l]->args;
    if (l == 0) a.x = first_input(batch);  // dx stays null: no gradient for the data
    const kc::SideStream* side = wgrad_side_for(turn);
    bottom_[l]->linear->backward(a, ws, stream, side);
    if (sgd_in_backward()) update_layer(*bottom_[l], stream, *side);
  }
  if (wgrad != nullptr) {  // every dW (and cuBLASLt's db) before the optimizer reads them
    kc::stream_waits_for(stream, wgrad->stream, wgrad_join_->get());
    // (The second was forked: every model has a bottom layer and a top one
    // below the head, two turns; the constructor checks it.)
    if (wgrad_stream2_) kc::stream_waits_for(stream, wgrad_stream2_->get(), wgrad_join2_->get());
  }
  // The gradients have reached their owners before the all-reduce: NCCL
  // calls on one communicator stay in one order on every rank.
  if (overlapped()) join(stream);
}

void CudaModel::update_layer(const Layer& layer, cudaStream_t stream, const kc::SideStream& on) {
  // The layer's dx GEMM, the last reader of its weights (or, with
  // dgrad_weights_transposed, of their copy, which this step's start
  // wrote), is on `stream`;
  // its dW (and cuBLASLt's db) already on the side stream: the update
  // after both there. It becomes ready with the next kernel on `stream`
  // (the layer below's dReLU pass, or the interaction's backward), and at a
  // thread per four values a large layer's blocks fill the SMs' threads
  // first: in the bf16 512 trace at 1590d6a the kernel after each of the
  // three largest layers' dx GEMMs began 1.2-2.7 us after it instead of
  // about 0.6, as that layer's SGD (480-1,024 blocks of 256 threads)
  // started. So the update keeps to two blocks a SM (512 of a SM's 2,048
  // threads) and loops; off the chain, it has the rest of the backward to
  // finish in.
  cudaStream_t side = on.stream;
  kc::stream_waits_for(side, stream, sgd_fork_->get());
  kc::SgdArguments sgd = dense_update(layer.params);
  sgd.max_blocks = beside_sgd_blocks_;
  kc::SgdUpdate::run(sgd, nullptr, side);
}

void CudaModel::optimizer(const DeviceBatch& batch, cudaStream_t stream) {
  ScopedPhase range("optimizer");
  if (updates_beside()) {  // the backward started it on the sort's stream
    PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(stream, sort_join_->get(), 0));
    return;
  }
  if (options_.comm != nullptr) {
    // Every rank's share of the MLP gradients, summed: the global batch's
    // mean. In bf16 the GEMMs' bf16 gradients themselves (half the bytes).
    ScopedPhase reduce("exchange: dense gradient all-reduce");
    options_.comm->set_stream(stream);
    void* g = bf16_ ? static_cast<void*>(grad_bf16_.data()) : grad_.data();
    options_.comm->all_reduce(g, g, count(layout_.count),
                              bf16_ ? collectives::DataType::kBFloat16 : collectives::DataType::kFloat32,
                              collectives::ReduceOp::kSum);
  }
  update_parameters(batch, stream);
}

void CudaModel::update_parameters(const DeviceBatch& batch, cudaStream_t stream) {
  // With the MLP layers updated in the backward (sgd_in_backward), only
  // the fused head's own weight and bias are left (the buffers' tail).
  const bool in_backward = sgd_in_backward();
  const kc::SgdArguments dense = in_backward ? dense_update(top_.back()->params) : dense_update();
  const bool dense_left = !in_backward || fused_head_;
  kc::EmbeddingArguments sparse = embedding_arguments(options_.comm == nullptr ? batch.ids : own_ids_.data());
  if (options_.fused) {
    if (dense_left) sparse.dense = &dense;  // one launch for both updates
  } else if (dense_left) {
    kc::SgdUpdate::run(dense, nullptr, stream);
  }
  if (sorts_ahead()) {  // the forward started the sort on its stream
    if (stream != sort_stream_->get()) PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(stream, sort_join_->get(), 0));
    kc::EmbeddingBackwardSgd::update(sparse, update_workspace_.data(), stream);
  } else {
    kc::EmbeddingBackwardSgd::run(sparse, update_workspace_.data(), stream);
  }
}

void CudaModel::train_step(const DeviceBatch& batch, cudaStream_t stream) {
  if (options_.external_embeddings) throw std::logic_error("CudaModel::train_step: a serving model (external embeddings) has no tables to train");
  check_step_input(batch);
  // The data-gradient GEMMs' transposed weights (dgrad_weights_transposed)
  // from the weights this step's forward reads: beside the forward on the
  // weight gradients' stream (idle until the backward), joined before the
  // backward. The last step's SGD wrote the weights before its join. The
  // weight gradients' fork and join events serve: the backward records
  // them again for its own uses.
  const bool transpose_beside = !transposes_.empty() && wgrad_stream_ != nullptr;
  if (transpose_beside) {
    ScopedPhase range("transposed weights (side stream)");
    kc::stream_waits_for(wgrad_stream_->get(), stream, wgrad_fork_->get());
    transpose_weights(wgrad_stream_->get());
    PERFLAB_CUDA_CHECK(cudaEventRecord(wgrad_join_->get(), wgrad_stream_->get()));
  } else if (!transposes_.empty()) {
    ScopedPhase range("transposed weights");
    transpose_weights(stream);
  }
  forward(batch, stream, sorts_ahead());
  {
    ScopedPhase range("loss");
    if (split_head_) {
      // z, the loss, g and dx on this stream; the sums follow in backward(),
      // on the weight gradients' stream.
      kc::LogitHead::train_rows(head_arguments(batch.labels, nullptr), head_workspace_.data(), stream);
    } else if (fused_head_) {
      kc::LogitHead::train(head_arguments(batch.labels, nullptr), workspace_.data(), stream);
    } else {
      kc::BceWithLogits::run(loss_arguments(batch.labels), workspace_.data(), stream);
    }
  }
  if (transpose_beside) PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(stream, wgrad_join_->get(), 0));
  backward(batch, stream);
  optimizer(batch, stream);
}

void CudaModel::forward_logits(const DeviceBatch& batch, float* logits, cudaStream_t stream) {
  forward(batch, stream);
  if (fused_head_) {
    kc::LogitHead::forward(head_arguments(nullptr, logits), stream);  // fp32 logits in place
  } else if (bf16_) {
    cast_bf16_to_float(local_, top_.back()->y.data(), logits, stream);  // [B, 1]
  } else {
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(logits, top_.back()->y.data(), count(local_) * sizeof(float),
                                       cudaMemcpyDeviceToDevice, stream));
  }
}

DeviceLoss CudaModel::take_loss(cudaStream_t stream) {
  float state[3] = {0.0f, 0.0f, 0.0f};
  kc::counted_copy_to_host(state, loss_state_.data(), sizeof(state), stream);
  PERFLAB_CUDA_CHECK(cudaMemsetAsync(loss_state_.data(), 0, sizeof(state), stream));
  int32_t flag = 0;
  std::memcpy(&flag, &state[1], sizeof(flag));
  // The flag holds 1 + the device's step count at the first non-finite loss.
  return {static_cast<double>(state[0]), flag != 0, flag != 0 ? static_cast<int64_t>(flag) - 1 : -1};
}

LaunchPlan CudaModel::step_launches() const {
  const collectives::Communicator* comm = options_.comm;
  return train_step_launches(shape_, options_, comm ? comm->size() : 0, comm ? comm->rank() : 0);
}

bool CudaModel::owns(int table) const { return std::find(mine_.begin(), mine_.end(), table) != mine_.end(); }

}  // namespace perflab::dlrm
