// DLRM across ranks: table placement, the batch split, and the sharded
// training step and prediction (see sharded_model.h).
#include "workloads/dlrm/sharded_model.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"

namespace perflab::dlrm {
namespace {

namespace k = perflab::kernels::cpu;
using collectives::DataType;
using collectives::PeerTransfer;

constexpr size_t kFloat = sizeof(float);

void copy_floats(const float* from, float* to, int64_t count) {
  std::memcpy(to, from, static_cast<size_t>(count) * kFloat);
}

}  // namespace

TablePlacement place_tables(const std::vector<int64_t>& table_sizes, int ranks) {
  const auto tables = static_cast<int>(table_sizes.size());
  if (ranks < 1 || ranks > tables) {
    throw UsageError(fmt::format("dlrm: {} ranks but {} embedding tables: table-wise placement needs "
                                 "at most one rank per table (run with 1 to {} ranks)",
                                 ranks, tables, tables));
  }
  std::vector<int> order(static_cast<size_t>(tables));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return table_sizes[a] > table_sizes[b]; });
  TablePlacement p;
  p.owner.assign(static_cast<size_t>(tables), 0);
  p.tables_of.resize(static_cast<size_t>(ranks));
  p.rows_of.assign(static_cast<size_t>(ranks), 0);
  for (int t : order) {
    // The rank with the fewest rows; a rank with no table yet comes first
    // among equals, so every rank gets at least one table.
    int best = 0;
    for (int r = 1; r < ranks; ++r) {
      const auto key = [&](int q) { return std::make_pair(!p.tables_of[q].empty(), p.rows_of[q]); };
      if (key(r) < key(best)) best = r;
    }
    p.owner[static_cast<size_t>(t)] = best;
    p.tables_of[static_cast<size_t>(best)].push_back(t);
    p.rows_of[static_cast<size_t>(best)] += table_sizes[static_cast<size_t>(t)];
  }
  for (auto& mine : p.tables_of) std::sort(mine.begin(), mine.end());
  return p;
}

nlohmann::json placement_json(const TablePlacement& placement) {
  nlohmann::json ranks = nlohmann::json::array();
  for (size_t r = 0; r < placement.tables_of.size(); ++r) {
    ranks.push_back({{"rank", r}, {"tables", placement.tables_of[r]}, {"rows", placement.rows_of[r]}});
  }
  return {{"strategy", "table-wise, balanced by rows (largest first to the rank with fewest rows)"},
          {"ranks", ranks}};
}

int64_t slice_first(int64_t batch, int ranks, int rank) { return batch * rank / ranks; }

ExchangeBytes model_parallel_exchange_bytes(const TablePlacement& placement, int64_t batch, int embed_dim) {
  const auto ranks = static_cast<int>(placement.tables_of.size());
  double rows = 0;  // embedding vectors sent by all ranks
  for (int r = 0; r < ranks; ++r) {
    const int64_t others = batch - (slice_first(batch, ranks, r + 1) - slice_first(batch, ranks, r));
    rows += static_cast<double>(others) * static_cast<double>(placement.tables_of[static_cast<size_t>(r)].size());
  }
  const double bytes = rows * embed_dim * static_cast<double>(kFloat);
  return {bytes, bytes};
}

