// Private device helpers of the CUDA RNN-T loss: element loads and stores in
// fp32/fp16/bf16, -inf-safe log-add-exp, warp reductions, and where the rows
// of a sequence are (with the device-side validity check every kernel makes).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kernels/cuda/rnnt_launch.h"
#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda::rnnt_detail {

__device__ __forceinline__ float neg_inf() { return -INFINITY; }

/// log(exp(a) + exp(b)); exactly a when b is -inf (no -inf - -inf = NaN).
__device__ __forceinline__ float log_add(float a, float b) {
  if (a < b) {
    const float swap = a;
    a = b;
    b = swap;
  }
  if (b == neg_inf()) return a;
  return a + log1pf(expf(b - a));
}

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

__device__ __forceinline__ float warp_max(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  return x;
}

__device__ __forceinline__ float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

/// log(sum_v exp(z[v])) over one row of `vocab` logits, by the warp whose
/// lane this is (max-shifted, so no exp overflows); every lane gets it.
/// The one log-sum-exp of the fused and unfused losses. With `vector4` (V %
/// 4 == 0, the row aligned) each lane reads four elements at a time; the sum
/// then adds in another order (within fp32's rounding of the scalar one).
/// A row of at most kRowCacheValues (4 x 32 lanes x kRowCacheGroups) is read
/// once: each lane keeps its groups in registers from the max to the sum,
/// all its loads in flight together, the max and the sum taken in the same
/// order as the two-pass loop below (so the same bits). On an H100 the
/// two-pass row kernel took 1.05 ms at the MLPerf shape (V = 1024), 2.2x
/// the floor of one read.
constexpr int kRowCacheGroups = 8;
constexpr int64_t kRowCacheValues = 4 * 32 * kRowCacheGroups;

template <typename T>
__device__ __forceinline__ float warp_row_log_sum_exp(const T* z, int64_t vocab, int64_t lane, bool vector4) {
  float peak = neg_inf();
  float sum = 0;
  if (vector4 && vocab <= kRowCacheValues) {
    float4 x[kRowCacheGroups];
#pragma unroll
    for (int i = 0; i < kRowCacheGroups; ++i) {
      const int64_t q = lane + 32 * i;
      if (4 * q < vocab) {
        x[i] = load4(z + 4 * q);
        peak = fmaxf(peak, fmaxf(fmaxf(x[i].x, x[i].y), fmaxf(x[i].z, x[i].w)));
      }
    }
    peak = warp_max(peak);
#pragma unroll
    for (int i = 0; i < kRowCacheGroups; ++i) {
      if (4 * (lane + 32 * i) < vocab) {
        sum += (expf(x[i].x - peak) + expf(x[i].y - peak)) + (expf(x[i].z - peak) + expf(x[i].w - peak));
      }
    }
    return peak + logf(warp_sum(sum));
  }
  if (vector4) {
    for (int64_t q = lane; 4 * q < vocab; q += 32) {
      const float4 x = load4(z + 4 * q);
      peak = fmaxf(peak, fmaxf(fmaxf(x.x, x.y), fmaxf(x.z, x.w)));
    }
    peak = warp_max(peak);
    for (int64_t q = lane; 4 * q < vocab; q += 32) {
      const float4 x = load4(z + 4 * q);
      sum += (expf(x.x - peak) + expf(x.y - peak)) + (expf(x.z - peak) + expf(x.w - peak));
    }
    return peak + logf(warp_sum(sum));
  }
  for (int64_t v = lane; v < vocab; v += 32) peak = fmaxf(peak, to_float(z[v]));
  peak = warp_max(peak);
  for (int64_t v = lane; v < vocab; v += 32) sum += expf(to_float(z[v]) - peak);
  return peak + logf(warp_sum(sum));
}

