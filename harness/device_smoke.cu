// device_smoke_test(): one trivial kernel, run and read back, so that a build
// lacking code for the device's architecture fails with a clear reason
// before any workload starts.
#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "harness/device.h"

// nvcc (11.5+) defines __CUDA_ARCH_LIST__ as the architectures this file is
// compiled for, e.g. 900 or 800,900.
#define PERFLAB_STRINGIFY_IMPL(...) #__VA_ARGS__
#define PERFLAB_STRINGIFY(...) PERFLAB_STRINGIFY_IMPL(__VA_ARGS__)

namespace perflab {
namespace {

constexpr int kSmokeInput = 41;

__global__ void smoke_kernel(int input, int* out) { *out = input + 1; }

std::string describe(cudaError_t err) {
  return std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) + ")";
}

// The device's architecture as CMake spells it ("90" for 9.0), or "" when
// the runtime cannot say.
std::string device_arch(int device) {
  int major = 0;
  int minor = 0;
  const bool known =
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess;
  cudaGetLastError();  // An invalid ordinal is reported by cudaSetDevice.
  return known ? std::to_string(major) + std::to_string(minor) : std::string();
}

bool fail(std::string* reason, std::string text) {
  cudaGetLastError();
  if (reason != nullptr) *reason = std::move(text);
  return false;
}

}  // namespace

std::string built_cuda_architectures() {
#ifdef __CUDA_ARCH_LIST__
  // "900,1000" -> "90,100": CMake's spelling.
  const std::string list = PERFLAB_STRINGIFY(__CUDA_ARCH_LIST__);
  std::string out;
  std::string number;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] >= '0' && list[i] <= '9') {
      number += list[i];
    } else if (!number.empty()) {
      if (!out.empty()) out += ',';
      out += std::to_string(std::stoi(number) / 10);
      number.clear();
    }
  }
  return out.empty() ? "unknown" : out;
#else
  return "unknown";
#endif
}

bool device_smoke_test(int device, std::string* reason) {
  const std::string arch = device_arch(device);
  const std::string where =
      "CUDA device " + std::to_string(device) + (arch.empty() ? "" : " (sm_" + arch + ")");
  cudaError_t err = cudaSetDevice(device);
  if (err != cudaSuccess) return fail(reason, where + ": cannot select it: " + describe(err));

  int* out = nullptr;
  err = cudaMalloc(&out, sizeof(int));
  if (err != cudaSuccess) return fail(reason, where + ": cannot allocate: " + describe(err));

  smoke_kernel<<<1, 1>>>(kSmokeInput, out);
  err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  int result = 0;
  if (err == cudaSuccess) err = cudaMemcpy(&result, out, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(out);

  if (err == cudaErrorNoKernelImageForDevice) {
    return fail(reason,
                where + ": " + describe(err) + "; this build has code for CUDA architectures " +
                    built_cuda_architectures() + "; rebuild with -DCMAKE_CUDA_ARCHITECTURES=" +
                    (arch.empty() ? "<the device's>" : arch));
  }
  if (err != cudaSuccess) return fail(reason, where + ": smoke kernel failed: " + describe(err));
  if (result != kSmokeInput + 1) {
    return fail(reason, where + ": smoke kernel returned " + std::to_string(result) +
                            ", expected " + std::to_string(kSmokeInput + 1));
  }
  if (reason != nullptr) reason->clear();
  return true;
}

}  // namespace perflab
