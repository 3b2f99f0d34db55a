// The CUDA sigmoid BCE with logits against the CPU reference (kernels/cpu/bce)
// on odd sizes, with extreme logits and fractional labels.
//
// Tolerances: both sides do the per-sample math in double and round once
// to float, so dlogit may differ by at most 1 ulp (2^-23 relative). The
// batch mean is summed in a different order (blocks vs serial), a 1e-15
// relative difference in double; after the float additions into the
// accumulator the two may differ by at most 2 ulps of the accumulator.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/bce.h"
#include "kernels/cuda/bce.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/half_precision.h"
#include "tests/support/cuda_device.h"
#include "base/random.h"

namespace perflab::kernels::cuda {
namespace {

TEST(BceCudaCanImplement, RejectsBadProblemsWithAReason) {
  // No device needed.
  float anything = 0.0f;
  BceArguments good;
  good.n = 5;
  good.logits = &anything;
  good.labels = &anything;
  EXPECT_TRUE(BceWithLogits::can_implement(good).ok())
      << BceWithLogits::can_implement(good).reason();
  // One double per 256-sample block, at most 1024 blocks.
  EXPECT_EQ(BceWithLogits::workspace_bytes(good), sizeof(double));
  BceArguments big = good;
  big.n = int64_t{1} << 40;
  EXPECT_EQ(BceWithLogits::workspace_bytes(big), 1024 * sizeof(double));

  BceArguments a = good;
  a.n = 0;
  EXPECT_NE(BceWithLogits::can_implement(a).reason().find("n must be at least 1"),
            std::string::npos);
  a = good;
  a.logits = nullptr;
  EXPECT_NE(BceWithLogits::can_implement(a).reason().find("exactly one of logits and logits_bf16"),
            std::string::npos);
  a = good;
  const auto* bf16_anything = reinterpret_cast<const __nv_bfloat16*>(&anything);
  a.logits_bf16 = bf16_anything;
  EXPECT_NE(BceWithLogits::can_implement(a).reason().find("exactly one of"), std::string::npos) << "both set";
  a.logits = nullptr;
  EXPECT_TRUE(BceWithLogits::can_implement(a).ok()) << BceWithLogits::can_implement(a).reason();
  a.dlogit = &anything;
  EXPECT_NE(BceWithLogits::can_implement(a).reason().find("dlogit must have the logits' type"), std::string::npos);
  a = good;
  a.dlogit_bf16 = reinterpret_cast<__nv_bfloat16*>(&anything);
  EXPECT_NE(BceWithLogits::can_implement(a).reason().find("dlogit must have the logits' type"), std::string::npos);
  a = good;
  a.labels = nullptr;
  EXPECT_NE(BceWithLogits::can_implement(a).reason().find("labels is null"), std::string::npos);
  a = good;
  a.mean_over = 4;  // a share of a batch cannot be larger than the batch
  EXPECT_NE(BceWithLogits::can_implement(a).reason().find("mean_over must be 0 or at least n"), std::string::npos);
  a.mean_over = 5;
  EXPECT_TRUE(BceWithLogits::can_implement(a).ok()) << BceWithLogits::can_implement(a).reason();
}

/// The arguments of a run on n samples: logits, labels, dlogit and the
/// loss accumulator (device pointers); the rest at their defaults.
BceArguments arguments(int64_t n, const float* logits, const float* labels, float* dlogit, float* loss) {
  BceArguments a;
  a.n = n;
  a.logits = logits;
  a.labels = labels;
  a.dlogit = dlogit;
  a.loss_accumulator = loss;
  return a;
}

/// Logits in [-8, 8) with a few extremes; labels mostly 0/1, some fractional.
void make_batch(int64_t n, std::vector<float>& logits, std::vector<float>& labels) {
  logits = test_support::random_vector(static_cast<size_t>(n), 7, -8.0f, 8.0f);
  labels = test_support::random_vector(static_cast<size_t>(n), 8, 0.0f, 1.0f);
  const float extremes[] = {0.0f, 30.0f, -30.0f, 100.0f, -100.0f, 1e-6f};
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i % 7 == 3) logits[i] = extremes[(i / 7) % 6];
    if (i % 5 != 4) labels[i] = labels[i] < 0.25f ? 1.0f : 0.0f;
  }
}

