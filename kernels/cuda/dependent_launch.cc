// The thread's dependent-launch setting (dependent_launch.h).
#include "kernels/cuda/dependent_launch.h"

#include <cuda_runtime.h>

namespace perflab::kernels::cuda {
namespace {

thread_local bool t_dependent = false;

}  // namespace

bool dependent_launches() { return t_dependent; }

DependentLaunches::DependentLaunches(bool on) : previous_(t_dependent) { t_dependent = on; }

DependentLaunches::~DependentLaunches() { t_dependent = previous_; }

bool device_supports_dependent_launch(int device) {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    cudaGetLastError();  // no device: an answer, not an error for the next launch to report
    return false;
  }
  return major >= 9;
}

}  // namespace perflab::kernels::cuda
