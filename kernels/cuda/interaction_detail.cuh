// Private to the CUDA interaction (interaction.cu: the CUDA-core kernels, the
// checks and the dispatch; interaction_tc.cu: the tensor-core kernels): what
// both use, and the tensor-core side's entry points.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/interaction.h"
#include "kernels/cuda/embedding_sort.cuh"
#include "kernels/cuda/interaction.h"
#include "kernels/cuda/pair_index.h"
#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda::interaction_detail {

/// Feature rows the tensor-core kernels hold per sample: 32 (two 16-row tiles).
constexpr int kTcRows = 32;

/// A value as stored in TE and widened back: fp32 as it is, bf16 rounded to
/// nearest even (what a bf16 gather writes, widened exactly).
template <typename TE>
__device__ __forceinline__ float as_stored(float v) {
  if constexpr (std::is_same_v<TE, float>) {
    return v;
  } else {
    return __bfloat162float(__float2bfloat16_rn(v));
  }
}

/// A sample's embedding rows as the kernels read them (TE: the embeddings'
/// stored type), from the [batch, T, dim] tensor the gather wrote. Every
/// row source has: start(b, t), where feature t + 1 of sample b starts (an
/// element offset: a loader finds it once per row, not per value); at(s,
/// d), its column d widened to fp32; at4(s, d), four of them from
/// d % 4 == 0; raw8(s, v), what holds eight bf16 values from column 8 v
/// (TE bf16 only), as loaded, and bits8_of(raw), their bits (a loader
/// issues a batch's loads before it converts any); write_sort(b, t), slot
/// b*T + t's sort input for the update (nothing here).
template <typename TE>
struct DenseRows {
  /// Finding a row's start is a multiply: loaders need not hoist it.
  static constexpr bool kCostlyStart = false;
  const TE* emb;
  int num_tables;
  int dim;
  __device__ int64_t start(int64_t b, int t) const { return (b * num_tables + t) * static_cast<int64_t>(dim); }
  __device__ float at(int64_t s, int d) const { return widen(emb[s + d]); }
  __device__ float4 at4(int64_t s, int d) const { return load4(emb + s + d); }
  using Raw8 = uint4;
  __device__ Raw8 raw8(int64_t s, int v) const {
    static_assert(std::is_same_v<TE, __nv_bfloat16>, "raw8: bf16 rows only");
    return reinterpret_cast<const uint4*>(emb + s)[v];
  }
  __device__ static uint4 bits8_of(const Raw8& raw) { return raw; }
  __device__ void write_sort(int64_t, int) const {}
};

/// The same rows read from the fp32 tables (InteractionLookup: the lookup
/// fused in), each value as TE stores it; the forward writes the update's
/// sort input as the gather would (sort.keys null: nothing).
template <typename TE>
struct LookupRows {
  /// Finding a row's start reads an id and an offset: loaders find it once per row.
  static constexpr bool kCostlyStart = true;
  const float* tables;
  const int64_t* offsets;
  const int32_t* ids;
  EmbeddingSortInput sort;
  int num_tables;
  int dim;
  __device__ int64_t global_row(int64_t b, int t) const { return offsets[t] + ids[b * num_tables + t]; }
  __device__ int64_t start(int64_t b, int t) const { return global_row(b, t) * dim; }
  __device__ float at(int64_t s, int d) const { return as_stored<TE>(tables[s + d]); }
  __device__ float4 at4(int64_t s, int d) const {
    const float4 v = load4(tables + s + d);
    return make_float4(as_stored<TE>(v.x), as_stored<TE>(v.y), as_stored<TE>(v.z), as_stored<TE>(v.w));
  }
  struct Raw8 {
    float4 lo, hi;
  };
  __device__ Raw8 raw8(int64_t s, int v) const {
    static_assert(std::is_same_v<TE, __nv_bfloat16>, "raw8: bf16 rows only");
    const float* r = tables + s + 8 * v;
    return {load4(r), load4(r + 4)};
  }
  __device__ static uint4 bits8_of(const Raw8& raw) {
    // .x of each pair at the lower address: element 8v first, as in a bf16 row.
    const __nv_bfloat162 h[4] = {__floats2bfloat162_rn(raw.lo.x, raw.lo.y), __floats2bfloat162_rn(raw.lo.z, raw.lo.w),
                                 __floats2bfloat162_rn(raw.hi.x, raw.hi.y), __floats2bfloat162_rn(raw.hi.z, raw.hi.w)};
    uint4 out;
    memcpy(&out, h, sizeof out);
    return out;
  }
  __device__ void write_sort(int64_t b, int t) const {
    if (sort.keys != nullptr) write_sort_input(sort, b * num_tables + t, global_row(b, t));
  }
};

/// For the tensor-core loaders (a warp per sample, F <= 32): lane t holds
/// where sample b's embedding row t starts (t < features - 1), found once;
/// the loader shares it with the lanes that load row t (through shared
/// memory: interaction_tc.cu, tc_store_embedding_rows).
template <typename Rows>
__device__ int64_t lane_row_start(const Rows& rows, int64_t b, int features, int lane) {
  return lane < features - 1 ? rows.start(b, lane) : 0;
}

/// Calls f(rows) with `a`'s row source for embeddings stored as TE.
template <typename TE, typename F>
void with_rows(const InteractionArguments& a, F&& f) {
  const int dim = static_cast<int>(a.dim);
  if (a.lookup.tables != nullptr) {
    f(LookupRows<TE>{a.lookup.tables, a.lookup.table_row_offsets, a.lookup.ids, a.lookup.sort, a.num_tables, dim});
  } else {
    f(DenseRows<TE>{static_cast<const TE*>(a.emb), a.num_tables, dim});
  }
}

/// Calls f(demb) with the backward's embedding-gradient pointer: fp32, or
/// bf16 (demb_bf16, which check() admits with bf16 embeddings only: the
/// bf16 variant is built for TE = bf16 alone).
template <typename TE, typename F>
void with_gradient(const InteractionArguments& a, F&& f) {
  if constexpr (std::is_same_v<TE, __nv_bfloat16>) {
    if (a.demb_bf16 != nullptr) {
      f(a.demb_bf16);
      return;
    }
  }
  f(a.demb);
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

/// The arguments' activation pointers in their stored type TA (the
/// embeddings come through a row source, with_rows; the embedding gradient
/// through with_gradient).
template <typename TA>
struct Typed {
  const TA* x;
  TA* out;
  const TA* dout;
  TA* dx;
};
template <typename TA>
Typed<TA> typed(const InteractionArguments& a) {
  return {static_cast<const TA*>(a.x), static_cast<TA*>(a.out), static_cast<const TA*>(a.dout),
          static_cast<TA*>(a.dx)};
}

/// Shared memory a block of the TF32 tensor-core kernels takes (the bf16
/// ones take less): what check() holds a tensor-core problem to.
size_t tc_shared_bytes(int64_t dim);

/// The tensor-core forward and backward (InteractionArguments::tensor_cores):
/// TF32 WMMA, or bf16 WMMA when activations and embeddings are both bf16.
void interaction_forward_tc(const InteractionArguments& a, cudaStream_t stream);
void interaction_backward_tc(const InteractionArguments& a, cudaStream_t stream);

}  // namespace perflab::kernels::cuda::interaction_detail
