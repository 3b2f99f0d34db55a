// Roofline arithmetic against hand-worked values; needs no GPU.
#include "kernels/roofline.h"

#include <gtest/gtest.h>

namespace perflab::kernels {
namespace {

TEST(DevicePeaks, KnowsH100SxmAndH200ByRuntimeName) {
  auto h100 = device_peaks("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(h100.has_value());
  EXPECT_EQ(h100->model, "H100 SXM");
  EXPECT_DOUBLE_EQ(h100->tf32_flops, 494e12);
  EXPECT_DOUBLE_EQ(h100->bf16_flops, 989e12);
  EXPECT_DOUBLE_EQ(h100->bytes_per_s, 3.35e12);
  auto h200 = device_peaks("NVIDIA H200");
  ASSERT_TRUE(h200.has_value());
  EXPECT_EQ(h200->model, "H200 SXM");
  EXPECT_DOUBLE_EQ(h200->tf32_flops, 494e12);
  EXPECT_DOUBLE_EQ(h200->bf16_flops, 989e12);
  EXPECT_DOUBLE_EQ(h200->bytes_per_s, 4.8e12);
}

TEST(DevicePeaks, OtherPartsAreUnknown) {
  for (const char* name : {"NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200 NVL",
                           "NVIDIA GH200 480GB", "NVIDIA A100-SXM4-80GB", "Tesla T4", ""}) {
    EXPECT_FALSE(device_peaks(name).has_value()) << name;
  }
}

TEST(LinearCounts, FlopsAreTwoPerMultiplyAddAndBackwardIsTwice) {
  // Bottom MLP layer 1 at batch 512: 2 * 512 * 13 * 512.
  EXPECT_DOUBLE_EQ(linear_flops(512, 13, 512), 6815744.0);
  EXPECT_DOUBLE_EQ(linear_backward_flops(512, 13, 512), 13631488.0);
  EXPECT_DOUBLE_EQ(linear_flops(1, 1, 1), 2.0);
}

TEST(LinearCounts, BytesTouchEachTensorOnce) {
  // B=2, in=3, out=4, fp32: x 6 + W 12 + b 4 + y 8 = 30 elements = 120 bytes.
  EXPECT_DOUBLE_EQ(linear_forward_bytes(2, 3, 4, 4), 120.0);
  EXPECT_DOUBLE_EQ(linear_forward_bytes(2, 3, 4, 4, 32.0), 152.0);
  // bf16: dy 8 + x 6 + dx 6 + W 12 + dW 12 + db 4 = 48 elements = 96 bytes.
  EXPECT_DOUBLE_EQ(linear_backward_bytes(2, 3, 4, 2), 96.0);
}

TEST(Roofline, FloorIsTheSlowerOfComputeAndMemory) {
  // Top MLP 1024x1024 at batch 65536, TF32 on H100 SXM: compute-bound.
  const double flops = linear_flops(65536, 1024, 1024);             // 137438953472
  const double bytes = linear_forward_bytes(65536, 1024, 1024, 4);  // 541069312
  EXPECT_DOUBLE_EQ(flops, 137438953472.0);
  EXPECT_DOUBLE_EQ(bytes, 541069312.0);
  EXPECT_NEAR(roofline_floor_seconds(flops, bytes, 494e12, 3.35e12), 2.78216e-4, 1e-9);
  // The logit layer 256 -> 1 at batch 65536, bf16: memory-bound.
  const double logit_bytes = linear_forward_bytes(65536, 256, 1, 2);  // 33686018
  EXPECT_DOUBLE_EQ(logit_bytes, 33686018.0);
  EXPECT_NEAR(roofline_floor_seconds(linear_flops(65536, 256, 1), logit_bytes, 989e12, 3.35e12),
              1.005553e-5, 1e-11);
}

TEST(Roofline, BandwidthFromMemoryClockAndBusWidth) {
  // H100 SXM: 2619 MHz HBM3 on a 5120-bit bus, double data rate.
  EXPECT_DOUBLE_EQ(memory_bandwidth_from_clock(2619000, 5120), 2.0 * 2619e6 * 640.0);
  EXPECT_DOUBLE_EQ(memory_bandwidth_from_clock(0, 5120), 0.0);
  EXPECT_DOUBLE_EQ(memory_bandwidth_from_clock(2619000, 0), 0.0);
}

TEST(KernelFloor, EachPrecisionAtItsOwnPeak) {
  const DevicePeaks h100 = *device_peaks("NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(h100.fp32_flops, 67e12);
  EXPECT_DOUBLE_EQ(peak_flops(h100, "fp32"), 67e12);
  EXPECT_DOUBLE_EQ(peak_flops(h100, "tf32"), 494e12);
  EXPECT_DOUBLE_EQ(peak_flops(h100, "bf16"), 989e12);
  EXPECT_DOUBLE_EQ(peak_flops(h100, "fp16"), 989e12);
  EXPECT_DOUBLE_EQ(peak_flops(h100, ""), 0.0);
  // The interaction at batch 65536, 27 vectors of 128, fp32 on CUDA cores:
  // 65536 * 27*27*128 * 2 FLOPs = 1.223e10 (1.8e-4 s) against 65536 *
  // (27*128 + 27*27) * 4 bytes = 1.097e9 (3.27e-4 s): memory-bound.
  const double flops = 65536.0 * 27 * 27 * 128 * 2;
  const double bytes = 65536.0 * (27 * 128 + 27 * 27) * 4;
  EXPECT_NEAR(kernel_floor_seconds({bytes, flops, "fp32"}, h100), bytes / 3.35e12, 1e-15);
  // The same FLOPs claimed at TF32 would be 8x less compute time: still memory-bound.
  EXPECT_NEAR(kernel_floor_seconds({0, flops, "fp32"}, h100), flops / 67e12, 1e-15);
  EXPECT_NEAR(kernel_floor_seconds({0, flops, "tf32"}, h100), flops / 494e12, 1e-15);
  // FLOPs at a precision without a known peak give no floor (bytes alone
  // would understate it); nothing counted is 0 too.
  EXPECT_DOUBLE_EQ(kernel_floor_seconds({0, flops, ""}, h100), 0.0);
  EXPECT_DOUBLE_EQ(kernel_floor_seconds({bytes, flops, ""}, h100), 0.0);
  DevicePeaks bandwidth_only{"unknown", 0, 0, 1e12, 0};
  EXPECT_DOUBLE_EQ(kernel_floor_seconds({bytes, flops, "fp32"}, bandwidth_only), 0.0);
  EXPECT_DOUBLE_EQ(kernel_floor_seconds({bytes, 0, ""}, bandwidth_only), bytes / 1e12);
  EXPECT_DOUBLE_EQ(kernel_floor_seconds({}, h100), 0.0);
  KernelCost sum{100, 0, ""};
  sum += KernelCost{50, 10, "bf16"};
  EXPECT_DOUBLE_EQ(sum.bytes, 150);
  EXPECT_DOUBLE_EQ(sum.flops, 10);
  EXPECT_EQ(sum.precision, "bf16");
  sum += KernelCost{0, 10, "tf32"};
  EXPECT_EQ(sum.precision, "mixed");
}

}  // namespace
}  // namespace perflab::kernels
