// Multi-table embedding lookup and sparse SGD update on the CPU.
#include "kernels/cpu/embedding.h"

#include <algorithm>

namespace perflab::kernels::cpu {

void embedding_forward(const EmbeddingShape& shape, const float* const* tables, const int32_t* ids,
                       float* out) {
  const int64_t tables_per_sample = shape.num_tables;
  const int64_t dim = shape.dim;
  // A gather: every output row is written once, so any split is deterministic.
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t t = 0; t < tables_per_sample; ++t) {
      const int64_t slot = b * tables_per_sample + t;
      const float* row = tables[t] + static_cast<int64_t>(ids[slot]) * dim;
      std::copy(row, row + dim, out + slot * dim);
    }
  }
}

void embedding_sgd_update(const EmbeddingShape& shape, float* const* tables, const int32_t* ids,
                          const float* grad, float learning_rate) {
  const int64_t tables_per_sample = shape.num_tables;
  const int64_t dim = shape.dim;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < tables_per_sample; ++t) {
    float* table = tables[t];
    for (int64_t b = 0; b < shape.batch; ++b) {
      const int64_t slot = b * tables_per_sample + t;
      float* row = table + static_cast<int64_t>(ids[slot]) * dim;
      const float* g = grad + slot * dim;
#pragma omp simd
      for (int64_t d = 0; d < dim; ++d) row[d] -= learning_rate * g[d];
    }
  }
}

}  // namespace perflab::kernels::cpu
