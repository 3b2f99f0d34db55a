// DLRM across the ranks of a communicator (CPU backend, MPI): the embedding
// tables placed on ranks whole (model parallel, balanced by rows), the bottom
// and top MLPs replicated (data parallel), the global batch split across
// ranks.
//
// One training step on rank r (B samples in all, n_r of them this rank's):
//   1. look up rank r's own tables for all B samples          -> [B, T_r, D]
//   2. forward all-to-all: to every rank j the rows of j's samples
//      ([n_j, T_r, D]); from every j the rows of j's tables for r's samples
//   3. bottom MLP, interaction, top MLP, BCE and backward on the n_r local
//      samples, the loss gradient scaled by n_r / B (so every gradient is
//      this rank's share of the global batch's mean)
//   4. backward all-to-all: the embedding gradients go back to the tables'
//      owners ([n_r, T_j, D] to rank j)
//   5. all-reduce (sum) of the dense gradients; SGD on the MLPs (every
//      replica identical) and sparse SGD on the own tables.
// With overlap (ShardingOptions::overlap, the default) the bottom MLP runs
// between posting exchange 2 and waiting for it, and the all-reduce of 5
// between posting exchange 4 and waiting for it (non-blocking MPI).
// With the hybrid embedding (hybrid_embedding.h) the frequent categories
// are replicas on every rank, looked up locally and their gradients
// all-reduced; steps 1, 2 and 4 exchange each infrequent row a rank's
// samples need once (deduplicated), and the owner applies the gradients it
// gets back.
// The exchanges are grouped sends and receives with per-peer counts
// (Communicator::send_recv), into buffers allocated once. One rank gives
// the single-process model's step; P ranks give it within fp32 rounding
// (the sums over the batch are split differently).
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/communicator.h"
#include "harness/part_timer.h"
#include "kernels/cpu/embedding.h"
#include "workloads/dlrm/batch.h"
#include "workloads/dlrm/hybrid_embedding.h"
#include "workloads/dlrm/model.h"

namespace perflab::dlrm {

/// Which rank holds each embedding table.
struct TablePlacement {
  std::vector<int> owner;                   ///< owner[t]: the rank holding table t.
  std::vector<std::vector<int>> tables_of;  ///< Per rank, its tables in ascending order.
  std::vector<int64_t> rows_of;             ///< Per rank, the rows of its tables.
};

/// Table-wise placement balanced by size: largest table first, each to the
/// rank holding the fewest rows so far (the lowest rank on a tie). The same
/// on every rank. Throws UsageError when there are more ranks than tables.
TablePlacement place_tables(const std::vector<int64_t>& table_sizes, int ranks);

/// The placement as recorded in the result: per rank, its tables and rows.
nlohmann::json placement_json(const TablePlacement& placement);

/// First global sample of rank r's slice of a `batch`-sample batch split
/// over `ranks` (r = ranks gives batch): slices differ by at most one
/// sample, rank r holding [first(r), first(r + 1)).
int64_t slice_first(int64_t batch, int ranks, int rank);

/// Bytes the two exchanges of one training step move between ranks, summed
/// over every rank (a rank's rows for itself are copied, not counted).
struct ExchangeBytes {
  double forward = 0;   ///< Embedding vectors to the ranks whose samples need them.
  double backward = 0;  ///< Their gradients back to the tables' owners.
};

/// The model-parallel exchange's bytes for one step: Σ over ranks r of
/// (B - n_r) × (rows of r's tables looked up per sample: T_r) × D × 4, each way.
ExchangeBytes model_parallel_exchange_bytes(const TablePlacement& placement, int64_t batch, int embed_dim);

/// The hybrid exchange's bytes for one global batch (deduplicated
/// infrequent rows, each way), summed over every rank.
ExchangeBytes hybrid_exchange_bytes(const TablePlacement& placement, const FrequentCategories& frequent,
                                    const BatchView& batch, int embed_dim);

/// How the embeddings are split over ranks.
enum class EmbeddingMode {
  kModelParallel,  ///< Every table whole on one rank; every lookup exchanged.
  kHybrid,         ///< Frequent categories replicated; the rest model parallel, deduplicated.
};

/// How a ShardedModel splits and exchanges its embeddings.
struct ShardingOptions {
  EmbeddingMode mode = EmbeddingMode::kModelParallel;
  FrequentCategories frequent;  ///< kHybrid: the replicated categories (find_frequent over these tables).
  /// Run the bottom MLP while the embeddings travel, and all-reduce the
  /// MLP gradients while the embedding gradients travel (non-blocking
  /// sends and receives); off: each exchange completes before work goes on.
  bool overlap = true;
};

class ShardedModel {
 public:
  /// Every rank builds its part of the model of CpuModel(shape, seed):
  /// its own tables and a replica of the MLPs, initialised to the same
  /// values. `global_batch` is the training batch over all ranks.
  ShardedModel(ModelShape shape, uint64_t seed, collectives::Communicator& comm, int64_t global_batch,
               ShardingOptions options = {});
  ShardedModel(const ShardedModel&) = delete;
  ShardedModel& operator=(const ShardedModel&) = delete;
  ~ShardedModel() = default;