/// Sequence b as the device sees it: lengths, where its rows start, how far
/// apart its frames are, and whether the lengths (and, packed, the offsets)
/// describe a valid grid. Labels are checked by the recursion kernel only.
struct Sequence {
  bool valid = false;
  int64_t frames = 0;  ///< T_b
  int64_t labels = 0;  ///< U_b
  int64_t base = 0;    ///< Row of (t=0, u=0).
  int64_t stride = 0;  ///< Rows between frames: U+1 padded, U_b+1 packed.
};

__device__ __forceinline__ Sequence load_sequence(const RnntProblem& p, int64_t b) {
  Sequence s;
  s.frames = p.logit_lengths[b];
  s.labels = p.label_lengths[b];
  s.valid = s.frames >= 1 && s.frames <= p.max_time && s.labels >= 0 && s.labels <= p.max_labels;
  if (p.packed) {
    s.base = p.offsets[b];
    s.stride = s.labels + 1;
    const int64_t end = p.offsets[b + 1];
    s.valid = s.valid && s.base >= 0 && end <= p.rows && end - s.base == s.frames * s.stride;
  } else {
    s.base = b * p.max_time * (p.max_labels + 1);
    s.stride = p.max_labels + 1;
  }
  return s;
}

/// The label emitted from position u of sequence b (u < U_b), or -1 when u
/// is the last position or the label is not a symbol other than blank.
__device__ __forceinline__ int64_t next_label(const RnntProblem& p, int64_t b, int64_t u,
                                              int64_t labels_b) {
  if (u >= labels_b) return -1;
  const int64_t y = p.labels[b * p.max_labels + u];
  return y >= 0 && y < p.vocab && y != p.blank ? y : -1;
}

/// loss = Σ_b costs[b] in batch order (/ B for kMean); one thread.
__device__ __forceinline__ void reduce_loss(const RnntProblem& p) {
  if (p.loss == nullptr) return;
  float total = 0;
  for (int64_t b = 0; b < p.batch; ++b) total += p.costs[b];
  if (p.mean && p.batch > 0) total /= static_cast<float>(p.batch);
  *p.loss = total;
}

/// The gradient of one row (b, t, u) is written by one warp; these are the
/// row's scalars shared by its lanes (see kernels/cpu/rnnt_loss.h):
///   grad[v] = scale*(exp(lp[v] + alpha + beta + cost)
///             - [v == blank] exp(alpha + lp[v] + next_blank + cost)
///             - [v == y]     exp(alpha + lp[v] + next_label + cost))
struct GradientRow {
  float alpha = 0;
  float log_gamma = 0;   ///< alpha + beta + cost (add lp[v] for the log-occupancy).
  float next_blank = 0;  ///< beta(t+1, u); 0 at the final node; -inf at t = T_b-1 otherwise.
  float next_label = 0;  ///< beta(t, u+1); -inf at u = U_b.
  float cost = 0;
  int64_t label = -1;  ///< y_{u+1}, or -1 at u = U_b.
};

__device__ __forceinline__ GradientRow gradient_row(const RnntProblem& p, const RnntWorkspace& w,
                                                    const Sequence& s, int64_t b, int64_t t,
                                                    int64_t u, int64_t r) {
  GradientRow g;
  g.cost = p.costs[b];
  g.alpha = w.alpha[r];
  g.log_gamma = g.alpha + w.beta[r] + g.cost;
  if (t + 1 < s.frames) {
    g.next_blank = w.beta[r + s.stride];
  } else {
    g.next_blank = u == s.labels ? 0.0f : neg_inf();
  }
  g.label = next_label(p, b, u, s.labels);
  g.next_label = u < s.labels ? w.beta[r + 1] : neg_inf();
  return g;
}

/// One gradient value from the log-probability lp of symbol v.
__device__ __forceinline__ float gradient_value(const RnntProblem& p, const GradientRow& g,
                                                int64_t v, float lp) {
  float value = expf(lp + g.log_gamma);
  if (v == p.blank && g.next_blank != neg_inf()) {
    value -= expf(g.alpha + lp + g.next_blank + g.cost);
  } else if (v == g.label && g.next_label != neg_inf()) {
    value -= expf(g.alpha + lp + g.next_label + g.cost);
  }
  return p.grad_scale * value;
}