ShardedModel::ShardedModel(ModelShape shape, uint64_t seed, collectives::Communicator& comm, int64_t global_batch,
                           ShardingOptions options)
    : comm_(comm),
      rank_(comm.rank()),
      size_(comm.size()),
      shape_(std::move(shape)),
      placement_(place_tables(shape_.table_sizes, size_)),
      global_batch_(global_batch),
      dim_(shape_.embed_dim),
      dense_(shape_, seed, EmbeddingStorage::kExternal),
      overlap_(options.overlap),
      mode_(options.mode),
      frequent_(std::move(options.frequent)) {
  if (global_batch_ < size_) {
    throw UsageError(fmt::format("dlrm: batch_size {} is smaller than the {} ranks it is split across",
                                 global_batch_, size_));
  }
  mine_ = placement_.tables_of[static_cast<size_t>(rank_)];
  for (int r = 0; r <= size_; ++r) first_.push_back(slice_first(global_batch_, size_, r));
  tables_before_.assign(1, 0);
  for (int r = 0; r < size_; ++r) {
    tables_before_.push_back(tables_before_.back() + static_cast<int64_t>(placement_.tables_of[r].size()));
  }
  local_n_ = first_[rank_ + 1] - first_[rank_];
  for (int t : mine_) {
    const int64_t rows = shape_.table_sizes[static_cast<size_t>(t)];
    tables_.emplace_back(static_cast<size_t>(rows * dim_));
    initialise_table(seed, t, rows, dim_, tables_.back().data());
  }
  for (auto& table : tables_) table_rows_.push_back(table.data());

  const auto own = static_cast<int64_t>(mine_.size());
  const int64_t width = static_cast<int64_t>(shape_.table_sizes.size()) * dim_;
  ids_.resize(static_cast<size_t>(global_batch_ * own));
  looked_up_.resize(static_cast<size_t>(global_batch_ * own * dim_));
  grad_in_.resize(looked_up_.size());
  received_.resize(static_cast<size_t>(local_n_ * width));
  grad_out_.resize(received_.size());
  dense_.reserve_batch(local_n_);

  if (mode_ == EmbeddingMode::kHybrid) init_hybrid(seed);

  // Model parallel: rank j's rows start at its first sample in the own
  // lookups, and at its first table in the received [n_r, T_j, D] segments.
  transfers_.reserve(2 * static_cast<size_t>(size_));
  for (int j = 0; j <= size_; ++j) {
    own_rows_before_.push_back(first_[j] * own);
    peer_rows_before_.push_back(local_n_ * tables_before_[j]);
  }
}

bool ShardedModel::owns(int table) const {
  return std::find(mine_.begin(), mine_.end(), table) != mine_.end();
}

float* ShardedModel::embedding_row(int table, int64_t row) {
  const auto it = std::find(mine_.begin(), mine_.end(), table);
  if (it == mine_.end()) {
    throw std::out_of_range(fmt::format("ShardedModel: table {} is not on rank {}", table, rank_));
  }
  return tables_[static_cast<size_t>(it - mine_.begin())].data() + row * dim_;
}

void ShardedModel::check_ids(const BatchView& batch) const {
  if (batch.size < 1) throw UsageError("DLRM batch is empty");
  const auto tables = static_cast<int64_t>(shape_.table_sizes.size());
  for (int64_t b = 0; b < batch.size; ++b) {
    for (int t : mine_) {
      const int32_t id = batch.categorical[b * tables + t];
      const int64_t rows = shape_.table_sizes[static_cast<size_t>(t)];
      if (id < 0 || id >= rows) {
        throw UsageError(fmt::format("DLRM batch: id {} of sample {} is outside table {} of {} rows", id, b, t,
                                     rows));
      }
    }
  }
}

void ShardedModel::lookup(const BatchView& batch, float* out) {  // ids_ holds batch.size rows (reserved)
  check_ids(batch);
  const auto tables = static_cast<int64_t>(shape_.table_sizes.size());
  const auto own = static_cast<int64_t>(mine_.size());
  for (int64_t b = 0; b < batch.size; ++b) {
    for (int64_t k = 0; k < own; ++k) ids_[b * own + k] = batch.categorical[b * tables + mine_[k]];
  }
  k::embedding_forward({batch.size, static_cast<int>(own), dim_}, table_rows_.data(), ids_.data(), out);
}

void ShardedModel::scatter_received(int64_t n, const float* received, float* embeddings) const {
  for_each_row(n, [&](int64_t segments_at, int64_t embeddings_at) {
    copy_floats(received + segments_at, embeddings + embeddings_at, dim_);
  });
}

