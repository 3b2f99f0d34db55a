// DLRM dot interaction on the CPU: parallel over the batch, each sample's
// arithmetic serial and in a fixed order, so results do not depend on the
// thread count.
//
// Forward: the dot products of one feature with four others share the
// loads of the first (four vector accumulators, reduced once each).
// Backward: dz_i = Σ_j g_ij z_j is accumulated 64 floats at a time in four
// vector registers and written once, instead of two read-modify-write
// passes over dz per pair. Explicit vectors (vec.h), compiled per ISA
// (dispatch.h).
#include "kernels/cpu/interaction.h"

#include <algorithm>
#include <vector>

#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/vec.h"

namespace perflab::kernels::cpu {
namespace {

using vec::F32x16;
using vec::kLanes;

/// Floats of a feature vector accumulated at once in the backward pass: four
/// vectors (four AVX-512 registers, eight AVX2, sixteen SSE).
constexpr int64_t kChunk = 4 * kLanes;

/// Feature vector i of one sample: z_0 = x row, z_i = embedding row i-1.
[[gnu::always_inline]] inline const float* feature(const float* x_row, const float* emb_row,
                                                   int64_t i, int64_t dim) {
  return i == 0 ? x_row : emb_row + (i - 1) * dim;
}

/// a·b0 .. a·b(N-1) into out[0..N), one pass over a: N vector accumulators,
/// each reduced once; the last dim % 16 terms in order after the lanes.
template <int N>
[[gnu::always_inline]] inline void dots(const float* a, const float* const* b, int64_t n,
                                        float* out) {
  F32x16 acc[N] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    const F32x16 av = vec::load(a + k);
    for (int q = 0; q < N; ++q) acc[q] += av * vec::load(b[q] + k);
  }
  for (int q = 0; q < N; ++q) {
    float s = vec::sum(acc[q]);
    for (int64_t t = k; t < n; ++t) s += a[t] * b[q][t];
    out[q] = s;
  }
}

/// The gradient of pair (i, j), i ≠ j, from the dot-product block of dout.
[[gnu::always_inline]] inline float pair_gradient(const float* dpairs, int64_t i, int64_t j) {
  return i > j ? dpairs[interaction_pair_index(i, j)] : dpairs[interaction_pair_index(j, i)];
}

/// dz[c, c + 16 V) = base[c, c + 16 V) + Σ_{j≠i} g_ij z_j[c, c + 16 V), base
/// null for zero; the V accumulators stay in registers.
template <int V>
[[gnu::always_inline]] inline void accumulate_vectors(const float* const* z, int64_t features,
                                                      int64_t i, const float* dpairs, int64_t c,
                                                      const float* base, float* dz) {
  F32x16 acc[V] = {};
  if (base != nullptr) {
    for (int q = 0; q < V; ++q) acc[q] = vec::load(base + c + q * kLanes);
  }
  for (int64_t j = 0; j < features; ++j) {
    if (j == i) continue;
    const F32x16 g = vec::broadcast(pair_gradient(dpairs, i, j));
    const float* zj = z[j] + c;
    for (int q = 0; q < V; ++q) acc[q] += g * vec::load(zj + q * kLanes);
  }
  for (int q = 0; q < V; ++q) vec::store(dz + c + q * kLanes, acc[q]);
}

/// As accumulate_vectors for the last dim % 16 floats (fewer than a vector).
[[gnu::always_inline]] inline void accumulate_tail(const float* const* z, int64_t features,
                                                   int64_t i, const float* dpairs, int64_t c,
                                                   int64_t dim, const float* base, float* dz) {
  float acc[kLanes];
  const int64_t len = dim - c;
  for (int64_t k = 0; k < len; ++k) acc[k] = base != nullptr ? base[c + k] : 0.0f;
  for (int64_t j = 0; j < features; ++j) {
    if (j == i) continue;
    const float g = pair_gradient(dpairs, i, j);
    const float* zj = z[j] + c;
    for (int64_t k = 0; k < len; ++k) acc[k] += g * zj[k];
  }
  std::copy(acc, acc + len, dz + c);
}

}  // namespace

int64_t interaction_output_width(int num_tables, int64_t dim) {
  const int64_t features = static_cast<int64_t>(num_tables) + 1;
  return dim + features * (features - 1) / 2;
}

PERFLAB_CPU_DISPATCH
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
    const float* z[4];
    for (int64_t i = 1; i < features; ++i) {
      const float* zi = feature(x_row, emb_row, i, dim);
      float* row = pairs + interaction_pair_index(i, 0);  // (i, 0), (i, 1), ... contiguous
      int64_t j = 0;
      for (; j + 4 <= i; j += 4) {
        for (int q = 0; q < 4; ++q) z[q] = feature(x_row, emb_row, j + q, dim);
        dots<4>(zi, z, dim, row + j);
      }
      for (; j < i; ++j) {
        z[0] = feature(x_row, emb_row, j, dim);
        dots<1>(zi, z, dim, row + j);
      }
    }
  }
}

PERFLAB_CPU_DISPATCH
void interaction_backward(const InteractionShape& shape, const float* x, const float* emb,
                          const float* dout, float* dx, float* demb) {
  const int64_t dim = shape.dim;
  const int64_t features = static_cast<int64_t>(shape.num_tables) + 1;
  const int64_t width = interaction_output_width(shape.num_tables, dim);
#pragma omp parallel
  {
    // Each OpenMP thread keeps its array of feature pointers across calls:
    // the training step allocates only on a thread's first call.
    thread_local std::vector<const float*> z;
    z.resize(static_cast<size_t>(features));
#pragma omp for schedule(static)
    for (int64_t b = 0; b < shape.batch; ++b) {
      const float* x_row = x + b * dim;
      const float* emb_row = emb + b * shape.num_tables * dim;
      const float* dout_row = dout + b * width;
      const float* dpairs = dout_row + dim;
      for (int64_t i = 0; i < features; ++i) z[static_cast<size_t>(i)] = feature(x_row, emb_row, i, dim);
      for (int64_t i = 0; i < features; ++i) {
        // x passes straight through to the first dim columns.
        const float* base = i == 0 ? dout_row : nullptr;
        float* dz = i == 0 ? dx + b * dim : demb + (b * shape.num_tables + i - 1) * dim;
        int64_t c = 0;
        for (; c + kChunk <= dim; c += kChunk) {
          accumulate_vectors<4>(z.data(), features, i, dpairs, c, base, dz);
        }
        for (; c + kLanes <= dim; c += kLanes) {
          accumulate_vectors<1>(z.data(), features, i, dpairs, c, base, dz);
        }
        if (c < dim) accumulate_tail(z.data(), features, i, dpairs, c, dim, base, dz);
      }
    }
  }
}

}  // namespace perflab::kernels::cpu
