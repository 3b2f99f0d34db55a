// Sigmoid binary cross-entropy on logits on the GPU.
#include <algorithm>
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <string>

#include "kernels/cuda/bce.h"
#include "kernels/cuda/bce_device.cuh"
#include "kernels/cuda/check.h"
#include "kernels/cuda/dependent_launch.cuh"
#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1024;

int64_t partial_blocks(int64_t n) {
  return std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks);
}

using BlockSum = cub::BlockReduce<double, kThreads>;

/// This thread's samples (a grid-stride loop): writes their dlogit and
/// returns the sum of their losses (in double). T: the logits' and dlogit's
/// stored type.
template <typename T>
__device__ double thread_loss(int64_t n, int64_t mean_over, const T* __restrict__ logits,
                              const float* __restrict__ labels, T* __restrict__ dlogit) {
  const double count = static_cast<double>(mean_over);
  double local = 0.0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const double z = widen(logits[i]);
    const double y = labels[i];
    local += bce_sample_loss(z, y);
    // Rounded to float (the value the fp32 path stores), then, bf16, to bf16.
    if (dlogit != nullptr) put(dlogit, i, static_cast<float>((stable_sigmoid(z) - y) / count));
  }
  return local;
}

/// Writes dlogit and each block's partial loss sum (in double).
template <typename T>
__global__ void bce_partial_kernel(int64_t n, int64_t mean_over, const T* __restrict__ logits,
                                   const float* __restrict__ labels, T* __restrict__ dlogit,
                                   double* __restrict__ partials) {
  wait_for_prior_kernels();
  __shared__ typename BlockSum::TempStorage temp;
  const double local = thread_loss(n, mean_over, logits, labels, dlogit);
  const double block_sum = BlockSum(temp).Sum(local);
  if (threadIdx.x == 0) partials[blockIdx.x] = block_sum;
}

/// bce_partial_kernel and bce_finish_kernel in one launch: each block writes
/// its partial; the last block to finish (counted on `done`, which it
/// resets for the next run) sums the partials in block order and publishes.
template <typename T>
__global__ void bce_kernel(int64_t n, int64_t mean_over, const T* __restrict__ logits,
                           const float* __restrict__ labels, T* __restrict__ dlogit, double* partials,
                           uint32_t* done, float* __restrict__ loss_accumulator,
                           int32_t* __restrict__ nonfinite_flag, int32_t* __restrict__ step_counter) {
  wait_for_prior_kernels();
  __shared__ typename BlockSum::TempStorage temp;
  __shared__ bool last;
  const double local = thread_loss(n, mean_over, logits, labels, dlogit);
  const double block_sum = BlockSum(temp).Sum(local);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_sum;
    __threadfence();  // the partial is visible before the ticket is taken
    last = atomicAdd(done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  double sum = 0.0;
  const volatile double* seen = partials;
  for (int k = threadIdx.x; k < static_cast<int>(gridDim.x); k += blockDim.x) sum += seen[k];
  const double total = BlockSum(temp).Sum(sum);
  if (threadIdx.x == 0) {
    publish_loss(n, mean_over, total, loss_accumulator, nonfinite_flag, step_counter);
    *done = 0;  // ready for the next run
  }
}

/// One block: sums the partials in a fixed order and publishes the mean.
__global__ void bce_finish_kernel(int64_t n, int64_t mean_over, int blocks, const double* __restrict__ partials,
                                  float* __restrict__ loss_accumulator,
                                  int32_t* __restrict__ nonfinite_flag, int32_t* __restrict__ step_counter) {
  wait_for_prior_kernels();
  __shared__ typename BlockSum::TempStorage temp;
  double local = 0.0;
  for (int k = threadIdx.x; k < blocks; k += blockDim.x) local += partials[k];
  const double total = BlockSum(temp).Sum(local);
  if (threadIdx.x == 0) publish_loss(n, mean_over, total, loss_accumulator, nonfinite_flag, step_counter);
}

}  // namespace

Status BceWithLogits::can_implement(const BceArguments& a) {
  if (a.n < 1) return Status::invalid("bce: n must be at least 1, got " + std::to_string(a.n));
  if ((a.logits == nullptr) == (a.logits_bf16 == nullptr)) {
    return Status::invalid("bce: set exactly one of logits and logits_bf16");
  }
  if ((a.logits != nullptr && a.dlogit_bf16 != nullptr) || (a.logits_bf16 != nullptr && a.dlogit != nullptr)) {
    return Status::invalid("bce: dlogit must have the logits' type (dlogit with logits, dlogit_bf16 with logits_bf16)");
  }
  if (a.labels == nullptr) return Status::invalid("bce: labels is null");
  if (a.mean_over != 0 && a.mean_over < a.n) {
    return Status::invalid("bce: mean_over must be 0 or at least n (" + std::to_string(a.n) + "), got " +
                           std::to_string(a.mean_over));
  }
  return Status::success();
}

size_t BceWithLogits::workspace_bytes(const BceArguments& a) {
  return static_cast<size_t>(partial_blocks(a.n)) * sizeof(double);
}

namespace {

template <typename T>
void launch(const BceArguments& a, const T* logits, T* dlogit, void* workspace, cudaStream_t stream) {
  const int blocks = static_cast<int>(partial_blocks(a.n));
  auto* partials = static_cast<double*>(workspace);
  const int64_t mean_over = a.mean_over > 0 ? a.mean_over : a.n;
  if (a.done_counter != nullptr) {
    launch_kernel(bce_kernel<T>, blocks, kThreads, 0, stream, a.n, mean_over, logits, a.labels,
                  dlogit, partials, a.done_counter, a.loss_accumulator, a.nonfinite_flag,
                  a.step_counter);
    PERFLAB_CUDA_CHECK_LAUNCH("bce_kernel");
    return;
  }
  launch_kernel(bce_partial_kernel<T>, blocks, kThreads, 0, stream, a.n, mean_over, logits,
                a.labels, dlogit, partials);
  PERFLAB_CUDA_CHECK_LAUNCH("bce_partial_kernel");
  launch_kernel(bce_finish_kernel, 1, kThreads, 0, stream, a.n, mean_over, blocks, partials,
                a.loss_accumulator, a.nonfinite_flag, a.step_counter);
  PERFLAB_CUDA_CHECK_LAUNCH("bce_finish_kernel");
}

}  // namespace

void BceWithLogits::run(const BceArguments& a, void* workspace, cudaStream_t stream) {
  if (a.logits_bf16 != nullptr) {
    launch(a, a.logits_bf16, a.dlogit_bf16, workspace, stream);
  } else {
    launch(a, a.logits, a.dlogit, workspace, stream);
  }
}

LaunchList BceWithLogits::launches(const BceArguments& a) {
  const double n = static_cast<double>(a.n);
  const double bytes = n * (sizeof(float) + (a.logits_bf16 != nullptr ? 2 * 2 : 2 * sizeof(float)));
  if (a.done_counter != nullptr) {
    return {{"bce_kernel", "loss and dlogit; the last block sums the partials", "", {bytes, 0, ""}}};
  }
  return {{"bce_partial_kernel", "loss and dlogit, per-block partial sums", "", {bytes, 0, ""}},
          {"bce_finish_kernel", "loss: sum of the partials, the accumulator", "", {0, 0, ""}}};
}

}  // namespace perflab::kernels::cuda
