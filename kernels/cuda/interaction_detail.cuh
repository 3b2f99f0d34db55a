// Private to the CUDA interaction (interaction.cu: the CUDA-core kernels, the
// checks and the dispatch; interaction_tc.cu: the tensor-core kernels): what
// both use, and the tensor-core side's entry points.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/interaction.h"
#include "kernels/cuda/interaction.h"

namespace perflab::kernels::cuda::interaction_detail {

/// Feature rows the tensor-core kernels hold per sample: 32 (two 16-row tiles).
constexpr int kTcRows = 32;

/// The pair (i, j), i > j, at index p = i*(i-1)/2 + j.
__device__ inline void pair_from_index(int64_t p, int64_t* i, int64_t* j) {
  int64_t r = static_cast<int64_t>((1.0 + sqrt(1.0 + 8.0 * static_cast<double>(p))) * 0.5);
  while (r * (r - 1) / 2 > p) --r;
  while ((r + 1) * r / 2 <= p) ++r;
  *i = r;
  *j = p - r * (r - 1) / 2;
}

/// Elements between rows of out/dout.
inline int64_t out_row_stride(const InteractionArguments& a) {
  return a.out_stride != 0 ? a.out_stride : cpu::interaction_output_width(a.num_tables, a.dim);
}

/// Calls f(TA{}, TE{}) with the stored types of `a` (check() admits fp32
/// with fp32, bf16 activations with fp32 or bf16 embeddings).
template <typename F>
void with_types(const InteractionArguments& a, F&& f) {
  if (a.activations == InteractionType::kFloat32) {
    f(float{}, float{});
  } else if (a.embeddings == InteractionType::kFloat32) {
    f(__nv_bfloat16{}, float{});
  } else {
    f(__nv_bfloat16{}, __nv_bfloat16{});
  }
}

/// The arguments' pointers in their stored types (activations TA,
/// embeddings TE; demb is fp32 always).
template <typename TA, typename TE>
struct Typed {
  const TA* x;
  const TE* emb;
  TA* out;
  const TA* dout;
  TA* dx;
};
template <typename TA, typename TE>
Typed<TA, TE> typed(const InteractionArguments& a) {
  return {static_cast<const TA*>(a.x), static_cast<const TE*>(a.emb), static_cast<TA*>(a.out),
          static_cast<const TA*>(a.dout), static_cast<TA*>(a.dx)};
}

/// Shared memory a block of the TF32 tensor-core kernels takes (the bf16
/// ones take less): what check() holds a tensor-core problem to.
size_t tc_shared_bytes(int64_t dim);

/// The tensor-core forward and backward (InteractionArguments::tensor_cores):
/// TF32 WMMA, or bf16 WMMA when activations and embeddings are both bf16.
void interaction_forward_tc(const InteractionArguments& a, cudaStream_t stream);
void interaction_backward_tc(const InteractionArguments& a, cudaStream_t stream);

}  // namespace perflab::kernels::cuda::interaction_detail
