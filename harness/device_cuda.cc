// probe_devices() for CUDA builds: asks the CUDA runtime, never throws.
#include <cuda_runtime_api.h>

#include <string>

#include "harness/device.h"

namespace perflab {
namespace {

std::string describe(cudaError_t err) {
  return std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) + ")";
}

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return value;
}

DeviceInfo describe_device(int index) {
  DeviceInfo info;
  info.index = index;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) == cudaSuccess) {
    info.name = prop.name;
    info.total_memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  } else {
    cudaGetLastError();
    info.name = "unknown";
  }
  info.compute_capability_major = attribute(cudaDevAttrComputeCapabilityMajor, index);
  info.compute_capability_minor = attribute(cudaDevAttrComputeCapabilityMinor, index);
  info.multiprocessor_count = attribute(cudaDevAttrMultiProcessorCount, index);
  info.clock_rate_khz = attribute(cudaDevAttrClockRate, index);
  info.memory_clock_rate_khz = attribute(cudaDevAttrMemoryClockRate, index);
  info.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, index);
  info.l2_cache_bytes = attribute(cudaDevAttrL2CacheSize, index);
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, static_cast<int>(sizeof(bus_id)), index) == cudaSuccess) {
    info.pci_bus_id = bus_id;
  } else {
    cudaGetLastError();
  }
  return info;
}

}  // namespace

DeviceProbe probe_devices() {
  DeviceProbe probe;
  // Both version queries succeed without a driver (the driver version is
  // then 0); failures leave the fields at 0.
  if (cudaRuntimeGetVersion(&probe.runtime_version) != cudaSuccess) probe.runtime_version = 0;
  if (cudaDriverGetVersion(&probe.driver_version) != cudaSuccess) probe.driver_version = 0;

  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    probe.reason = "no usable CUDA device: " + describe(err);
    return probe;
  }
  if (count <= 0) {
    probe.reason = "no usable CUDA device: the CUDA runtime reports 0 devices";
    return probe;
  }
  for (int i = 0; i < count; ++i) probe.devices.push_back(describe_device(i));
  probe.available = true;
  return probe;
}

}  // namespace perflab
