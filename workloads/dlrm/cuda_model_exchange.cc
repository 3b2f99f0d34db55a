// CudaModel across ranks (cuda_model.h): the lookups and their exchange
// with the other ranks, the exchange's buffers and transfer lists, and the
// side stream the exchanges overlap on.
#include <cstdint>
#include <memory>

#include "harness/phase.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/embedding.h"
#include "workloads/dlrm/cuda_exchange.h"
#include "workloads/dlrm/cuda_model.h"
#include "workloads/dlrm/cuda_model_parts.h"

namespace perflab::dlrm {

namespace kc = perflab::kernels::cuda;
using model_parts::count;

void CudaModel::fork(cudaStream_t stream) { kc::stream_waits_for(side_->get(), stream, fork_->get()); }

void CudaModel::join(cudaStream_t stream) { kc::stream_waits_for(stream, side_->get(), join_->get()); }

void CudaModel::embeddings(const DeviceBatch& batch, cudaStream_t stream) {
  ScopedPhase range("embeddings");
  if (options_.comm == nullptr) {
    kc::EmbeddingForward::run(embedding_arguments(batch.ids), update_workspace_.data(), stream);
    return;
  }
  const auto own = static_cast<int64_t>(mine_.size());
  select_table_ids(options_.batch, num_tables_, batch.ids, own, own_columns_.data(), own_ids_.data(), stream);
  kc::EmbeddingForward::run(embedding_arguments(own_ids_.data()), update_workspace_.data(), stream);
  ScopedPhase exchange("exchange: embeddings");
  options_.comm->set_stream(stream);
  options_.comm->send_recv(forward_transfers_.data(), forward_transfers_.size(),
                           bf16_embeddings() ? collectives::DataType::kBFloat16 : collectives::DataType::kFloat32);
  unpack_segments(local_, num_tables_, shape_.embed_dim, slots_dev_.data(), received_.data(),
                  bf16_embeddings() ? static_cast<void*>(emb_bf16_.data()) : emb_.data(), bf16_embeddings(), stream);
}

/// The exchange's buffers and its two transfer lists, fixed for the
/// model's life (sharded_model.h's layout; exchange_layout.h).
void CudaModel::setup_exchange() {
  collectives::Communicator& comm = *options_.comm;
  if (options_.overlap) {
    // The lookups and their exchange, which the step joins on: as urgent
    // as the step's own stream (cuda_run.cc), above the weight gradients'
    // and the sort's.
    side_ = std::make_unique<kc::Stream>(kc::greatest_stream_priority());
    fork_ = std::make_unique<kc::Event>();
    join_ = std::make_unique<kc::Event>();
  }
  const int ranks = comm.size();
  const int64_t dim = shape_.embed_dim;
  const int64_t batch = options_.batch;
  const auto own = static_cast<int64_t>(mine_.size());
  own_columns_ = Buffer<int32_t>(std::vector<int32_t>(mine_.begin(), mine_.end()));
  slots_dev_ = Buffer<ExchangeSlot>(exchange_slots(placement_.tables_of, num_tables_));
  own_ids_ = Buffer<int32_t>(count(batch * own));
  const size_t e = embedding_bytes();
  looked_up_ = Buffer<uint8_t>(count(batch * own * dim) * e);
  const size_t g = bf16_embedding_gradients() ? 2 : sizeof(float);  // the embedding gradients' elements
  grad_in_ = Buffer<uint8_t>(count(batch * own * dim) * g);
  received_ = Buffer<uint8_t>(count(local_ * num_tables_ * dim) * e);
  grad_out_ = Buffer<uint8_t>(count(local_ * num_tables_ * dim) * g);
  int64_t tables_before = 0;
  for (int j = 0; j < ranks; ++j) {
    const int64_t first_j = slice_first(batch, ranks, j);
    const int64_t n_j = slice_first(batch, ranks, j + 1) - first_j;
    const auto theirs = static_cast<int64_t>(placement_.tables_of[static_cast<size_t>(j)].size());
    // To j: the own tables' rows of j's samples; from j: j's tables' rows of
    // this rank's samples, j's segment. Backward: the reverse.
    uint8_t* to_j = looked_up_.data() + count(first_j * own * dim) * e;
    uint8_t* from_j = received_.data() + count(local_ * tables_before * dim) * e;
    const auto out = count(n_j * own * dim);
    const auto in = count(local_ * theirs * dim);
    forward_transfers_.push_back({j, to_j, nullptr, out});
    forward_transfers_.push_back({j, nullptr, from_j, in});
    backward_transfers_.push_back({j, grad_out_.data() + count(local_ * tables_before * dim) * g, nullptr, in});
    backward_transfers_.push_back({j, nullptr, grad_in_.data() + count(first_j * own * dim) * g, out});
    tables_before += theirs;
  }
}

}  // namespace perflab::dlrm
