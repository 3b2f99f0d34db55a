// DLRM dot interaction on the GPU: the CUDA twin of kernels/cpu/interaction.h,
// with the same layouts and pair order.
//
// Per sample, the F = T + 1 features are z_0 = x and z_1..z_T = the T
// embedding rows. out[b] = concat(x[b], z_i·z_j for i > j), pair (i, j) at
// column dim + interaction_pair_index(i, j):
//   x    [batch, dim]
//   emb  [batch, num_tables, dim]
//   out  [batch, dim + F*(F-1)/2]   (kernels::cpu::interaction_output_width)
// One thread block per sample; the sample's F x dim features sit in shared
// memory. The backward sums each gradient row in the CPU's order (j
// ascending) with fused multiply-adds (one rounding where the CPU makes two:
// within the tests' first-order bound, not bit-equal); the forward's dot
// products accumulate in d order with fused multiply-adds, which the CPU's
// vectorised reduction does not. The arithmetic is fp32 (or TF32 products on
// tensor cores); the tensors may be stored in bf16 (InteractionArguments::
// activations, ::embeddings): values are widened to fp32 as they are loaded
// and results rounded to nearest even as they are stored, so a bf16 model
// needs no casts around the interaction. run() never allocates or
// synchronises.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/embedding.h"
#include "kernels/cuda/status.h"
#include "kernels/launch.h"

namespace perflab::kernels::cuda {

/// How a tensor of the interaction is stored.
enum class InteractionType { kFloat32, kBFloat16 };

/// The embedding lookup fused into the interaction (InteractionArguments::
/// lookup): sample b's feature t + 1 is row table_row_offsets[t] +
/// ids[b, t] of the fp32 `tables` (embedding.h's layout), read where the
/// interaction would read emb[b, t]. With bf16 embeddings each value is
/// rounded to bf16 (nearest even) as it is loaded: the values a bf16 gather
/// would have written, so the results are the gather-then-interaction
/// results bit for bit, without the [batch, T, dim] tensor written and read
/// back (forward and backward).
struct InteractionLookup {
  const float* tables = nullptr;               ///< [total_rows, dim], fp32; null: no lookup (emb is read).
  const int64_t* table_row_offsets = nullptr;  ///< [num_tables]
  const int32_t* ids = nullptr;                ///< [batch, num_tables]
  /// Forward: the embedding update's sort input, written as the gather
  /// writes it with keys_in_forward (keys null: not written).
  EmbeddingSortInput sort;
};

/// Problem and device pointers of the forward and the backward.
struct InteractionArguments {
  int64_t batch = 0;   ///< B: samples.
  int num_tables = 0;  ///< T: embedding vectors per sample (F = T + 1 features).
  int64_t dim = 0;     ///< D: length of every feature vector.

  const void* x = nullptr;    ///< [batch, dim] of `activations`
  const void* emb = nullptr;  ///< [batch, num_tables, dim] of `embeddings` (unread with `lookup`)

  // Forward.
  void* out = nullptr;  ///< [batch, width] of `activations`; must not alias x or emb.

  // Backward; every output is overwritten and none may alias an input.
  const void* dout = nullptr;  ///< [batch, width] of `activations`
  void* dx = nullptr;          ///< [batch, dim] of `activations`
  float* demb = nullptr;       ///< [batch, num_tables, dim], fp32 (the sparse update's input)
  /// Instead of demb: the embedding gradient rounded to bf16 (nearest even)
  /// as it is stored, half the bytes written here and read by the sparse
  /// update (EmbeddingArguments::grad_bf16); needs bf16 embeddings (a bf16
  /// model). Exactly one of demb and demb_bf16 is set for the backward.
  __nv_bfloat16* demb_bf16 = nullptr;

