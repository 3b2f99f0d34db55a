#include "kernels/cuda/check.h"

#include <atomic>
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

namespace {

std::atomic<bool> g_synchronous{kDebugBuild};
thread_local cudaStream_t t_capture_stream = nullptr;

/// Whether this thread has a capture open (the stream begin_capture noted).
bool capturing() {
  if (t_capture_stream == nullptr) return false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  // Safe during a capture; an error (a stream since destroyed) counts as none.
  const cudaError_t asked = cudaStreamIsCapturing(t_capture_stream, &status);
  if (asked == cudaSuccess && status != cudaStreamCaptureStatusNone) return true;
  if (asked != cudaSuccess) (void)cudaGetLastError();  // not this launch's error: a later check must not report it
  t_capture_stream = nullptr;
  return false;
}

}  // namespace

void set_synchronous_launch_checks(bool on) { g_synchronous.store(on); }
bool synchronous_launch_checks() { return g_synchronous.load(); }
void note_capture_stream(cudaStream_t stream) { t_capture_stream = stream; }

void check_launch(const char* kernel, const char* file, int line) {
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw_cuda_error(status, kernel, file, line);
  if (!g_synchronous.load() || capturing()) return;
  // Only with synchronous launch checks (debug builds, --check-launches), whose times are not comparable.
  status = cudaDeviceSynchronize();  // sync outside the iteration: a debugging mode, not a timed one
  if (status != cudaSuccess) throw_cuda_error(status, kernel, file, line);
}

}  // namespace perflab::kernels::cuda
