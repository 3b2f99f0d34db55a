// DLRM dot interaction on the CPU: one sample per loop iteration, parallel
// over the batch. Each sample's arithmetic is serial and in a fixed order, so
// results do not depend on the thread count.
#include "kernels/cpu/interaction.h"

#include <algorithm>

namespace perflab::kernels::cpu {
namespace {

/// Feature vector i of one sample: z_0 = x row, z_i = embedding row i-1.
inline const float* feature(const float* x_row, const float* emb_row, int64_t i, int64_t dim) {
  return i == 0 ? x_row : emb_row + (i - 1) * dim;
}

inline float dot(const float* a, const float* b, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t k = 0; k < n; ++k) sum += a[k] * b[k];
  return sum;
}

/// y += alpha * x
inline void axpy(float alpha, const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t k = 0; k < n; ++k) y[k] += alpha * x[k];
}

}  // namespace

int64_t interaction_output_width(int num_tables, int64_t dim) {
  const int64_t features = static_cast<int64_t>(num_tables) + 1;
  return dim + features * (features - 1) / 2;
}

void interaction_forward(const InteractionShape& shape, const float* x, const float* emb,
                         float* out) {
  const int64_t dim = shape.dim;
  const int64_t features = static_cast<int64_t>(shape.num_tables) + 1;
  const int64_t width = interaction_output_width(shape.num_tables, dim);
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < shape.batch; ++b) {
    const float* x_row = x + b * dim;
    const float* emb_row = emb + b * shape.num_tables * dim;
    float* out_row = out + b * width;
    std::copy(x_row, x_row + dim, out_row);
    float* pairs = out_row + dim;
    for (int64_t i = 1; i < features; ++i) {
      const float* zi = feature(x_row, emb_row, i, dim);
      for (int64_t j = 0; j < i; ++j) {
        pairs[interaction_pair_index(i, j)] = dot(zi, feature(x_row, emb_row, j, dim), dim);
      }
    }
  }
}

void interaction_backward(const InteractionShape& shape, const float* x, const float* emb,
                          const float* dout, float* dx, float* demb) {
  const int64_t dim = shape.dim;
  const int64_t features = static_cast<int64_t>(shape.num_tables) + 1;
  const int64_t width = interaction_output_width(shape.num_tables, dim);
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < shape.batch; ++b) {
    const float* x_row = x + b * dim;
    const float* emb_row = emb + b * shape.num_tables * dim;
    const float* dout_row = dout + b * width;
    float* dx_row = dx + b * dim;
    float* demb_row = demb + b * shape.num_tables * dim;
    // x passes straight through to the first dim columns.
    std::copy(dout_row, dout_row + dim, dx_row);
    std::fill(demb_row, demb_row + shape.num_tables * dim, 0.0f);
    const float* dpairs = dout_row + dim;
    for (int64_t i = 1; i < features; ++i) {
      const float* zi = feature(x_row, emb_row, i, dim);
      float* dzi = demb_row + (i - 1) * dim;
      for (int64_t j = 0; j < i; ++j) {
        const float g = dpairs[interaction_pair_index(i, j)];
        const float* zj = feature(x_row, emb_row, j, dim);
        float* dzj = j == 0 ? dx_row : demb_row + (j - 1) * dim;
        axpy(g, zj, dzi, dim);
        axpy(g, zi, dzj, dim);
      }
    }
  }
}

}  // namespace perflab::kernels::cpu
