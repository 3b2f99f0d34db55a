// Multi-table embedding lookup on the CPU and its sparse SGD update. This is
// the reference the CUDA embedding kernels are tested against.
//
// Layout (all row-major):
//   table t   [rows_t, dim]           one per categorical feature
//   ids       [batch, num_tables]     int32, ids[b, t] in [0, rows_t)
//   out/grad  [batch, num_tables, dim]
// Ids are not checked here: the caller validates them once per batch.
// Nothing here allocates.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace perflab::kernels::cpu {

/// Problem size of a multi-table lookup.
struct EmbeddingShape {
  int64_t batch = 0;   ///< B: samples.
  int num_tables = 0;  ///< T: tables, one id per sample each.
  int64_t dim = 0;     ///< D: floats per row, the same for every table.
};

/// out[b, t, :] = tables[t][ids[b, t], :]. `tables` holds num_tables pointers.
void embedding_forward(const EmbeddingShape& shape, const float* const* tables, const int32_t* ids,
                       float* out);

/// Sparse SGD on the rows the batch touched: for each table t and each row r
/// it looked up, tables[t][r, :] -= learning_rate * Σ grad[b, t, :] over the
/// samples b with ids[b, t] = r, summed in sample order and applied once (as
/// the CUDA update does, so the two agree bit for bit on the same gradients).
/// Parallel over tables (one thread owns a table), so the result does not
/// depend on the thread count.
/// The update's per-table scratch (the samples ordered by row, and one
/// row's summed gradient), kept by the caller so that steps after the first
/// allocate nothing.
struct EmbeddingUpdateScratch {
  std::vector<std::vector<std::pair<int32_t, int64_t>>> order;  // (row, sample)
  std::vector<std::vector<float>> sum;
};

/// How updated rows are stored: as fp32 (the default), or stochastically
/// rounded to bf16 (bf16.h), each element drawing its rounding from (key,
/// step, table, row * dim + column) alone, so the result still does not
/// depend on the thread count.
struct RowRounding {
  bool stochastic_bf16 = false;
  uint64_t key = 0;   ///< Fixed for a run (from its seed).
  uint64_t step = 0;  ///< The step's number: a fresh draw every step.
};

void embedding_sgd_update(const EmbeddingShape& shape, float* const* tables, const int32_t* ids,
                          const float* grad, float learning_rate, EmbeddingUpdateScratch& scratch,
                          const RowRounding& rounding = {});

/// As above with scratch of its own (tests, one-off calls).
void embedding_sgd_update(const EmbeddingShape& shape, float* const* tables, const int32_t* ids,
                          const float* grad, float learning_rate);

}  // namespace perflab::kernels::cpu