TEST(BceCuda, GradientAndAccumulatedLossMatchCpu) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (int64_t n :
       {int64_t{1}, int64_t{3}, int64_t{37}, int64_t{2049}, int64_t{65537}, int64_t{300001}}) {
    std::vector<float> logits, labels;
    make_batch(n, logits, labels);
    std::vector<float> expected_dlogit(static_cast<size_t>(n));
    const double mean =
        cpu::bce_with_logits(n, logits.data(), labels.data(), expected_dlogit.data());
    float expected_loss = 1.5f;
    expected_loss += static_cast<float>(mean);
    expected_loss += static_cast<float>(mean);

    DeviceBuffer<float> d_logits(logits), d_labels(labels), d_dlogit(static_cast<size_t>(n));
    DeviceBuffer<float> d_loss(std::vector<float>{1.5f});
    DeviceBuffer<int32_t> d_flag(std::vector<int32_t>{0});
    BceArguments a = arguments(n, d_logits.data(), d_labels.data(), d_dlogit.data(), d_loss.data());
    a.nonfinite_flag = d_flag.data();
    ASSERT_TRUE(BceWithLogits::can_implement(a).ok()) << BceWithLogits::can_implement(a).reason();
    DeviceBuffer<uint8_t> workspace(BceWithLogits::workspace_bytes(a));
    BceWithLogits::run(a, workspace.data(), nullptr);
    BceWithLogits::run(a, workspace.data(), nullptr);  // the accumulator adds each batch
    PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());

    const auto dlogit = d_dlogit.download();
    for (size_t i = 0; i < dlogit.size(); ++i) {
      const float e = expected_dlogit[i];
      // Relative, with float's smallest subnormal as the floor (below it the
      // relative bound is finer than float can resolve).
      const double tol = std::max(std::ldexp(static_cast<double>(std::fabs(e)), -23),
                                  static_cast<double>(std::numeric_limits<float>::denorm_min()));
      ASSERT_LE(std::fabs(static_cast<double>(dlogit[i]) - e), tol)
          << "first dlogit mismatch at " << i << " (logit " << logits[i] << ", label " << labels[i]
          << "): expected " << e << ", actual " << dlogit[i] << "; n=" << n;
    }
    const float loss = d_loss.download()[0];
    EXPECT_LE(std::fabs(static_cast<double>(loss) - expected_loss),
              std::ldexp(std::fabs(expected_loss), -22))
        << "accumulated loss (1.5 + 2 x batch mean): expected " << expected_loss << ", actual "
        << loss << "; n=" << n;
    EXPECT_EQ(d_flag.download()[0], 0) << "finite loss flagged; n=" << n;
  }
}

// bf16 logits and dlogit (a bf16 model's last layer): the CPU reference on
// the logits rounded to bf16, as the device reads them; dlogit is the
// device's fp32 value (within 1 ulp of the CPU's, as above) rounded to bf16,
// so within half a bf16 ulp (2^-8 relative) plus that ulp; the loss as above.
TEST(BceCuda, Bf16LogitsAndDlogitMatchCpuWithinBf16Rounding) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{37}, int64_t{65537}}) {
    std::vector<float> logits, labels;
    make_batch(n, logits, labels);
    std::vector<uint16_t> bits(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) {
      bits[i] = to_bf16(logits[i]);
      logits[i] = from_bf16(bits[i]);
    }
    std::vector<float> expected_dlogit(static_cast<size_t>(n));
    const double mean = cpu::bce_with_logits(n, logits.data(), labels.data(), expected_dlogit.data());
    const float expected_loss = static_cast<float>(mean);
    DeviceBuffer<uint16_t> d_logits(bits), d_dlogit(static_cast<size_t>(n));
    DeviceBuffer<float> d_labels(labels), d_loss(std::vector<float>{0.0f});
    BceArguments a;
    a.n = n;
    a.logits_bf16 = reinterpret_cast<const __nv_bfloat16*>(d_logits.data());
    a.dlogit_bf16 = reinterpret_cast<__nv_bfloat16*>(d_dlogit.data());
    a.labels = d_labels.data();
    a.loss_accumulator = d_loss.data();
    ASSERT_TRUE(BceWithLogits::can_implement(a).ok()) << BceWithLogits::can_implement(a).reason();
    DeviceBuffer<uint8_t> workspace(BceWithLogits::workspace_bytes(a));
    BceWithLogits::run(a, workspace.data(), nullptr);
    PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
    const auto dlogit = d_dlogit.download();
    for (size_t i = 0; i < dlogit.size(); ++i) {
      const double e = expected_dlogit[i];
      // Below bf16's smallest subnormal (2^-133) a value rounds to 0 or to
      // it: half of it is the absolute floor.
      const double tol = std::ldexp(std::fabs(e), -8) + std::ldexp(std::fabs(e), -23) + std::ldexp(1.0, -134);
      ASSERT_LE(std::fabs(static_cast<double>(from_bf16(dlogit[i])) - e), tol)
          << "dlogit " << i << " (logit " << logits[i] << ", label " << labels[i] << "); n=" << n;
    }
    EXPECT_LE(std::fabs(static_cast<double>(d_loss.download()[0]) - expected_loss),
              std::ldexp(std::fabs(expected_loss), -22))
        << "n=" << n;
  }
}

