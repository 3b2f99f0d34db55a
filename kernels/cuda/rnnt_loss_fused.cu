// The fused CUDA RNN-T loss: the full log-softmax is never materialised.
//   launch 1: row_stats_kernel   -> per row: log-sum-exp over V, and the
//                                   log-probs of blank and of the next label
//   launch 2: alpha_beta_kernel  (rnnt_recursion.cu), reading those two values
//   launch 3: gradient_kernel    one pass over the logits: softmax recomputed
//                                as exp(z - lse), grad written once (block 0
//                                reduces the loss)
// Logits are read twice (stats, gradient) and the gradient written once; the
// workspace is 5 floats per row. Row kernels: one block per frame (b, t), one
// warp per row (b, t, u); rows outside the valid grid are never read.
#include <cstdint>

#include "kernels/cuda/check.h"
#include "kernels/cuda/rnnt_common.cuh"

namespace perflab::kernels::cuda::rnnt_detail {
namespace {

template <typename T>
__global__ void row_stats_kernel(RnntProblem p, RnntWorkspace w) {
  const Frame f = block_frame(p);
  const Sequence s = load_sequence(p, f.b);
  if (!s.valid || f.t >= s.frames) return;
  const T* logits = static_cast<const T*>(p.logits);
  const int64_t vocab = p.vocab;
  const int64_t lane = threadIdx.x % 32;
  const int64_t warps = blockDim.x / 32;
  for (int64_t u = threadIdx.x / 32; u <= s.labels; u += warps) {
    const int64_t r = s.base + f.t * s.stride + u;
    const T* z = logits + r * vocab;
    const float lse = warp_row_log_sum_exp(z, vocab, lane, p.vector4);
    if (lane == 0) {
      w.lse[r] = lse;
      w.lp_blank[r] = to_float(z[p.blank]) - lse;
      float label_lp = neg_inf();  // no label leaves the last position
      if (u < s.labels) {
        const int64_t y = next_label(p, f.b, u, s.labels);
        label_lp = y >= 0 ? to_float(z[y]) - lse : NAN;  // a bad label poisons the cost
      }
      w.lp_label[r] = label_lp;
    }
  }
}

/// log-probability of symbol v in row r, recomputed from the logits.
template <typename T>
struct RecomputedLogProb {
  const T* logits;
  const float* lse;
  int64_t vocab;
  __device__ float operator()(int64_t r, int64_t v) const {
    return to_float(logits[r * vocab + v]) - lse[r];
  }
  __device__ float4 four(int64_t r, int64_t v) const {
    const float4 z = load4(logits + r * vocab + v);
    const float l = lse[r];
    return make_float4(z.x - l, z.y - l, z.z - l, z.w - l);
  }
};

template <typename T>
__global__ void gradient_kernel(RnntProblem p, RnntWorkspace w) {
  gradient_frame<T>(p, w,
                    RecomputedLogProb<T>{static_cast<const T*>(p.logits), w.lse, p.vocab});
}

}  // namespace

void launch_row_stats(const RnntProblem& p, const RnntWorkspace& w, cudaStream_t stream) {
  if (p.batch == 0) return;
  dispatch_dtype(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    row_stats_kernel<T><<<frame_blocks(p), kRowThreads, 0, stream>>>(p, w);
  });
  PERFLAB_CUDA_CHECK_LAUNCH("rnnt row_stats_kernel");
}

void launch_fused_gradient(const RnntProblem& p, const RnntWorkspace& w, cudaStream_t stream) {
  if (p.batch == 0) return;
  dispatch_dtype(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gradient_kernel<T><<<frame_blocks(p), kRowThreads, 0, stream>>>(p, w);
  });
  PERFLAB_CUDA_CHECK_LAUNCH("rnnt fused gradient_kernel");
}

}  // namespace perflab::kernels::cuda::rnnt_detail
