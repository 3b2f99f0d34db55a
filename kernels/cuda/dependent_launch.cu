// The thread's dependent-launch setting, and whether the device and this
// build can (dependent_launch.h).
#include "kernels/cuda/dependent_launch.h"

#include <cuda_runtime.h>

namespace perflab::kernels::cuda {
namespace {

thread_local bool t_dependent = false;

/// Never launched: its attributes say which virtual architecture this
/// build's kernels were compiled from (they share the build's flags).
__global__ void dependent_launch_probe_kernel() {}

}  // namespace

bool dependent_launches() { return t_dependent; }

DependentLaunches::DependentLaunches(bool on) : previous_(t_dependent) { t_dependent = on; }

DependentLaunches::~DependentLaunches() { t_dependent = previous_; }

bool device_supports_dependent_launch(int device) {
  // No driver, or no such device: an answer, not an error for the next
  // launch to report. The ordinal is checked against the count rather than
  // by a failing query, so a sanitizer sees no API error either.
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (device < 0 || device >= count) return false;
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (major < 9) return false;
  // The kernels' wait is compiled in from compute_90 on: PTX for an older
  // architecture JIT-compiled for this device would have none, and a
  // kernel let in early would not wait.
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, dependent_launch_probe_kernel) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.ptxVersion >= 90;
}

}  // namespace perflab::kernels::cuda
