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

/// Throws CudaError if the last kernel launch failed (launch configuration
/// errors surface here; it never synchronises).
void check_launch(const char* kernel, const char* file, int line);

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