  /// One SGD step on the global batch (`batch` is all global_batch samples,
  /// the same on every rank; this rank trains its slice). Collective: every
  /// rank calls it. Returns this rank's share of the batch's mean loss
  /// (its slice's mean × n_r / B): the shares of all ranks sum to the mean.
  /// Throws UsageError on ids outside this rank's tables.
  double train_step(const BatchView& batch, float learning_rate);

  /// σ(logit) of every sample of `batch` (the same on every rank) into
  /// probabilities [batch.size] on rank 0; the other ranks send their
  /// tables' rows to rank 0 and leave `probabilities` alone. Collective.
  /// Grows its buffers to the largest batch seen.
  void predict(const BatchView& batch, float* probabilities);

  /// Grows the prediction buffers to `batch` samples now (predict grows
  /// them itself otherwise).
  void reserve_batch(int64_t batch);

  /// What the steps so far measured, for the run's facts: whether the
  /// exchanges overlapped compute, and the host time per step this rank
  /// spent blocked in communication (the exposed communication time).
  nlohmann::json step_facts() const;
  /// This rank's host time blocked in communication, per step: the part
  /// "exposed communication" (TimedStep::time_parts).
  const PartStopwatch& exposed_communication() const { return exposed_; }

  const TablePlacement& placement() const { return placement_; }
  const ModelShape& shape() const { return shape_; }
  int64_t local_batch() const { return local_n_; }

  /// The MLP replica (its dense_parameters are the same on every rank).
  CpuModel& dense() { return dense_; }
  /// Whether this rank holds table `table`.
  bool owns(int table) const;
  /// Row `row` of own table `table` (throws std::out_of_range otherwise).
  float* embedding_row(int table, int64_t row);
  /// Hybrid: the replica of frequent category (table, id), into row
  /// [embed_dim] (throws std::out_of_range when it is not replicated).
  void replica_row(int table, int32_t id, float* row) const;

  /// Rows received per peer ([n, T_j, D] segments) into [n, T, D]. Public so
  /// tests check the cuda backend's layout (exchange_layout.h) against it.
  void scatter_received(int64_t n, const float* received, float* embeddings) const;
  /// The inverse: [n, T, D] into per-peer segments.
  void gather_to_send(int64_t n, const float* embeddings, float* segments) const;

