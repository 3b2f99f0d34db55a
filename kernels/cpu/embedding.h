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

/// Sparse SGD on the rows the batch touched: for each sample b in order and
/// each table t, tables[t][ids[b, t], :] -= learning_rate * grad[b, t, :].
/// A row looked up several times in the batch receives every contribution.
/// Parallel over tables (one thread owns a table, samples in order), so the
/// result does not depend on the thread count.
void embedding_sgd_update(const EmbeddingShape& shape, float* const* tables, const int32_t* ids,
                          const float* grad, float learning_rate);

}  // namespace perflab::kernels::cpu
