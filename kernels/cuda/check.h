// One error path for CUDA libraries: each check macro turns a failed call
// into a perflab::Error whose one-line message names the library, the call,
// the library's own description and file:line. Only main() and tests decide
// to exit.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "base/error.h"

namespace perflab::kernels::cuda {

/// A failed CUDA, cuBLASLt or cuDNN (or later NCCL) call.
class CudaError : public Error {
 public:
  CudaError(const char* library, const char* call, const char* description, const char* file,
            int line);
};

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);
/// A failed cuDNN call; `description` is cudnnGetErrorString's, passed by
/// PERFLAB_CUDNN_CHECK, so this header needs no cudnn.h (only the files that
/// call cuDNN include it, and only builds with cuDNN compile them).
[[noreturn]] void throw_cudnn_error(const char* description, const char* call, const char* file, int line);

/// Throws CudaError if the last kernel launch failed. Asynchronous checks
/// (release builds' default) report a bad launch configuration at once and a
/// fault inside a kernel at a later call, which then names the wrong kernel;
/// synchronous checks (debug builds, and `perflab run --check-launches`)
/// also wait for the device after each launch, so a fault names the kernel
/// that made it. While this thread captures a graph (kernels/cuda/capture.h)
/// no check waits: a capture cannot hold a synchronisation.
void check_launch(const char* kernel, const char* file, int line);

/// Whether this build checks launches synchronously by default (debug builds).
#ifdef NDEBUG
inline constexpr bool kDebugBuild = false;
#else
inline constexpr bool kDebugBuild = true;
#endif
/// Process-wide: synchronous launch checks on or off (default: kDebugBuild).
void set_synchronous_launch_checks(bool on);
bool synchronous_launch_checks();
/// The stream this thread is capturing, recorded by begin_capture, so that
/// a synchronous check can tell whether a capture is still open.
void note_capture_stream(cudaStream_t stream);

}  // namespace perflab::kernels::cuda

#define PERFLAB_CUDA_CHECK(call)                                                  \
  do {                                                                            \
    cudaError_t perflab_status_ = (call);                                         \
    if (perflab_status_ != cudaSuccess)                                           \
      ::perflab::kernels::cuda::throw_cuda_error(perflab_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define PERFLAB_CUBLAS_CHECK(call)                                                \
  do {                                                                            \
    cublasStatus_t perflab_status_ = (call);                                      \
    if (perflab_status_ != CUBLAS_STATUS_SUCCESS)                                 \
      ::perflab::kernels::cuda::throw_cublas_error(perflab_status_, #call, __FILE__, __LINE__); \
  } while (0)

/// Needs cudnn.h in the calling file.
#define PERFLAB_CUDNN_CHECK(call)                                                 \
  do {                                                                            \
    cudnnStatus_t perflab_status_ = (call);                                       \
    if (perflab_status_ != CUDNN_STATUS_SUCCESS)                                  \
      ::perflab::kernels::cuda::throw_cudnn_error(cudnnGetErrorString(perflab_status_), #call, __FILE__, \
                                                  __LINE__);                      \
  } while (0)

/// After a <<<...>>> launch: reports a bad launch without synchronising.
#define PERFLAB_CUDA_CHECK_LAUNCH(kernel) \
  ::perflab::kernels::cuda::check_launch(kernel, __FILE__, __LINE__)