 private:
  void check_ids(const BatchView& batch) const;
  /// Posts one exchange: peer j's rows (embed_dim floats each) are rows
  /// [send_rows[j], send_rows[j + 1]) of `send`, and arrive at rows
  /// [recv_rows[j], ...) of `recv`; this rank's own part is copied.
  void start_exchange(const float* send, const std::vector<int64_t>& send_rows, float* recv,
                      const std::vector<int64_t>& recv_rows);
  void finish_exchange();
  /// Hybrid: the deduplicated rows, packed and posted; then, when they
  /// have arrived, the local samples' embeddings; the gradients, summed
  /// per row and posted.
  void hybrid_forward_start(const BatchView& batch);
  void hybrid_assemble(const BatchView& batch);
  void hybrid_backward_start();
  void apply_embedding_gradients(float learning_rate);
  void init_hybrid(uint64_t seed);
  void lookup(const BatchView& batch, float* out);
  /// visit(offset in per-peer segments, offset in [n, T, D]) for every
  /// (sample, table) of n samples, in parallel.
  template <typename Visit>
  void for_each_row(int64_t n, Visit visit) const {
    const auto tables = static_cast<int64_t>(shape_.table_sizes.size());
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < n; ++b) {
      for (int j = 0; j < size_; ++j) {
        const std::vector<int>& theirs = placement_.tables_of[static_cast<size_t>(j)];
        const auto count = static_cast<int64_t>(theirs.size());
        for (int64_t q = 0; q < count; ++q) visit(segment(j, n) + (b * count + q) * dim_, (b * tables + theirs[q]) * dim_);
      }
    }
  }
  /// Where peer j's [n, T_j, D] segment starts in a per-peer buffer.
  int64_t segment(int j, int64_t n) const { return n * tables_before_[static_cast<size_t>(j)] * dim_; }

  collectives::Communicator& comm_;
  int rank_ = 0;
  int size_ = 1;
  ModelShape shape_;
  TablePlacement placement_;
  std::vector<int> mine_;          // this rank's tables
  std::vector<int64_t> first_;     // slice_first per rank, size_ + 1 entries
  std::vector<int64_t> tables_before_;  // per rank j: tables of ranks < j (size_ + 1 entries)
  int64_t global_batch_ = 0;
  int64_t local_n_ = 0;
  int64_t dim_ = 0;

  CpuModel dense_;
  std::vector<std::vector<float>> tables_;  // own tables, in mine_ order
  std::vector<float*> table_rows_;
  kernels::cpu::EmbeddingUpdateScratch update_scratch_;

  std::vector<int32_t> ids_;        // [B, T_r]: own tables' ids of the global batch
  std::vector<float> looked_up_;    // [B, T_r, D]
  std::vector<float> received_;     // [n_r, T, D] in per-peer segments
  std::vector<float> grad_out_;     // [n_r, T, D] in per-peer segments (gradients to owners)
  std::vector<float> grad_in_;      // [B, T_r, D]: gradients of own tables
  std::vector<int64_t> own_rows_before_;   // per rank j: own lookups of samples before j's (size_ + 1)
  std::vector<int64_t> peer_rows_before_;  // per rank j: received rows before j's segment (size_ + 1)
  std::vector<collectives::PeerTransfer> transfers_;  // the exchange in flight (capacity 2 size_)
  bool overlap_ = true;
  PartStopwatch exposed_;  // host time blocked in communication, per step (the harness's clock)
  int64_t steps_ = 0;

  // Hybrid: the replicated rows ([frequent, D], table by table), their
  // gradients, and per step the deduplicated rows each owner sends.
  EmbeddingMode mode_ = EmbeddingMode::kModelParallel;
  FrequentCategories frequent_;
  std::vector<int64_t> replica_first_;       // per table: its first row in replica_
  std::vector<float> replica_;
  std::vector<float> replica_grad_;
  std::vector<RowList> from_owner_;          // per owner j: the rows this rank's samples need
  std::vector<RowList> to_rank_;             // per rank q: the own rows q's samples need
  std::vector<int64_t> from_first_, to_first_;  // rows before each peer's segment (size_ + 1)
  std::vector<int64_t> slot_;                // per local lookup: received row, or -1 - replica row

  std::vector<float> predict_rows_;  // predict: own rows [n, T_r, D]; on rank 0 also received
  std::vector<collectives::PeerTransfer> predict_transfers_;
};

}  // namespace perflab::dlrm