// With a block counter the loss is one launch (the last block finishes the
// sum, in the finish kernel's order): the same bits as the two-launch form,
// for grids of one block to the most blocks, run after run, and the counter
// left 0 after each (so a replayed graph finds it ready).
TEST(BceCuda, OneLaunchWithACounterGivesTheTwoLaunchBits) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (int64_t n : {int64_t{1}, int64_t{255}, int64_t{2049}, int64_t{65537}, int64_t{300001}}) {
    std::vector<float> logits, labels;
    make_batch(n, logits, labels);
    DeviceBuffer<float> d_logits(logits), d_labels(labels);
    DeviceBuffer<float> dlogit_two(static_cast<size_t>(n)), dlogit_one(static_cast<size_t>(n));
    DeviceBuffer<float> loss_two(std::vector<float>{0.0f}), loss_one(std::vector<float>{0.0f});
    DeviceBuffer<uint32_t> counter(std::vector<uint32_t>{0});
    BceArguments a = arguments(n, d_logits.data(), d_labels.data(), dlogit_two.data(), loss_two.data());
    DeviceBuffer<uint8_t> workspace(BceWithLogits::workspace_bytes(a));
    BceArguments one = a;
    one.dlogit = dlogit_one.data();
    one.loss_accumulator = loss_one.data();
    one.done_counter = counter.data();
    EXPECT_EQ(BceWithLogits::launches(one).size(), 1u);
    EXPECT_EQ(BceWithLogits::launches(a).size(), 2u);
    for (int run = 0; run < 3; ++run) {
      BceWithLogits::run(a, workspace.data(), nullptr);
      BceWithLogits::run(one, workspace.data(), nullptr);
    }
    PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(dlogit_one.download(), dlogit_two.download()) << "n=" << n;
    EXPECT_EQ(loss_one.download(), loss_two.download()) << "n=" << n;
    EXPECT_EQ(counter.download()[0], 0u) << "n=" << n;
  }
}

