// On a GPU (skipped without one): the learning rate the training step's
// first kernel takes from the schedule at the device's step counter
// (scheduled_learning_rate) is float(LrSchedule::at(step)) bit for bit at
// every step of a warm-up, the constant part, a decay to a floor and past
// it, with rates whose double arithmetic rounds, and the counter ends one
// past the last step. (What keeps nvcc from contracting the decay's
// multiply and add into an FMA is the rounded intrinsics, not this test: at
// these steps a contraction changes a few doubles but none of the floats.)
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/support/cuda_device.h"

#if PERFLAB_DLRM_CUDA
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/raii.h"
#include "workloads/dlrm/cuda_convert.h"
#endif

namespace perflab::dlrm {
namespace {

#if !PERFLAB_DLRM_CUDA
TEST(DlrmLearningRateCuda, Skipped) { GTEST_SKIP() << "built without CUDA"; }
#else

namespace kc = perflab::kernels::cuda;

TEST(DlrmLearningRateCuda, TheDeviceScheduleMatchesTheHostBitForBit) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  // 0.0173 and 0.3 are not binary fractions, 7, 11 and 13 steps not powers
  // of two: the products and quotients round.
  const LrSchedule schedules[] = {{0.0173, 7, 19, 13, 0.3}, {24.0, 0, 5, 11, 0.0}, {0.3, 3, 0, 0, 0.0}};
  constexpr int64_t kFirst = 2, kSteps = 45;
  for (const LrSchedule& schedule : schedules) {
    kc::Stream stream;
    kc::DeviceBuffer<int64_t> step(1);
    kc::DeviceBuffer<float> lr(1), rates(static_cast<size_t>(kSteps));
    set_device_int64(step.data(), kFirst, stream.get());
    for (int64_t i = 0; i < kSteps; ++i) {
      scheduled_learning_rate(schedule, step.data(), lr.data(), stream.get());
      PERFLAB_CUDA_CHECK(
          cudaMemcpyAsync(rates.data() + i, lr.data(), sizeof(float), cudaMemcpyDeviceToDevice, stream.get()));
    }
    kc::counted_stream_synchronize(stream.get());
    const std::vector<float> got = rates.download();
    for (int64_t i = 0; i < kSteps; ++i) {
      const float want = static_cast<float>(schedule.at(kFirst + i));
      EXPECT_EQ(got[static_cast<size_t>(i)], want) << "step " << kFirst + i << " of schedule base " << schedule.base;
    }
    EXPECT_EQ(step.download(), std::vector<int64_t>{kFirst + kSteps});
  }
}

#endif

}  // namespace
}  // namespace perflab::dlrm
