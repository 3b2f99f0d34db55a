// Multi-table embedding lookup and sparse SGD update on the CPU.
#include "kernels/cpu/embedding.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

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
    // Sum each touched row's gradients in sample order, then apply the sum
    // once: a hot row's many small steps would otherwise round away against
    // the row's value (seen at batch 65536, where lr·g is below half an ulp).
    std::unordered_map<int32_t, int64_t> position;
    position.reserve(static_cast<size_t>(shape.batch));
    std::vector<int32_t> rows;
    std::vector<float> sums;
    for (int64_t b = 0; b < shape.batch; ++b) {
      const int64_t slot = b * tables_per_sample + t;
      const auto [it, inserted] = position.try_emplace(ids[slot], static_cast<int64_t>(rows.size()));
      if (inserted) {
        rows.push_back(ids[slot]);
        sums.resize(sums.size() + static_cast<size_t>(dim), 0.0f);
      }
      float* sum = sums.data() + it->second * dim;
      const float* g = grad + slot * dim;
#pragma omp simd
      for (int64_t d = 0; d < dim; ++d) sum[d] += g[d];
    }
    float* table = tables[t];
    for (size_t u = 0; u < rows.size(); ++u) {
      float* row = table + static_cast<int64_t>(rows[u]) * dim;
      const float* sum = sums.data() + static_cast<int64_t>(u) * dim;
#pragma omp simd
      for (int64_t d = 0; d < dim; ++d) {
        const float step = learning_rate * sum[d];
        row[d] -= step;
      }
    }
  }
}

}  // namespace perflab::kernels::cpu
