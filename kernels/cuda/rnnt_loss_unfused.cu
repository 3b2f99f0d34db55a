// The unfused CUDA RNN-T loss: the full log-softmax is materialised, then
// read back by the recursions and by the gradient.
//   launch 1: log_softmax_kernel  -> workspace log_probs [rows, V] (fp32)
//   launch 2: alpha_beta_kernel   (rnnt_recursion.cu)
//   launch 3: gradient_kernel     grad from log_probs (block 0 reduces the loss)
// Both row kernels run one block per frame (b, t) and one warp per row
// (b, t, u); rows outside the valid grid are never read.
#include <cstdint>

#include "kernels/cuda/check.h"
#include "kernels/cuda/rnnt_common.cuh"

namespace perflab::kernels::cuda::rnnt_detail {
namespace {

template <typename T>
__global__ void log_softmax_kernel(RnntProblem p, RnntWorkspace w) {
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
    float* out = w.log_probs + r * vocab;
    if (p.vector4) {
      for (int64_t q = lane; 4 * q < vocab; q += 32) {
        const float4 x = load4(z + 4 * q);
        store4(out + 4 * q, make_float4(x.x - lse, x.y - lse, x.z - lse, x.w - lse));
      }
    } else {
      for (int64_t v = lane; v < vocab; v += 32) out[v] = to_float(z[v]) - lse;
    }
  }
}

/// log-probability of symbol v in row r, from the materialised log-softmax.
struct StoredLogProb {
  const float* lp;
  int64_t vocab;
  __device__ float operator()(int64_t r, int64_t v) const { return lp[r * vocab + v]; }
  __device__ float4 four(int64_t r, int64_t v) const { return load4(lp + r * vocab + v); }
};

template <typename T>
__global__ void gradient_kernel(RnntProblem p, RnntWorkspace w) {
  gradient_frame<T>(p, w, StoredLogProb{w.log_probs, p.vocab});
}

}  // namespace

void launch_log_softmax(const RnntProblem& p, const RnntWorkspace& w, cudaStream_t stream) {
  if (p.batch == 0) return;
  dispatch_dtype(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    log_softmax_kernel<T><<<frame_blocks(p), kRowThreads, 0, stream>>>(p, w);
  });
  PERFLAB_CUDA_CHECK_LAUNCH("rnnt log_softmax_kernel");
}

void launch_unfused_gradient(const RnntProblem& p, const RnntWorkspace& w, cudaStream_t stream) {
  if (p.batch == 0) return;
  dispatch_dtype(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gradient_kernel<T><<<frame_blocks(p), kRowThreads, 0, stream>>>(p, w);
  });
  PERFLAB_CUDA_CHECK_LAUNCH("rnnt unfused gradient_kernel");
}

}  // namespace perflab::kernels::cuda::rnnt_detail
