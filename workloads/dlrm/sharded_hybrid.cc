// ShardedModel's hybrid embedding (sharded_model.h, hybrid_embedding.h):
// replicas of the frequent categories, and the deduplicated exchange of the
// infrequent rows, forward and backward.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "workloads/dlrm/sharded_model.h"

namespace perflab::dlrm {
namespace {

void add_floats(const float* from, float* to, int64_t count) {
  for (int64_t i = 0; i < count; ++i) to[i] += from[i];
}

}  // namespace

ExchangeBytes hybrid_exchange_bytes(const TablePlacement& placement, const FrequentCategories& frequent,
                                    const BatchView& batch, int embed_dim) {
  const auto ranks = static_cast<int>(placement.tables_of.size());
  RowList rows;
  double sent = 0;  // rows sent by every owner to every other rank
  for (int j = 0; j < ranks; ++j) {
    for (int q = 0; q < ranks; ++q) {
      if (q == j) continue;
      const int64_t first = slice_first(batch.size, ranks, q);
      unique_infrequent_rows(batch, first, slice_first(batch.size, ranks, q + 1) - first,
                             placement.tables_of[static_cast<size_t>(j)], frequent, rows);
      sent += static_cast<double>(rows.size());
    }
  }
  const double bytes = sent * embed_dim * static_cast<double>(sizeof(float));
  return {bytes, bytes};
}

void ShardedModel::replica_row(int table, int32_t id, float* row) const {
  if (mode_ != EmbeddingMode::kHybrid || !frequent_.frequent(table, id)) {
    throw std::out_of_range("ShardedModel: no replica of this category");
  }
  const int32_t at = frequent_.index[static_cast<size_t>(table)][static_cast<size_t>(id)];
  std::memcpy(row, replica_.data() + (replica_first_[static_cast<size_t>(table)] + at) * dim_,
              static_cast<size_t>(dim_) * sizeof(float));
}

void ShardedModel::init_hybrid(uint64_t seed) {
  const size_t tables = shape_.table_sizes.size();
  if (frequent_.index.size() != tables) {
    throw std::logic_error("ShardedModel: the hybrid embedding needs the frequent categories of every table");
  }
  replica_first_.assign(1, 0);
  for (size_t t = 0; t < tables; ++t) {
    if (frequent_.index[t].size() != static_cast<size_t>(shape_.table_sizes[t])) {
      throw std::logic_error("ShardedModel: frequent categories for tables of another size");
    }
    replica_first_.push_back(replica_first_.back() + static_cast<int64_t>(frequent_.ids[t].size()));
  }
  // Every replica starts from the row the single process starts from.
  replica_.resize(static_cast<size_t>(replica_first_.back() * dim_));
  std::vector<float> initial;
  for (size_t t = 0; t < tables; ++t) {
    if (frequent_.ids[t].empty()) continue;
    initial.resize(static_cast<size_t>(shape_.table_sizes[t] * dim_));
    initialise_table(seed, static_cast<int>(t), shape_.table_sizes[t], dim_, initial.data());
    for (size_t i = 0; i < frequent_.ids[t].size(); ++i) {
      std::memcpy(replica_.data() + (replica_first_[t] + static_cast<int64_t>(i)) * dim_,
                  initial.data() + frequent_.ids[t][i] * dim_, static_cast<size_t>(dim_) * sizeof(float));
    }
  }
  replica_grad_.assign(replica_.size(), 0.0f);
  // Lists and slots at their largest, so steps do not allocate.
  from_owner_.resize(static_cast<size_t>(size_));
  to_rank_.resize(static_cast<size_t>(size_));
  const auto own = static_cast<int64_t>(mine_.size());
  for (int j = 0; j < size_; ++j) {
    from_owner_[j].reserve(static_cast<size_t>(local_n_ * static_cast<int64_t>(placement_.tables_of[j].size())));
    to_rank_[j].reserve(static_cast<size_t>((first_[j + 1] - first_[j]) * own));
  }
  from_first_.assign(static_cast<size_t>(size_) + 1, 0);
  to_first_.assign(static_cast<size_t>(size_) + 1, 0);
  slot_.resize(static_cast<size_t>(local_n_ * static_cast<int64_t>(tables)));
}

void ShardedModel::hybrid_forward_start(const BatchView& batch) {
  check_ids(batch);
  for (int j = 0; j < size_; ++j) {
    unique_infrequent_rows(batch, first_[rank_], local_n_, placement_.tables_of[j], frequent_, from_owner_[j]);
    if (j == rank_) {
      to_rank_[j] = from_owner_[j];
    } else {
      unique_infrequent_rows(batch, first_[j], first_[j + 1] - first_[j], mine_, frequent_, to_rank_[j]);
    }
    from_first_[j + 1] = from_first_[j] + static_cast<int64_t>(from_owner_[j].size());
    to_first_[j + 1] = to_first_[j] + static_cast<int64_t>(to_rank_[j].size());
  }
  // The owner's rows for every rank, each once; its own part is a copy.
  for (int q = 0; q < size_; ++q) {
    float* out = looked_up_.data() + to_first_[q] * dim_;
    for (const auto& [t, id] : to_rank_[q]) {
      std::memcpy(out, embedding_row(t, id), static_cast<size_t>(dim_) * sizeof(float));
      out += dim_;
    }
  }
  start_exchange(looked_up_.data(), to_first_, received_.data(), from_first_);
}

void ShardedModel::hybrid_assemble(const BatchView& batch) {
  const auto tables = static_cast<int64_t>(shape_.table_sizes.size());
  float* embeddings = dense_.embeddings_buffer(local_n_);
  for (int64_t b = 0; b < local_n_; ++b) {
    for (int64_t t = 0; t < tables; ++t) {
      const int32_t id = batch.categorical[(first_[rank_] + b) * tables + t];
      const int32_t at = frequent_.index[t][id];
      int64_t& slot = slot_[b * tables + t];
      const float* from = nullptr;
      if (at >= 0) {
        slot = -1 - (replica_first_[t] + at);
        from = replica_.data() + (replica_first_[t] + at) * dim_;
      } else {
        const int j = placement_.owner[t];
        slot = from_first_[j] + position_of(from_owner_[j], {static_cast<int>(t), id});
        from = received_.data() + slot * dim_;
      }
      std::memcpy(embeddings + (b * tables + t) * dim_, from, static_cast<size_t>(dim_) * sizeof(float));
    }
  }
}

void ShardedModel::hybrid_backward_start() {
  const auto lookups = static_cast<int64_t>(slot_.size());
  const float* grad = dense_.embedding_gradients();
  std::fill(grad_out_.begin(), grad_out_.begin() + from_first_[size_] * dim_, 0.0f);
  std::fill(replica_grad_.begin(), replica_grad_.end(), 0.0f);
  // One summed gradient per exchanged row, one per replica (sample order).
  for (int64_t i = 0; i < lookups; ++i) {
    const int64_t slot = slot_[i];
    float* to = slot >= 0 ? grad_out_.data() + slot * dim_ : replica_grad_.data() + (-1 - slot) * dim_;
    add_floats(grad + i * dim_, to, dim_);
  }
  start_exchange(grad_out_.data(), from_first_, grad_in_.data(), to_first_);
}

}  // namespace perflab::dlrm
