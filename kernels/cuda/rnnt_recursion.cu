// The alpha/beta recursions of the CUDA RNN-T loss, shared by both variants,
// and the loss reduction used when no gradient is asked for.
//
// One block per (sequence, direction): blockIdx.x = b, blockIdx.y = 0 runs
// alpha, 1 runs beta (the two are independent; both only read log-probs).
// Nodes on one anti-diagonal d = t + u depend only on diagonal d-1 (alpha) or
// d+1 (beta), so the block's threads share a diagonal's nodes and
// __syncthreads() separates diagonals (it also makes the global writes of one
// diagonal visible to the block for the next). The alpha block writes costs[b].
// The previous diagonal is read from shared memory (two buffers of U+1
// values, indexed by u) when they fit, so the step's only global reads are
// the log-probs, which do not depend on the recursion; otherwise from the
// alpha/beta arrays in global memory. The values are the same either way.
// Each thread loads the log-probs of its first node on a diagonal kAhead (4)
// steps before it computes it, so a step does not wait out a global load:
// on an H100 the recursion took about 1 us per diagonal (400 us of a 1.46 ms
// bf16 loss at the MLPerf shape) whatever the batch, each step loading its
// own log-probs; one step of look-ahead (0e28099) hides at most one step's
// arithmetic and barrier of a load's latency, four should hide all of it
// when a step costs a quarter of a load or more (reasoning, not yet timed).
// The values are the same in every form (the same operations on the same
// operands).
#include <cstdint>

#include "kernels/cuda/check.h"
#include "kernels/cuda/rnnt_common.cuh"

