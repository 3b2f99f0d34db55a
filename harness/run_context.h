// What a workload is handed for one invocation: the resolved spec, its rank
// and the communicator, the device probed once with its peaks, and the
// environment captured once. The harness builds it (harness/invocation.h);
// workloads read it and never probe or capture anything themselves.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "collectives/communicator.h"
#include "harness/device.h"
#include "harness/run_spec.h"
#include "harness/step_driver.h"
#include "harness/workload.h"
#include "kernels/roofline.h"

namespace perflab {

/// Peaks of device 0: the one source of truth for roofline floors.
struct DevicePeaks {
  std::string model;       ///< The device model the peaks are for.
  double tf32_flops = 0;   ///< Dense TF32 tensor-core FLOP/s (0: unknown).
  double bf16_flops = 0;   ///< Dense BF16 tensor-core FLOP/s (0: unknown).
  double bytes_per_s = 0;  ///< Memory bandwidth (0: unknown).
  std::string basis;       ///< Where the numbers come from.
  double fp32_flops = 0;   ///< FP32 FLOP/s on the CUDA cores (0: unknown).

  /// The same peaks as the roofline functions take them (kernels/roofline.h).
  kernels::DevicePeaks roofline() const { return {model, tf32_flops, bf16_flops, bytes_per_s, fp32_flops}; }
};

/// The devices of this process, probed once.
struct DeviceContext {
  DeviceProbe probe;
  std::optional<DevicePeaks> peaks;  ///< Of device 0, when it is known.
  std::string peaks_missing;         ///< Why peaks is empty.
};

/// Probes the devices (never throws) and works out device 0's peaks: the
/// roofline table (kernels/roofline.h) for known models, else the bandwidth
/// from the reported memory clock and bus width.
DeviceContext probe_device_context();

/// Fills work.floor_ms and work.floor_basis for `backend` from the
/// context's peaks: max(flops / peak at work.flops_precision, bytes /
/// bandwidth); on the CPU, or without peaks, no floor and the reason.
void apply_roofline_floor(IterationWork& work, Backend backend, const DeviceContext& device);

/// Throws UsageError "<what> needs about X GB of device memory, more than
/// 90% of the Y GB of device 0 (<name>); <advice>" when `need_bytes` does
/// not fit device 0. Nothing without a device or an estimate.
void check_device_memory(const std::string& what, double need_bytes, const DeviceContext& device,
                         const std::string& advice);

/// Everything a workload may read about its invocation.
struct RunContext {
  const RunSpec& spec;
  const DeviceContext& device;
  const nlohmann::json& environment;
  collectives::Communicator& comm;
  /// Makes the CUDA calls a device step needs (make_cuda_device_ops; tests
  /// hand in a fake).
  std::function<std::unique_ptr<DeviceOps>()> device_ops = make_cuda_device_ops;

  int rank() const { return comm.rank(); }
  int size() const { return comm.size(); }
  const ParamValues& params() const { return spec.params; }
  Backend backend() const { return spec.backend; }
  const ToggleSet& toggles() const { return spec.toggles; }
};

}  // namespace perflab
