// Whether this process can use a CUDA device, asked of the CUDA runtime
// directly: what code under kernels/ (the microbenchmarks) needs to stop with
// the runtime's reason on a machine without one. The harness's full probe
// (harness/device.h) is not for kernels: they include nothing of the harness
// but base/error.h (tests/lint/arrows_test.sh).
#pragma once

#include <string>

namespace perflab::kernels::cuda {

/// What the runtime says about the devices, in the harness probe's words.
struct DevicePresence {
  bool present = false;  ///< At least one usable device.
  /// When !present: "no usable CUDA device: <runtime message> (<error name>)".
  std::string reason;
  /// Device 0's name when present (e.g. "NVIDIA H100 80GB HBM3"), "unknown"
  /// when the runtime cannot say.
  std::string name;
};

/// Asks the CUDA runtime for its devices. Never throws.
DevicePresence device_present();

}  // namespace perflab::kernels::cuda
