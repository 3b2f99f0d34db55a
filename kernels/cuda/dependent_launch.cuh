// Programmatic dependent launch, the kernels' half (see dependent_launch.h):
// the wait every kernel launched through launch_kernel begins with, and
// the launch itself.
//
// The rule, held by tests/lint/dependent_launch_test.sh: a file that
// launches through launch_kernel launches only so (no <<<...>>>), and
// every __global__ function in it begins with wait_for_prior_kernels().
// Beginning, not "before its first read": a kernel that returned early
// without waiting could end before the kernel ahead of it, and the kernel
// after it, waiting only on it, would read that kernel's output unfinished.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "kernels/cuda/dependent_launch.h"

namespace perflab::kernels::cuda {

/// Waits until the kernels this one depends on have ended and their writes
/// are visible. A no-op when launched normally (and before sm_90).
__device__ __forceinline__ void wait_for_prior_kernels() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// `kernel<<<grid, block, shared, stream>>>(args...)`, with programmatic
/// stream serialisation when this thread's DependentLaunches is on. Errors
/// are the launch's, as for <<<...>>>: the caller's
/// PERFLAB_CUDA_CHECK_LAUNCH reads them (cudaGetLastError).
template <typename... Params, typename... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared,
                   cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  if (dependent_launches()) {
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  (void)cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace perflab::kernels::cuda