void ShardedModel::gather_to_send(int64_t n, const float* embeddings, float* segments) const {
  for_each_row(n, [&](int64_t segments_at, int64_t embeddings_at) {
    copy_floats(embeddings + embeddings_at, segments + segments_at, dim_);
  });
}

void ShardedModel::start_exchange(const float* send, const std::vector<int64_t>& send_rows, float* recv,
                                  const std::vector<int64_t>& recv_rows) {
  exposed_.time([&] {
    copy_floats(send + send_rows[rank_] * dim_, recv + recv_rows[rank_] * dim_,
                (send_rows[rank_ + 1] - send_rows[rank_]) * dim_);
    transfers_.clear();
    for (int j = 0; j < size_; ++j) {
      if (j == rank_) continue;
      const auto out = static_cast<size_t>((send_rows[j + 1] - send_rows[j]) * dim_);
      const auto in = static_cast<size_t>((recv_rows[j + 1] - recv_rows[j]) * dim_);
      transfers_.push_back({j, send + send_rows[j] * dim_, nullptr, out});
      transfers_.push_back({j, nullptr, recv + recv_rows[j] * dim_, in});
    }
    if (!transfers_.empty()) comm_.send_recv_start(transfers_.data(), transfers_.size(), DataType::kFloat32);
  });
}

void ShardedModel::finish_exchange() {
  exposed_.time([&] { comm_.send_recv_wait(); });
}

double ShardedModel::train_step(const BatchView& batch, float learning_rate) {
  if (batch.size != global_batch_) {
    throw std::logic_error(fmt::format("ShardedModel::train_step: batch of {} samples, built for {}", batch.size,
                                       global_batch_));
  }
  const bool hybrid = mode_ == EmbeddingMode::kHybrid;
  BatchView local;
  local.size = local_n_;
  local.dense = batch.dense + first_[rank_] * shape_.num_dense;
  local.labels = batch.labels + first_[rank_];

  // Forward: the embeddings travel while the bottom MLP runs (overlap).
  if (hybrid) {
    hybrid_forward_start(batch);
  } else {
    lookup(batch, looked_up_.data());
    start_exchange(looked_up_.data(), own_rows_before_, received_.data(), peer_rows_before_);
  }
  if (overlap_) dense_.forward_bottom_external(local);
  finish_exchange();
  if (hybrid) {
    hybrid_assemble(batch);
  } else {
    scatter_received(local_n_, received_.data(), dense_.embeddings_buffer(local_n_));
  }
  const double share = static_cast<double>(local_n_) / static_cast<double>(global_batch_);
  const double loss = dense_.forward_backward_external(local, share);

  // Backward: the embedding gradients travel while the MLP gradients are
  // all-reduced (overlap).
  if (hybrid) {
    hybrid_backward_start();
  } else {
    gather_to_send(local_n_, dense_.embedding_gradients(), grad_out_.data());
    start_exchange(grad_out_.data(), peer_rows_before_, grad_in_.data(), own_rows_before_);
  }
  if (!overlap_) finish_exchange();
  if (size_ > 1) {
    exposed_.time([&] {
      comm_.all_reduce(dense_.dense_gradients(), dense_.dense_gradients(), static_cast<size_t>(dense_.dense_count()),
                       DataType::kFloat32, collectives::ReduceOp::kSum);
      if (!replica_grad_.empty()) {
        comm_.all_reduce(replica_grad_.data(), replica_grad_.data(), replica_grad_.size(), DataType::kFloat32,
                         collectives::ReduceOp::kSum);
      }
    });
  }
  finish_exchange();
  dense_.apply_dense_gradients(learning_rate);
  apply_embedding_gradients(learning_rate);
  ++steps_;
  exposed_.end_iteration();
  return loss * share;
}

