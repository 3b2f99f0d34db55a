// Device helpers of the DLRM CUDA model (see cuda_convert.h).
#include "workloads/dlrm/cuda_convert.h"

#include <cuda_bf16.h>
#include <curand.h>

#include <algorithm>
#include <string>

#include "base/error.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/dependent_launch.cuh"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/sgd.h"
#include "workloads/dlrm/init_random.h"

namespace perflab::dlrm {
namespace {

using kernels::cuda::launch_kernel;
using kernels::cuda::wait_for_prior_kernels;

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = int64_t{1} << 16;  // grid-stride loops cover the rest

__global__ void widen_kernel(int64_t n, const __nv_bfloat16* __restrict__ src,
                             float* __restrict__ dst) {
  wait_for_prior_kernels();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    dst[i] = __bfloat162float(src[i]);
  }
}

__global__ void set_float_kernel(float* dst, float value) {
  wait_for_prior_kernels();
  *dst = value;
}

__global__ void set_int64_kernel(int64_t* dst, int64_t value) {
  wait_for_prior_kernels();
  *dst = value;
}

/// LrSchedule::at, operation for operation: the rounded intrinsics keep
/// nvcc from fusing a multiply and an add into an FMA (one rounding where
/// the host makes two).
__device__ double schedule_at(const LrSchedule& s, int64_t step) {
  if (s.warmup_steps > 0 && step < s.warmup_steps) {
    return __ddiv_rn(__dmul_rn(s.base, static_cast<double>(step + 1)), static_cast<double>(s.warmup_steps));
  }
  if (s.decay_steps > 0 && step >= s.decay_start_step) {
    const double t = fmin(1.0, __ddiv_rn(static_cast<double>(step - s.decay_start_step),
                                         static_cast<double>(s.decay_steps)));
    const double left = __dsub_rn(1.0, t);
    const double above = __dmul_rn(__dmul_rn(__dsub_rn(1.0, s.end_fraction), left), left);
    return __dmul_rn(s.base, __dadd_rn(s.end_fraction, above));
  }
  return s.base;
}

__global__ void scheduled_lr_kernel(LrSchedule schedule, int64_t* step, float* lr) {
  wait_for_prior_kernels();
  const int64_t at = *step;
  *lr = __double2float_rn(schedule_at(schedule, at));
  *step = at + 1;
}

__global__ void table_init_kernel(float* __restrict__ dst, int64_t n, uint64_t key, double bound) {
  wait_for_prior_kernels();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    dst[i] = init_random::table_value(key, bound, static_cast<uint64_t>(i));
  }
}

}  // namespace

void cast_bf16_to_float(int64_t n, const void* src, float* dst, cudaStream_t stream) {
  if (n < 1) return;
  const auto blocks =
      static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
  launch_kernel(widen_kernel, blocks, kThreads, 0, stream, n,
                static_cast<const __nv_bfloat16*>(src), dst);
  PERFLAB_CUDA_CHECK_LAUNCH("widen_kernel");
}

void fill_embedding_table(float* dst, int64_t rows, int64_t dim, uint64_t seed, int table, cudaStream_t stream) {
  const int64_t n = rows * dim;
  if (n < 1) return;
  const auto blocks = static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
  launch_kernel(table_init_kernel, blocks, kThreads, 0, stream, dst, n,
                init_random::table_key(seed, table), init_random::table_bound(rows));
  PERFLAB_CUDA_CHECK_LAUNCH("table_init_kernel");
}

void set_device_float(float* dst, float value, cudaStream_t stream) {
  launch_kernel(set_float_kernel, 1, 1, 0, stream, dst, value);
  PERFLAB_CUDA_CHECK_LAUNCH("set_float_kernel");
}

void set_device_int64(int64_t* dst, int64_t value, cudaStream_t stream) {
  launch_kernel(set_int64_kernel, 1, 1, 0, stream, dst, value);
  PERFLAB_CUDA_CHECK_LAUNCH("set_int64_kernel");
}

void scheduled_learning_rate(const LrSchedule& schedule, int64_t* step, float* lr, cudaStream_t stream) {
  launch_kernel(scheduled_lr_kernel, 1, 1, 0, stream, schedule, step, lr);
  PERFLAB_CUDA_CHECK_LAUNCH("scheduled_lr_kernel");
}

kernels::LaunchList scheduled_learning_rate_launches() {
  return {{"scheduled_lr_kernel", "the learning rate at the device's step counter", "",
           {2 * sizeof(int64_t) + sizeof(float), 0, ""}}};
}

namespace {

void curand_check(curandStatus_t status, const char* what) {
  if (status != CURAND_STATUS_SUCCESS) {
    throw Error(std::string("dlrm: cuRAND ") + what + " failed (status " + std::to_string(status) + ")");
  }
}

}  // namespace

void fill_uniform(void* dst, int64_t n, bool bf16, uint64_t seed, cudaStream_t stream) {
  if (n < 1) return;
  curandGenerator_t gen = nullptr;
  curand_check(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10), "create");
  struct Destroy {
    curandGenerator_t g;
    ~Destroy() { curandDestroyGenerator(g); }
  } destroy{gen};
  curand_check(curandSetPseudoRandomGeneratorSeed(gen, seed), "seed");
  curand_check(curandSetStream(gen, stream), "stream");
  if (!bf16) {
    curand_check(curandGenerateUniform(gen, static_cast<float*>(dst), static_cast<size_t>(n)), "generate");
    return;
  }
  kernels::cuda::DeviceBuffer<float> staging(static_cast<size_t>(n));
  curand_check(curandGenerateUniform(gen, staging.data(), static_cast<size_t>(n)), "generate");
  kernels::cuda::CastFloatToBf16::run({n, staging.data(), static_cast<__nv_bfloat16*>(dst)}, nullptr, stream);
  PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream));  // sync outside the iteration: setup, before staging is freed
}

}  // namespace perflab::dlrm