  /// Elements from one sample's row of out (and dout) to the next; 0: the
  /// width itself. A wider stride leaves the columns past the width
  /// untouched: a row padded for the next layer's GEMM (DLRM: 479 -> 480).
  int64_t out_stride = 0;
  /// TF32 tensor cores (WMMA m16n16k8, fp32 accumulate): a warp per sample
  /// holds its F features padded to 32 rows in shared memory; the forward
  /// is the lower-triangle tiles of Z·Zᵀ, the backward dZ = G·Z with G the
  /// symmetric pair-gradient matrix (zero diagonal). Needs F = T + 1 <= 32,
  /// dim a multiple of 16 up to 144, x and emb (the backward's dx and demb
  /// too: its gradient tile is stored 16 bytes at a time) 16-byte
  /// aligned, and sm_80
  /// or later (built for an older GPU the kernels trap). Products of inputs rounded to
  /// TF32 (10-bit mantissas): each dot product within 2^-10 Σ|z_i z_j| plus
  /// fp32 accumulation, where the CUDA-core kernels are within fp32's. When
  /// activations and embeddings are both bf16, bf16 WMMA (m16n16k16) on the
  /// bf16 features as they are: exact products, fp32 accumulation.
  bool tensor_cores = false;
  /// Storage of x, out, dout and dx: bf16 in a bf16 model, whose bottom MLP
  /// writes x, top MLP reads out, and so on, in bf16. The forward's x
  /// columns of out are exact copies in either type.
  InteractionType activations = InteractionType::kFloat32;
  /// Storage of emb: bf16 (a bf16 gather) needs bf16 activations. With
  /// `lookup`, the precision the tables' values are rounded to as loaded.
  InteractionType embeddings = InteractionType::kFloat32;
  /// Backward: x is a ReLU's output (DLRM's bottom MLP) and dx is written
  /// as that ReLU's input gradient, dx * (x > 0), so the layer launches no
  /// dReLU of its own (LinearArguments::dy_relu_applied).
  bool dx_relu = false;
  /// The lookup fused in: the rows are read from the tables (see
  /// InteractionLookup), emb is not read and may be null.
  InteractionLookup lookup;
};

/// Whether the tensor-core kernels take this shape (F <= 32, dim % 16 == 0,
/// and two samples' features, pair matrices and staging tiles within 48 KiB
/// of shared memory: dim <= 144).
bool interaction_tensor_cores_fit(int num_tables, int64_t dim);

/// Bytes of shared memory a block needs: the forward's when `backward` is
/// false, else the backward's (features plus the sample's pair gradients
/// as a padded F x padded(F) matrix).
size_t interaction_shared_bytes(int num_tables, int64_t dim, bool backward);

/// Whether the CUDA-core forward gathers a sample's pairs in shared memory
/// beside its features and writes them out in order (they fit in 48 KiB
/// with the features: DLE's 27 features of 128, 15.7 KB), or writes each
/// pair straight out (81 features of 128: 42.8 KB of features alone).
bool interaction_forward_gathers_pairs(int num_tables, int64_t dim);

/// out = concat(x, pairwise dots).
/// What one pass launches (one kernel), with its bytes in their stored types
/// (x and the embeddings read, the output written; backward: the output
/// gradient and both inputs read, both gradients written) and its FP32 FLOPs (a
/// multiply-add per dimension of each of the F(F-1)/2 pairs; backward twice
/// that). Host-only.
LaunchList interaction_launches(const InteractionArguments& args, bool backward);

class InteractionForward {
 public:
  /// Checks the shape, the pointers and that the features fit in 48 KiB of
  /// shared memory (interaction_shared_bytes: about F * dim floats).
  static Status can_implement(const InteractionArguments& args);
  /// Always 0.
  static size_t workspace_bytes(const InteractionArguments& args);
  static void run(const InteractionArguments& args, void* workspace, cudaStream_t stream);
};

/// dx[b] = dout[b, :dim] + Σ_{j≠0} g_0j z_j (times x[b] > 0 with dx_relu);
/// demb[b, t] = Σ_{j≠t+1} g_(t+1)j z_j.
class InteractionBackward {
 public:
  /// As the forward, for x, emb, dout, dx and demb, with the pair gradients
  /// also in shared memory.
  static Status can_implement(const InteractionArguments& args);
  /// Always 0.
  static size_t workspace_bytes(const InteractionArguments& args);
  static void run(const InteractionArguments& args, void* workspace, cudaStream_t stream);
};

}  // namespace perflab::kernels::cuda