nlohmann::json ShardedModel::step_facts() const {
  const double per_step = steps_ > 0 ? exposed_.total_ms() / static_cast<double>(steps_) : 0.0;
  return {{"overlap", overlap_},
          {"exposed_communication_ms_per_iteration", per_step},
          {"exposed_communication_basis",
           fmt::format("rank {}: host time blocked in the embedding exchanges and the gradient all-reduce, mean "
                       "over {} iterations (warm-up included)",
                       rank_, steps_)}};
}

void ShardedModel::apply_embedding_gradients(float learning_rate) {
  if (mode_ == EmbeddingMode::kModelParallel) {
    k::embedding_sgd_update({global_batch_, static_cast<int>(mine_.size()), dim_}, table_rows_.data(), ids_.data(),
                            grad_in_.data(), learning_rate, update_scratch_);
    return;
  }
  // Replicas: the all-reduced gradient, the same on every rank.
  const auto replicated = static_cast<int64_t>(replica_.size());
  for (int64_t i = 0; i < replicated; ++i) replica_[i] -= learning_rate * replica_grad_[i];
  // Own infrequent rows: each rank's summed gradient, rank by rank.
  for (int q = 0; q < size_; ++q) {
    const RowList& rows = to_rank_[static_cast<size_t>(q)];
    const float* grad = grad_in_.data() + to_first_[q] * dim_;
    for (size_t i = 0; i < rows.size(); ++i) {
      float* row = embedding_row(rows[i].first, rows[i].second);
      for (int64_t d = 0; d < dim_; ++d) row[d] -= learning_rate * grad[static_cast<int64_t>(i) * dim_ + d];
    }
  }
}

void ShardedModel::reserve_batch(int64_t batch) {
  const auto own = static_cast<int64_t>(mine_.size());
  const int64_t width = rank_ == 0 ? static_cast<int64_t>(shape_.table_sizes.size()) * dim_ : own * dim_;
  if (static_cast<int64_t>(predict_rows_.size()) < batch * width) predict_rows_.resize(static_cast<size_t>(batch * width));
  if (static_cast<int64_t>(ids_.size()) < batch * own) ids_.resize(static_cast<size_t>(batch * own));
  if (rank_ == 0) dense_.reserve_batch(batch);
}

void ShardedModel::predict(const BatchView& batch, float* probabilities) {
  const int64_t n = batch.size;
  const auto own = static_cast<int64_t>(mine_.size());
  reserve_batch(n);
  // Rank 0's segment comes first, so its own rows land in place.
  lookup(batch, predict_rows_.data());
  predict_transfers_.clear();
  if (rank_ == 0) {
    for (int j = 1; j < size_; ++j) {
      const auto count = static_cast<size_t>(n * static_cast<int64_t>(placement_.tables_of[j].size()) * dim_);
      predict_transfers_.push_back({j, nullptr, predict_rows_.data() + segment(j, n), count});
    }
  } else {
    predict_transfers_.push_back({0, predict_rows_.data(), nullptr, static_cast<size_t>(n * own * dim_)});
  }
  if (size_ > 1) comm_.send_recv(predict_transfers_.data(), predict_transfers_.size(), DataType::kFloat32);
  if (rank_ != 0) return;
  float* embeddings = dense_.embeddings_buffer(n);
  scatter_received(n, predict_rows_.data(), embeddings);
  if (mode_ == EmbeddingMode::kHybrid) {
    // The owners' copies of frequent rows are stale: the replicas train.
    const auto tables = static_cast<int64_t>(shape_.table_sizes.size());
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t t = 0; t < tables; ++t) {
        const int32_t at = frequent_.index[static_cast<size_t>(t)][static_cast<size_t>(batch.categorical[b * tables + t])];
        if (at >= 0) copy_floats(replica_.data() + (replica_first_[t] + at) * dim_, embeddings + (b * tables + t) * dim_, dim_);
      }
    }
  }
  dense_.predict_external(batch, probabilities);
}

}  // namespace perflab::dlrm
