// DLRM dot interaction on the CPU, and its backward pass. This is the
// reference the CUDA interaction kernel is tested against.
//
// Per sample, the F = T + 1 feature vectors are z_0 = x (the bottom-MLP
// output) and z_1..z_T = the T embedding rows. The output row is x followed
// by every pairwise dot product z_i·z_j with i > j (the strictly lower
// triangle) in row-major order of (i, j): (1,0), (2,0), (2,1), (3,0), ...
//
// Layout (all row-major):
//   x    [batch, dim]
//   emb  [batch, num_tables, dim]
//   out  [batch, dim + F*(F-1)/2]     (see interaction_output_width)
// Dot products accumulate in float. The backward pass keeps one small array
// of feature pointers per thread (allocated on its first call); nothing else
// allocates.
#pragma once

#include <cstdint>

namespace perflab::kernels::cpu {

/// Problem size of a dot interaction.
struct InteractionShape {
  int64_t batch = 0;   ///< B: samples.
  int num_tables = 0;  ///< T: embedding vectors per sample (F = T + 1 features).
  int64_t dim = 0;     ///< D: length of every feature vector.
};

/// Columns of the interaction output: dim + F*(F-1)/2 with F = num_tables + 1.
int64_t interaction_output_width(int num_tables, int64_t dim);

/// Column of the pair (i, j), i > j, within the dot-product block (add dim
/// for the column in the full output row): i*(i-1)/2 + j.
inline int64_t interaction_pair_index(int64_t i, int64_t j) { return i * (i - 1) / 2 + j; }

/// out[b] = concat(x[b], z_i·z_j for i > j). `out` must not alias the inputs.
void interaction_forward(const InteractionShape& shape, const float* x, const float* emb,
                         float* out);

/// Gradients given dout [batch, width]; both outputs are overwritten:
///   dx[b]     = dout[b, :dim] + Σ_{j≠0} g_0j z_j
///   demb[b,t] = Σ_{j≠t+1} g_(t+1)j z_j
/// where g_ij = g_ji is dout at the column of the pair (max(i,j), min(i,j)).
/// No output may alias an input.
void interaction_backward(const InteractionShape& shape, const float* x, const float* emb,
                          const float* dout, float* dx, float* demb);

}  // namespace perflab::kernels::cpu
