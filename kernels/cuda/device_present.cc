#include "kernels/cuda/device_present.h"

#include <cuda_runtime_api.h>

namespace perflab::kernels::cuda {

DevicePresence device_present() {
  DevicePresence out;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    out.reason = std::string("no usable CUDA device: ") + cudaGetErrorString(err) + " (" +
                 cudaGetErrorName(err) + ")";
    return out;
  }
  if (count <= 0) {
    out.reason = "no usable CUDA device: the CUDA runtime reports 0 devices";
    return out;
  }
  out.present = true;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    out.name = prop.name;
  } else {
    cudaGetLastError();
    out.name = "unknown";
  }
  return out;
}

}  // namespace perflab::kernels::cuda
