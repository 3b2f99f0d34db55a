// The device context's two rules, on hand-made devices: the roofline floor
// (the one place peaks meet a workload's work) and the device memory check
// that refuses a plan before anything allocates.
#include <gtest/gtest.h>

#include "base/error.h"
#include "harness/run_context.h"

namespace perflab {
namespace {

DeviceContext h100_like() {
  DeviceContext d;
  d.probe.available = true;
  DeviceInfo info;
  info.name = "NVIDIA H100 80GB HBM3";
  info.total_memory_bytes = 80'000'000'000;
  d.probe.devices.push_back(info);
  d.peaks = DevicePeaks{"H100 SXM", 494e12, 989e12, 3.35e12, "test peaks"};
  return d;
}

TEST(RooflineFloor, MaxOfFlopsAndBytesAtThePrecisionsPeak) {
  IterationWork w;
  w.flops = 989e9;  // 1 ms at the bf16 peak
  w.bytes = 1.675e9;  // 0.5 ms at 3.35 TB/s
  w.flops_precision = "bf16";
  apply_roofline_floor(w, Backend::kCuda, h100_like());
  ASSERT_TRUE(w.floor_ms);
  EXPECT_NEAR(*w.floor_ms, 1.0, 1e-9);
  w.flops_precision = "tf32";  // 989/494 ms at 494 TFLOP/s
  apply_roofline_floor(w, Backend::kCuda, h100_like());
  EXPECT_NEAR(*w.floor_ms, 989.0 / 494.0, 1e-9);
  w.flops_precision = "";  // bytes only
  apply_roofline_floor(w, Backend::kCuda, h100_like());
  EXPECT_NEAR(*w.floor_ms, 0.5, 1e-9);
  EXPECT_NE(w.floor_basis.find("bytes / 3350 GB/s"), std::string::npos) << w.floor_basis;
}

TEST(RooflineFloor, NoFloorWithoutPeaksOrOnTheCpu) {
  IterationWork w;
  w.bytes = 1e9;
  apply_roofline_floor(w, Backend::kCpu, h100_like());
  EXPECT_FALSE(w.floor_ms);
  EXPECT_EQ(w.floor_basis, "no floor: peak FLOP/s and bandwidth of this CPU are not known");
  DeviceContext none;
  none.peaks_missing = "no usable CUDA device: test";
  apply_roofline_floor(w, Backend::kCuda, none);
  EXPECT_FALSE(w.floor_ms);
  EXPECT_EQ(w.floor_basis, "no floor: no usable CUDA device: test");
}

TEST(DeviceMemory, APlanThatCannotFitIsRefusedWithOneLine) {
  check_device_memory("w", 70e9, h100_like(), "reduce batch");  // fits: 70 of 80 GB
  try {
    check_device_memory("w (preset big)", 75e9, h100_like(), "reduce batch");
    FAIL() << "75 GB accepted on an 80 GB device";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "w (preset big) needs about 75.0 GB of device memory, more than 90% of the 80.0 GB of device 0 "
                 "(NVIDIA H100 80GB HBM3); reduce batch");
  }
  check_device_memory("w", 1e15, DeviceContext{}, "no device: nothing to check");
}

}  // namespace
}  // namespace perflab
