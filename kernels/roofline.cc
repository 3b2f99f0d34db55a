// Roofline arithmetic: device peak table and linear-layer FLOP/byte counts.
#include "kernels/roofline.h"

#include <algorithm>

namespace perflab::kernels {
namespace {

constexpr double kTera = 1e12;

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

}  // namespace

std::optional<DevicePeaks> device_peaks(std::string_view name) {
  constexpr std::string_view kVendor = "NVIDIA ";
  if (name.substr(0, kVendor.size()) == kVendor) name.remove_prefix(kVendor.size());
  // "H100 80GB HBM3" is the SXM part (the PCIe card reports "H100 PCIe").
  if (name.substr(0, 4) == "H100" && (contains(name, "HBM3") || contains(name, "SXM")) &&
      !contains(name, "PCIe") && !contains(name, "NVL")) {
    return DevicePeaks{"H100 SXM", 494 * kTera, 989 * kTera, 3.35 * kTera, 67 * kTera};
  }
  // "H200" is the SXM part; "GH200 ..." fails the prefix test on purpose.
  if (name.substr(0, 4) == "H200" && !contains(name, "NVL")) {
    return DevicePeaks{"H200 SXM", 494 * kTera, 989 * kTera, 4.8 * kTera, 67 * kTera};
  }
  return std::nullopt;
}

double linear_flops(int64_t batch, int64_t in, int64_t out) {
  return 2.0 * static_cast<double>(batch) * static_cast<double>(in) * static_cast<double>(out);
}

double linear_backward_flops(int64_t batch, int64_t in, int64_t out) {
  return 2.0 * linear_flops(batch, in, out);
}

double linear_forward_bytes(int64_t batch, int64_t in, int64_t out, int64_t element_bytes,
                            double aux_bytes) {
  const double elements = static_cast<double>(batch * in + out * in + out + batch * out);
  return elements * static_cast<double>(element_bytes) + aux_bytes;
}

double linear_backward_bytes(int64_t batch, int64_t in, int64_t out, int64_t element_bytes) {
  const double elements = static_cast<double>(batch * out + 2 * batch * in + 2 * out * in + out);
  return elements * static_cast<double>(element_bytes);
}

double memory_bandwidth_from_clock(int memory_clock_khz, int bus_width_bits) {
  if (memory_clock_khz <= 0 || bus_width_bits <= 0) return 0;
  return 2.0 * memory_clock_khz * 1e3 * bus_width_bits / 8.0;
}

double roofline_floor_seconds(double flops, double bytes, double peak_flops, double bytes_per_s) {
  return std::max(flops / peak_flops, bytes / bytes_per_s);
}

KernelCost& KernelCost::operator+=(const KernelCost& other) {
  bytes += other.bytes;
  flops += other.flops;
  if (precision.empty()) {
    precision = other.precision;
  } else if (!other.precision.empty() && other.precision != precision) {
    precision = "mixed";  // no one peak: no floor for the FLOPs (kernel_floor_seconds)
  }
  return *this;
}

double peak_flops(const DevicePeaks& peaks, std::string_view precision) {
  if (precision == "fp32") return peaks.fp32_flops;
  if (precision == "tf32") return peaks.tf32_flops;
  if (precision == "bf16" || precision == "fp16") return peaks.bf16_flops;
  return 0;
}

double kernel_floor_seconds(const KernelCost& cost, const DevicePeaks& peaks) {
  const double flops_peak = peak_flops(peaks, cost.precision);
  // FLOPs at a peak this device's table lacks: a bytes-only floor would
  // understate the work, so there is none.
  if (cost.flops > 0 && flops_peak <= 0) return 0;
  const double compute = cost.flops > 0 ? cost.flops / flops_peak : 0;
  const double memory = cost.bytes > 0 && peaks.bytes_per_s > 0 ? cost.bytes / peaks.bytes_per_s : 0;
  return std::max(compute, memory);
}

}  // namespace perflab::kernels
