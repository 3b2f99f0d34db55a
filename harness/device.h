// What CUDA devices this process can use, asked of the CUDA runtime without
// ever throwing: a machine with no GPU or no driver is a normal answer
// (available = false, with the runtime's reason), not an error. Built without
// CUDA, the probe says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace perflab {

/// One CUDA device as the runtime describes it.
struct DeviceInfo {
  int index = 0;                     ///< CUDA device ordinal.
  std::string name;                  ///< e.g. "NVIDIA H100 80GB HBM3".
  int compute_capability_major = 0;  ///< 9 for sm_90.
  int compute_capability_minor = 0;  ///< 0 for sm_90.
  int64_t total_memory_bytes = 0;    ///< Global memory.
  int multiprocessor_count = 0;      ///< SMs.
  int clock_rate_khz = 0;            ///< Peak SM clock.
  int memory_clock_rate_khz = 0;     ///< Peak memory clock.
  int memory_bus_width_bits = 0;     ///< Global memory bus width.
  int l2_cache_bytes = 0;            ///< L2 cache size.
  std::string pci_bus_id;            ///< "0000:3B:00.0".
};

/// The result of asking the CUDA runtime for devices.
struct DeviceProbe {
  bool available = false;   ///< At least one usable device.
  std::string reason;       ///< Why not, when !available; empty otherwise.
  int driver_version = 0;   ///< cudaDriverGetVersion (1000*major + 10*minor), 0 without a driver.
  int runtime_version = 0;  ///< cudaRuntimeGetVersion, 0 when built without CUDA.
  std::vector<DeviceInfo> devices;
};

/// Asks the CUDA runtime for its devices. Never throws. Without a usable
/// device, available is false and reason reads
/// "no usable CUDA device: <runtime message> (<error name>)".
DeviceProbe probe_devices();

/// Launches a trivial kernel on `device` and reads its result back, so that
/// a build without code for the device's architecture is caught early with
/// a clear reason (the build's architectures and the device's). Returns
/// true on success; otherwise false with *reason set (when reason is not
/// null). Never throws.
bool device_smoke_test(int device, std::string* reason);

/// The CUDA architectures this build carries code for, e.g. "90" or
/// "80,90"; "none" when built without CUDA.
std::string built_cuda_architectures();

}  // namespace perflab