namespace perflab::kernels::cuda::rnnt_detail {
namespace {

/// Log-probs from the unfused [rows, V] log-softmax.
struct FullLogProbs {
  const float* lp;
  int64_t vocab;
  int64_t blank;
  __device__ float blank_lp(int64_t r) const { return lp[r * vocab + blank]; }
  __device__ float label_lp(int64_t r, int64_t y) const { return lp[r * vocab + y]; }
};

/// Log-probs from the fused per-row values (the label of row (t,u) is y_{u+1}).
struct RowLogProbs {
  const float* blank;
  const float* label;
  __device__ float blank_lp(int64_t r) const { return blank[r]; }
  __device__ float label_lp(int64_t r, int64_t) const { return label[r]; }
};

/// Diagonals whose log-probs are in flight ahead of the one being computed
/// (the four named register pairs in alpha_beta_kernel).
constexpr int64_t kAhead = 4;

template <typename Source>
__global__ void alpha_beta_kernel(RnntProblem p, Source src, float* alpha, float* beta, bool shared) {
  extern __shared__ float diagonals_smem[];  // shared: [2][max_labels + 1]
  const int64_t b = blockIdx.x;
  const bool is_alpha = blockIdx.y == 0;
  const Sequence s = load_sequence(p, b);
  const int32_t* y = p.labels + b * p.max_labels;

  // Every label of the sequence must be a symbol other than blank.
  int bad = s.valid ? 0 : 1;
  if (s.valid) {
    for (int64_t u = threadIdx.x; u < s.labels; u += blockDim.x) {
      const int64_t label = y[u];
      if (label < 0 || label >= p.vocab || label == p.blank) bad = 1;
    }
  }
  if (__syncthreads_or(bad)) {
    if (is_alpha && threadIdx.x == 0) p.costs[b] = NAN;
    return;
  }

  const int64_t last_t = s.frames - 1;
  const int64_t diagonals = last_t + s.labels + 1;
  // Diagonal `step` (in this direction's order) and its nodes' u range.
  const auto bounds = [&](int64_t step, int64_t& d, int64_t& u_lo, int64_t& u_hi) {
    d = is_alpha ? step : diagonals - 1 - step;
    u_lo = d > last_t ? d - last_t : 0;
    u_hi = d < s.labels ? d : s.labels;
  };
  // The two log-probs node (d - u, u) reads (blank's and the label's; 0
  // where the recursion does not read one).
  const auto log_probs = [&](int64_t d, int64_t u, float& blank, float& label) {
    const int64_t t = d - u;
    const int64_t r = s.base + t * s.stride + u;
    if (is_alpha) {
      blank = t > 0 ? src.blank_lp(r - s.stride) : 0.0f;
      label = u > 0 ? src.label_lp(r - 1, y[u - 1]) : 0.0f;
    } else {
      blank = t < last_t || u == s.labels ? src.blank_lp(r) : 0.0f;  // the final node's too
      label = u < s.labels ? src.label_lp(r, y[u]) : 0.0f;
    }
  };
  // The log-probs of this thread's first node of each of the next kAhead
  // diagonals, loaded kAhead steps before the step that reads them (one
  // register pair per step in flight, named, so no value moves between
  // registers: slot i serves steps i, i + kAhead, ...).
  const auto load_first = [&](int64_t step, float& blank, float& label) {
    if (step >= diagonals) return;
    int64_t d = 0, u_lo = 0, u_hi = 0;
    bounds(step, d, u_lo, u_hi);
    if (u_lo + threadIdx.x <= u_hi) log_probs(d, u_lo + threadIdx.x, blank, label);
  };
  float blank0 = 0.0f, label0 = 0.0f, blank1 = 0.0f, label1 = 0.0f;
  float blank2 = 0.0f, label2 = 0.0f, blank3 = 0.0f, label3 = 0.0f;
  load_first(0, blank0, label0);
  load_first(1, blank1, label1);
  load_first(2, blank2, label2);
  load_first(3, blank3, label3);
  // The previous diagonal's values by u (shared), and this one's.
  float* prev = diagonals_smem;
  float* cur = diagonals_smem + (p.max_labels + 1);
  // One diagonal; `slot` holds its first node's log-probs and is refilled
  // with those of diagonal step + kAhead.
  const auto diagonal = [&](int64_t step, float& slot_blank, float& slot_label) {
    int64_t d = 0, u_lo = 0, u_hi = 0;
    bounds(step, d, u_lo, u_hi);
    const float first_blank = slot_blank, first_label = slot_label;
    load_first(step + kAhead, slot_blank, slot_label);
    for (int64_t u = u_lo + threadIdx.x; u <= u_hi; u += blockDim.x) {
      const int64_t t = d - u;
      const int64_t r = s.base + t * s.stride + u;
      float blank = first_blank, label = first_label;
      if (u != u_lo + threadIdx.x) log_probs(d, u, blank, label);
      float value;
      if (is_alpha) {
        // alpha(t-1, u) and alpha(t, u-1): the previous diagonal at u and u-1.
        value = t == 0 && u == 0 ? 0.0f : neg_inf();
        if (t > 0) value = (shared ? prev[u] : alpha[r - s.stride]) + blank;
        if (u > 0) value = log_add(value, (shared ? prev[u - 1] : alpha[r - 1]) + label);
        alpha[r] = value;
      } else if (t == last_t && u == s.labels) {
        value = blank;  // the final blank
        beta[r] = value;
      } else {
        // beta(t+1, u) and beta(t, u+1): the previous (later) diagonal at u and u+1.
        value = neg_inf();
        if (t < last_t) value = (shared ? prev[u] : beta[r + s.stride]) + blank;
        if (u < s.labels) value = log_add(value, (shared ? prev[u + 1] : beta[r + 1]) + label);
        beta[r] = value;
      }
      if (shared) cur[u] = value;
    }
    __syncthreads();
    float* const swap = prev;
    prev = cur;
    cur = swap;
  };
  // `step` is the same in every thread, so every thread reaches each
  // __syncthreads() above.
  for (int64_t step = 0; step < diagonals; step += kAhead) {
    diagonal(step, blank0, label0);
    if (step + 1 < diagonals) diagonal(step + 1, blank1, label1);
    if (step + 2 < diagonals) diagonal(step + 2, blank2, label2);
    if (step + 3 < diagonals) diagonal(step + 3, blank3, label3);
  }
  if (is_alpha && threadIdx.x == 0) {
    const int64_t last = s.base + last_t * s.stride + s.labels;
    p.costs[b] = -(alpha[last] + src.blank_lp(last));
  }
}

__global__ void reduce_loss_kernel(RnntProblem p) {
  if (threadIdx.x == 0) reduce_loss(p);
}

/// Threads per recursion block: the widest diagonal (U+1 nodes), rounded up
/// to whole warps, between 32 and 256.
unsigned recursion_threads(int64_t max_labels) {
  int64_t threads = (max_labels + 1 + 31) / 32 * 32;
  if (threads > 256) threads = 256;
  return static_cast<unsigned>(threads);
}

}  // namespace

void launch_alpha_beta(const RnntProblem& p, const RnntWorkspace& w, bool fused, bool with_beta,
                       cudaStream_t stream) {
  if (p.batch == 0) return;
  const dim3 grid(static_cast<unsigned>(p.batch), with_beta ? 2u : 1u);
  const unsigned threads = recursion_threads(p.max_labels);
  // Two diagonals of U+1 floats in shared memory when they fit in 48 KiB.
  const size_t diagonal_bytes = 2 * static_cast<size_t>(p.max_labels + 1) * sizeof(float);
  const bool shared = diagonal_bytes <= 48 * 1024;
  const size_t smem = shared ? diagonal_bytes : 0;
  if (fused) {
    alpha_beta_kernel<<<grid, threads, smem, stream>>>(p, RowLogProbs{w.lp_blank, w.lp_label}, w.alpha, w.beta,
                                                       shared);
  } else {
    alpha_beta_kernel<<<grid, threads, smem, stream>>>(p, FullLogProbs{w.log_probs, p.vocab, p.blank}, w.alpha,
                                                       w.beta, shared);
  }
  PERFLAB_CUDA_CHECK_LAUNCH("rnnt alpha_beta_kernel");
}

void launch_reduce_loss(const RnntProblem& p, cudaStream_t stream) {
  if (p.loss == nullptr) return;
  reduce_loss_kernel<<<1, 32, 0, stream>>>(p);
  PERFLAB_CUDA_CHECK_LAUNCH("rnnt reduce_loss_kernel");
}

}  // namespace perflab::kernels::cuda::rnnt_detail
