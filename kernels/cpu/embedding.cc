// Multi-table embedding lookup and sparse SGD update on the CPU.
#include "kernels/cpu/embedding.h"

#include <algorithm>
#include <vector>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/dispatch.h"

namespace perflab::kernels::cpu {
namespace {

/// Asks for the cache lines of one row (dim floats) ahead of use; the first
/// eight lines at most (512 floats), enough to hide the latency of the rest.
[[gnu::always_inline]] inline void prefetch_row(const float* row, int64_t dim, bool write = false) {
  constexpr int64_t kLineFloats = 16;
  const int64_t lines = std::min<int64_t>((dim + kLineFloats - 1) / kLineFloats, 8);
  for (int64_t l = 0; l < lines; ++l) {
    if (write) {
      __builtin_prefetch(row + l * kLineFloats, 1);
    } else {
      __builtin_prefetch(row + l * kLineFloats, 0);
    }
  }
}

/// Sorted (row, sample) pairs this far ahead have their rows prefetched.
constexpr size_t kPrefetchDistance = 8;

}  // namespace

PERFLAB_CPU_DISPATCH
void embedding_forward(const EmbeddingShape& shape, const float* const* tables, const int32_t* ids,
                       float* out) {
  const int64_t tables_per_sample = shape.num_tables;
  const int64_t dim = shape.dim;
  // A gather: every output row is written once, so any split is deterministic.
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t t = 0; t < tables_per_sample; ++t) {
      const int64_t slot = b * tables_per_sample + t;
      // Rows are scattered over tables far larger than the caches: start
      // loading the next sample's row of this table while this one copies.
      if (b + 1 < shape.batch) {
        prefetch_row(tables[t] + static_cast<int64_t>(ids[slot + tables_per_sample]) * dim, dim);
      }
      const float* row = tables[t] + static_cast<int64_t>(ids[slot]) * dim;
      std::copy(row, row + dim, out + slot * dim);
    }
  }
}

PERFLAB_CPU_DISPATCH
void embedding_sgd_update(const EmbeddingShape& shape, float* const* tables, const int32_t* ids,
                          const float* grad, float learning_rate,
                          EmbeddingUpdateScratch& scratch, const RowRounding& rounding) {
  const int64_t tables_per_sample = shape.num_tables;
  const int64_t dim = shape.dim;
  const auto tables_count = static_cast<size_t>(tables_per_sample);
  scratch.order.resize(tables_count);
  scratch.sum.resize(tables_count);
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < tables_per_sample; ++t) {
    // Sum each touched row's gradients in sample order, then apply the sum
    // once: a hot row's many small steps would otherwise round away against
    // the row's value (seen at batch 65536, where lr·g is below half an ulp).
    auto& order = scratch.order[static_cast<size_t>(t)];
    auto& sum = scratch.sum[static_cast<size_t>(t)];
    order.resize(static_cast<size_t>(shape.batch));
    sum.resize(static_cast<size_t>(dim));
    for (int64_t b = 0; b < shape.batch; ++b) {
      order[static_cast<size_t>(b)] = {ids[b * tables_per_sample + t], b};
    }
    std::sort(order.begin(), order.end());  // by row, then sample: in place
    float* table = tables[t];
    for (size_t k = 0; k < order.size();) {
      if (k + kPrefetchDistance < order.size()) {
        const size_t ahead = k + kPrefetchDistance;
        prefetch_row(table + static_cast<int64_t>(order[ahead].first) * dim, dim, true);
        prefetch_row(grad + (order[ahead].second * tables_per_sample + t) * dim, dim);
      }
      const int32_t row_id = order[k].first;
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (; k < order.size() && order[k].first == row_id; ++k) {
        const float* g = grad + (order[k].second * tables_per_sample + t) * dim;
#pragma omp simd
        for (int64_t d = 0; d < dim; ++d) sum[static_cast<size_t>(d)] += g[d];
      }
      float* row = table + static_cast<int64_t>(row_id) * dim;
      if (rounding.stochastic_bf16) {
        const auto first = static_cast<uint64_t>(row_id) * static_cast<uint64_t>(dim);
        for (int64_t d = 0; d < dim; ++d) {
          const float updated = row[d] - learning_rate * sum[static_cast<size_t>(d)];
          row[d] = stochastic_round_to_bf16(
              updated, counter_random(rounding.key, rounding.step, static_cast<uint64_t>(t),
                                      first + static_cast<uint64_t>(d)));
        }
        continue;
      }
#pragma omp simd
      for (int64_t d = 0; d < dim; ++d) {
        const float step = learning_rate * sum[static_cast<size_t>(d)];
        row[d] -= step;
      }
    }
  }
}

void embedding_sgd_update(const EmbeddingShape& shape, float* const* tables, const int32_t* ids,
                          const float* grad, float learning_rate) {
  EmbeddingUpdateScratch scratch;
  embedding_sgd_update(shape, tables, ids, grad, learning_rate, scratch);
}

}  // namespace perflab::kernels::cpu
