#include "kernels/cuda/check.h"

#include <string>

#include <fmt/format.h>

namespace perflab::kernels::cuda {

CudaError::CudaError(const char* library, const char* call, const char* description,
                     const char* file, int line)
    : Error(fmt::format("{} error: {} failed: {} ({}:{})", library, call, description, file, line)) {}

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  std::string description =
      fmt::format("{} ({})", cudaGetErrorString(status), cudaGetErrorName(status));
  throw CudaError("CUDA", call, description.c_str(), file, line);
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw CudaError("cuBLASLt", call, cublasLtGetStatusString(status), file, line);
}

void throw_cudnn_error(const char* description, const char* call, const char* file, int line) {
  throw CudaError("cuDNN", call, description, file, line);
}

void check_launch(const char* kernel, const char* file, int line) {
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw_cuda_error(status, kernel, file, line);
}

}  // namespace perflab::kernels::cuda
