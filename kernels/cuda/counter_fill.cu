// Seeded tensors drawn on the device (see counter_fill.h): a thread per
// Box-Muller pair (normal) or per value (uniform), grid-stride.
#include "kernels/cuda/counter_fill.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <string>

#include "kernels/cuda/check.h"
#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda {
namespace {

constexpr int kThreads = 256;
/// Grid-stride cap: enough resident blocks for any current GPU.
constexpr int64_t kMaxBlocks = 8192;

/// Value v (double) as the tensor stores it: rounded to float, then to the type.
template <typename T>
__device__ inline void store(T* out, int64_t i, double v) {
  put(out, i, static_cast<float>(v));
}

/// Normal values a Box-Muller pair at a time: pair p holds tensor values 2p
/// and 2p + 1 (counter_normal_pair), each written when inside the range.
template <typename T>
__global__ void counter_normal_kernel(T* out, int64_t count, uint64_t first, uint64_t seed, uint64_t stream) {
  const uint64_t first_pair = first / 2;
  const auto pairs = static_cast<int64_t>((first + static_cast<uint64_t>(count) - 1) / 2 - first_pair + 1);
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < pairs;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t pair = first_pair + static_cast<uint64_t>(k);
    const NormalPair values = counter_normal_pair(seed, stream, pair);
    const auto even = static_cast<int64_t>(2 * pair - first);  // may be -1 when first is odd
    if (even >= 0) store(out, even, values.first);
    if (even + 1 < count) store(out, even + 1, values.second);
  }
}

template <typename T>
__global__ void counter_uniform_kernel(T* out, int64_t count, uint64_t first, uint64_t seed, uint64_t stream) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    store(out, i,
          counter_value(CounterDistribution::kSymmetricUniform, seed, stream, first + static_cast<uint64_t>(i)));
  }
}

template <typename T>
void launch(const CounterFillArguments& a, cudaStream_t stream) {
  T* out = static_cast<T*>(a.out);
  const int64_t units = a.distribution == CounterDistribution::kNormal ? a.count / 2 + 1 : a.count;
  const auto blocks = static_cast<unsigned>(std::min(kMaxBlocks, (units + kThreads - 1) / kThreads));
  if (a.distribution == CounterDistribution::kNormal) {
    counter_normal_kernel<T><<<blocks, kThreads, 0, stream>>>(out, a.count, a.first, a.seed, a.stream);
    PERFLAB_CUDA_CHECK_LAUNCH("counter_normal_kernel");
  } else {
    counter_uniform_kernel<T><<<blocks, kThreads, 0, stream>>>(out, a.count, a.first, a.seed, a.stream);
    PERFLAB_CUDA_CHECK_LAUNCH("counter_uniform_kernel");
  }
}

}  // namespace

Status CounterFill::can_implement(const CounterFillArguments& a) {
  if (a.count < 1) return Status::invalid("counter fill: count must be at least 1, got " + std::to_string(a.count));
  if (a.out == nullptr) return Status::invalid("counter fill: out is null");
  if (a.first > UINT64_MAX / 2 - static_cast<uint64_t>(a.count)) {
    return Status::invalid("counter fill: first + count overflows the generator's index");
  }
  if (a.distribution != CounterDistribution::kNormal && a.distribution != CounterDistribution::kSymmetricUniform) {
    return Status::invalid("counter fill: unknown distribution");
  }
  if (a.dtype != RnntDType::kFloat32 && a.dtype != RnntDType::kBFloat16 && a.dtype != RnntDType::kFloat16) {
    return Status::invalid("counter fill: unknown element type");
  }
  if (reinterpret_cast<uintptr_t>(a.out) % rnnt_dtype_bytes(a.dtype) != 0) {
    return Status::invalid("counter fill: out is not aligned to its element type");
  }
  return Status::success();
}

void CounterFill::run(const CounterFillArguments& a, cudaStream_t stream) {
  switch (a.dtype) {
    case RnntDType::kFloat32:
      launch<float>(a, stream);
      return;
    case RnntDType::kBFloat16:
      launch<__nv_bfloat16>(a, stream);
      return;
    case RnntDType::kFloat16:
      launch<__half>(a, stream);
      return;
  }
}

}  // namespace perflab::kernels::cuda
