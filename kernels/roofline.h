// Roofline arithmetic for the kernel benchmarks and the harness's floors: FLOP and byte counts
// of a linear layer, a small table of device peaks keyed by device name,
// and the roofline floor. Pure functions (no CUDA calls), unit-tested
// against hand-worked values in tests/kernels/roofline_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace perflab::kernels {

/// Dense peaks of one device model (vendor datasheet, no sparsity).
struct DevicePeaks {
  std::string model;       ///< e.g. "H100 SXM".
  double tf32_flops = 0;   ///< TF32 tensor-core FLOP/s.
  double bf16_flops = 0;   ///< BF16 tensor-core FLOP/s.
  double bytes_per_s = 0;  ///< HBM bandwidth, bytes/s.
  double fp32_flops = 0;   ///< FP32 FLOP/s on the CUDA cores (no tensor cores).
};

/// What one kernel launch must do at least: the bytes it must move to or
/// from device memory (each tensor touched once) and the FLOPs it must
/// compute, and which peak those FLOPs run at. Declared by the code that
/// launches the kernel; the profiler measures its time against the floor.
struct KernelCost {
  double bytes = 0;
  double flops = 0;
  /// "tf32", "bf16" (tensor cores) or "fp32" (CUDA cores); empty when
  /// flops is 0.
  std::string precision;

  KernelCost& operator+=(const KernelCost& other);
};

/// The FLOP/s peak of `peaks` at `precision` ("fp32", "tf32", "bf16"; "fp16"
/// counts as bf16); 0 when unknown.
double peak_flops(const DevicePeaks& peaks, std::string_view precision);

/// The least time `cost` can take on a device with `peaks`: the roofline
/// floor of its bytes and FLOPs. 0 (no floor) when nothing in it is counted
/// against a known peak, or when it has FLOPs at a precision whose peak is
/// not known (an unknown device's, or "mixed").
double kernel_floor_seconds(const KernelCost& cost, const DevicePeaks& peaks);

/// Peaks for a CUDA device name as the runtime reports it ("NVIDIA H100 80GB
/// HBM3", "NVIDIA H200"); nullopt for any device not in the table (the
/// caller says "unknown peak"). Known: H100 SXM (494 / 989 TFLOP/s TF32 /
/// BF16, 67 TFLOP/s FP32, 3.35 TB/s) and H200 SXM (same FLOP/s, 4.8 TB/s). H100 PCIe/NVL, H200 NVL and
/// GH200 have other clocks or memory and are deliberately not matched.
std::optional<DevicePeaks> device_peaks(std::string_view device_name);

/// FLOPs of a linear layer's forward pass: one multiply-add per (batch, in,
/// out) triple, 2·B·in·out (the bias and activation are not counted).
double linear_flops(int64_t batch, int64_t in, int64_t out);

/// FLOPs of its backward pass: dgrad and wgrad, each 2·B·in·out, so 4·B·in·out
/// (2x linear_flops). Without dx (first layer) the dgrad half is not run,
/// but the benchmarks count the full pass.
double linear_backward_flops(int64_t batch, int64_t in, int64_t out);

/// Compulsory bytes of the forward pass (each tensor touched once): read x
/// [B,in], W [out,in], b [out]; write y [B,out]; elements of `element_bytes`.
/// A fused ReLU also writes its bitmask: `aux_bytes`.
double linear_forward_bytes(int64_t batch, int64_t in, int64_t out, int64_t element_bytes,
                            double aux_bytes = 0);

/// Compulsory bytes of the backward pass: read dy [B,out], x [B,in], W
/// [out,in]; write dx [B,in], dW [out,in], db [out].
double linear_backward_bytes(int64_t batch, int64_t in, int64_t out, int64_t element_bytes);

/// Peak memory bandwidth in bytes/s from what the runtime reports: double
/// data rate, 2 x memory clock x bus width / 8 (0 when either is unknown).
double memory_bandwidth_from_clock(int memory_clock_khz, int bus_width_bits);

/// The roofline floor in seconds: max(flops / peak_flops, bytes / peak_bw),
/// the least time the work could take on a device with those peaks.
double roofline_floor_seconds(double flops, double bytes, double peak_flops, double bytes_per_s);

}  // namespace perflab::kernels