// A rank's share of a larger batch (mean_over = N > n): dlogit is the
// whole batch's mean gradient, (σ - y) / N, and the accumulator gets the
// share n / N of this slice's mean. Same tolerances as above.
TEST(BceCuda, AShareOfALargerBatchScalesByItsSize) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const int64_t n = 37, total = 101;
  std::vector<float> logits, labels;
  make_batch(n, logits, labels);
  std::vector<float> whole(static_cast<size_t>(n));
  const double mean = cpu::bce_with_logits(n, logits.data(), labels.data(), whole.data());
  DeviceBuffer<float> d_logits(logits), d_labels(labels), d_dlogit(static_cast<size_t>(n));
  DeviceBuffer<float> d_loss(std::vector<float>{0.0f});
  BceArguments a = arguments(n, d_logits.data(), d_labels.data(), d_dlogit.data(), d_loss.data());
  a.mean_over = total;
  ASSERT_TRUE(BceWithLogits::can_implement(a).ok()) << BceWithLogits::can_implement(a).reason();
  DeviceBuffer<uint8_t> workspace(BceWithLogits::workspace_bytes(a));
  BceWithLogits::run(a, workspace.data(), nullptr);
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());  // sync outside the iteration: test read-back
  const auto dlogit = d_dlogit.download();
  for (size_t i = 0; i < dlogit.size(); ++i) {
    const double e = static_cast<double>(whole[i]) * static_cast<double>(n) / static_cast<double>(total);
    // Relative, with float's smallest subnormal as the floor: an expected
    // value below it (5e-46 on the first H200 run) is 0 in float.
    const double tolerance =
        std::max(std::ldexp(std::fabs(e), -21), static_cast<double>(std::numeric_limits<float>::denorm_min()));
    ASSERT_LE(std::fabs(dlogit[i] - e), tolerance)
        << "first dlogit mismatch at " << i << ": expected " << e << ", actual " << dlogit[i];
  }
  const double share = mean * static_cast<double>(n) / static_cast<double>(total);
  EXPECT_LE(std::fabs(d_loss.download()[0] - share), std::ldexp(std::fabs(share), -22))
      << "accumulated share: expected " << share << ", actual " << d_loss.download()[0];
}

TEST(BceCuda, NonFiniteLossSetsTheStickyFlag) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const int64_t n = 37;
  std::vector<float> logits, labels;
  make_batch(n, logits, labels);
  std::vector<float> bad = logits;
  bad[20] = std::numeric_limits<float>::quiet_NaN();
  DeviceBuffer<float> d_good(logits), d_bad(bad), d_labels(labels),
      d_loss(std::vector<float>{0.0f});
  DeviceBuffer<int32_t> d_flag(std::vector<int32_t>{0});
  BceArguments a;
  a.n = n;
  a.labels = d_labels.data();
  a.loss_accumulator = d_loss.data();
  a.nonfinite_flag = d_flag.data();  // dlogit left null: the loss alone
  DeviceBuffer<uint8_t> workspace(BceWithLogits::workspace_bytes(a));
  a.logits = d_good.data();
  BceWithLogits::run(a, workspace.data(), nullptr);
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(d_flag.download()[0], 0);
  a.logits = d_bad.data();
  BceWithLogits::run(a, workspace.data(), nullptr);
  a.logits = d_good.data();
  BceWithLogits::run(a, workspace.data(), nullptr);
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(d_flag.download()[0], 1)
      << "a NaN logit must set the flag, and a later finite batch must not clear it";
  EXPECT_TRUE(std::isnan(d_loss.download()[0]));
}

TEST(BceCuda, WithAStepCounterTheFlagNamesTheFirstNonFiniteStep) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const int64_t n = 37;
  std::vector<float> logits, labels;
  make_batch(n, logits, labels);
  std::vector<float> bad = logits;
  bad[5] = std::numeric_limits<float>::infinity();
  bad[6] = -std::numeric_limits<float>::infinity();
  DeviceBuffer<float> d_good(logits), d_bad(bad), d_labels(labels), d_loss(std::vector<float>{0.0f});
  DeviceBuffer<int32_t> d_flag(std::vector<int32_t>{0}), d_steps(std::vector<int32_t>{0});
  BceArguments a;
  a.n = n;
  a.labels = d_labels.data();
  a.loss_accumulator = d_loss.data();
  a.nonfinite_flag = d_flag.data();
  a.step_counter = d_steps.data();
  DeviceBuffer<uint8_t> workspace(BceWithLogits::workspace_bytes(a));
  // Steps 0, 1, 2 finite; 3 and 5 not; 4 finite.
  for (int step = 0; step < 6; ++step) {
    a.logits = step == 3 || step == 5 ? d_bad.data() : d_good.data();
    BceWithLogits::run(a, workspace.data(), nullptr);
  }
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(d_steps.download()[0], 6);
  EXPECT_EQ(d_flag.download()[0], 4) << "1 + the first non-finite step (3); a later one must not move it";
}

}  // namespace
}  // namespace perflab::kernels::cuda
