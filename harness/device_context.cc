// The device context: probed once per process, with device 0's peaks, and
// the roofline floor every workload's work is measured against.
#include <fmt/format.h>

#include "base/error.h"
#include "harness/run_context.h"
#include "kernels/roofline.h"

namespace perflab {

DeviceContext probe_device_context() {
  DeviceContext ctx;
  ctx.probe = probe_devices();
  if (!ctx.probe.available || ctx.probe.devices.empty()) {
    ctx.peaks_missing = ctx.probe.reason.empty() ? "no CUDA device" : ctx.probe.reason;
    return ctx;
  }
  const DeviceInfo& d = ctx.probe.devices.front();
  if (auto known = kernels::device_peaks(d.name)) {
    ctx.peaks = DevicePeaks{known->model, known->tf32_flops, known->bf16_flops, known->bytes_per_s,
                            fmt::format("{} as {} (roofline table, kernels/roofline.h)", d.name,
                                        known->model),
                            known->fp32_flops};
    return ctx;
  }
  const double bandwidth = kernels::memory_bandwidth_from_clock(d.memory_clock_rate_khz,
                                                                d.memory_bus_width_bits);
  if (bandwidth > 0) {
    ctx.peaks = DevicePeaks{d.name, 0, 0, bandwidth,
                            fmt::format("{}: bandwidth 2 x {} MHz x {} bits; FLOP/s peaks not in the "
                                        "roofline table",
                                        d.name, d.memory_clock_rate_khz / 1000, d.memory_bus_width_bits)};
    return ctx;
  }
  ctx.peaks_missing = fmt::format("the peaks of device 0 ({}) are not in the roofline table and it "
                                  "reports no memory clock",
                                  d.name);
  return ctx;
}

void apply_roofline_floor(IterationWork& work, Backend backend, const DeviceContext& device) {
  work.floor_ms.reset();
  if (backend == Backend::kCpu) {
    work.floor_basis = "no floor: peak FLOP/s and bandwidth of this CPU are not known";
    return;
  }
  if (!device.peaks) {
    work.floor_basis = "no floor: " + device.peaks_missing;
    return;
  }
  const DevicePeaks& p = *device.peaks;
  double flops_peak = 0;
  if (work.flops_precision == "tf32" || work.flops_precision == "fp32") flops_peak = p.tf32_flops;
  if (work.flops_precision == "bf16" || work.flops_precision == "fp16") flops_peak = p.bf16_flops;
  const bool flops_bound = work.flops > 0 && !work.flops_precision.empty();
  if (flops_bound && flops_peak <= 0) {
    work.floor_basis = fmt::format("no floor: the {} FLOP/s peak of {} is not known", work.flops_precision,
                                   p.model);
    return;
  }
  if (p.bytes_per_s <= 0 || (work.bytes <= 0 && !flops_bound)) {
    work.floor_basis = "no floor: nothing counted against a known peak";
    return;
  }
  const double seconds = flops_bound
                            ? kernels::roofline_floor_seconds(work.flops, work.bytes, flops_peak, p.bytes_per_s)
                            : work.bytes / p.bytes_per_s;
  work.floor_ms = seconds * 1e3;
  work.floor_basis =
      flops_bound ? fmt::format("max(flops / {} peak, bytes / bandwidth) on {}: {:.0f} TFLOP/s, {:.0f} GB/s",
                                work.flops_precision, p.basis, flops_peak / 1e12, p.bytes_per_s / 1e9)
                  : fmt::format("bytes / {:.0f} GB/s ({})", p.bytes_per_s / 1e9, p.basis);
}

void check_device_memory(const std::string& what, double need_bytes, const DeviceContext& device,
                         const std::string& advice) {
  if (need_bytes <= 0 || !device.probe.available || device.probe.devices.empty()) return;
  const DeviceInfo& d = device.probe.devices.front();
  const auto have = static_cast<double>(d.total_memory_bytes);
  if (have <= 0 || need_bytes <= 0.9 * have) return;
  throw UsageError(fmt::format("{} needs about {:.1f} GB of device memory, more than 90% of the {:.1f} GB of device 0 "
                               "({}); {}",
                               what, need_bytes / 1e9, have / 1e9, d.name, advice));
}

}  // namespace perflab