/// Frame (b, t) of a row kernel: one block per frame, blockIdx.x = b*T + t.
struct Frame {
  int64_t b = 0;
  int64_t t = 0;
};

__device__ __forceinline__ Frame block_frame(const RnntProblem& p) {
  Frame f;
  f.b = static_cast<int64_t>(blockIdx.x) / p.max_time;
  f.t = static_cast<int64_t>(blockIdx.x) % p.max_time;
  return f;
}

/// Writes the gradient rows of frame (b, t) of the block, one warp per row;
/// `log_prob(r, v)` gives the log-probability of symbol v in row r, and
/// `log_prob.four(r, v)` those of v .. v + 3 (p.vector4, v % 4 == 0). Padded:
/// rows outside the valid grid get 0, every row of an invalid sequence NaN.
/// Packed: only the sequence's own rows are written. Block 0 also reduces
/// the loss (costs are complete: the recursions ran before on the stream).
template <typename T, typename LogProb>
__device__ void gradient_frame(const RnntProblem& p, const RnntWorkspace& w, LogProb log_prob) {
  if (blockIdx.x == 0 && threadIdx.x == 0) reduce_loss(p);
  const Frame f = block_frame(p);
  const Sequence s = load_sequence(p, f.b);
  if (p.packed && (!s.valid || f.t >= s.frames)) return;
  T* grad = static_cast<T*>(p.grad);
  const int64_t vocab = p.vocab;
  const int64_t lane = threadIdx.x % 32;
  const int64_t warps = blockDim.x / 32;
  const int64_t positions = p.packed ? s.labels + 1 : p.max_labels + 1;
  for (int64_t u = threadIdx.x / 32; u < positions; u += warps) {
    const int64_t r = s.base + f.t * s.stride + u;
    T* out = grad + r * vocab;
    if (!s.valid || f.t >= s.frames || u > s.labels) {
      const float fill = s.valid ? 0.0f : NAN;
      if (p.vector4) {
        for (int64_t q = lane; 4 * q < vocab; q += 32) store4(out + 4 * q, make_float4(fill, fill, fill, fill));
      } else {
        for (int64_t v = lane; v < vocab; v += 32) out[v] = from_float<T>(fill);
      }
      continue;
    }
    const GradientRow g = gradient_row(p, w, s, f.b, f.t, u, r);
    if (p.vector4) {
      // Four symbols per lane and access; the same value per symbol.
      for (int64_t q = lane; 4 * q < vocab; q += 32) {
        const int64_t v = 4 * q;
        const float4 lp = log_prob.four(r, v);
        store4(out + v, make_float4(gradient_value(p, g, v, lp.x), gradient_value(p, g, v + 1, lp.y),
                                    gradient_value(p, g, v + 2, lp.z), gradient_value(p, g, v + 3, lp.w)));
      }
    } else {
      for (int64_t v = lane; v < vocab; v += 32) {
        out[v] = from_float<T>(gradient_value(p, g, v, log_prob(r, v)));
      }
    }
  }
}

template <typename T>
struct TypeTag {
  using type = T;
};

/// Calls fn(TypeTag<T>{}) with T the element type of `dtype`.
template <typename Fn>
void dispatch_dtype(RnntDType dtype, Fn&& fn) {
  switch (dtype) {
    case RnntDType::kFloat32:
      fn(TypeTag<float>{});
      break;
    case RnntDType::kFloat16:
      fn(TypeTag<__half>{});
      break;
    case RnntDType::kBFloat16:
      fn(TypeTag<__nv_bfloat16>{});
      break;
  }
}

/// Blocks of the row kernels: one per frame (b, t).
inline unsigned frame_blocks(const RnntProblem& p) {
  return static_cast<unsigned>(p.batch * p.max_time);
}

}  // namespace perflab::kernels::cuda::rnnt_detail
