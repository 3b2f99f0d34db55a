// The CUDA RNN-T loss's host side, which needs no device: can_implement
// accepts well-formed problems and refuses bad ones with a reason, workspace
// sizes, and the host half-precision conversions the device tests rely on.
#include "kernels/cuda/rnnt_loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/launch.h"
#include "tests/support/half_precision.h"

namespace perflab::kernels::cuda {
namespace {

using Variant = RnntLoss::Variant;
using test_support::from_bf16;
using test_support::from_fp16;
using test_support::to_bf16;
using test_support::to_fp16;


/// A well-formed padded problem whose device pointers are host addresses
/// (can_implement never dereferences them).
struct FakeProblem {
  alignas(16) float storage[64] = {};
  int32_t ints[8] = {};
  int64_t offsets[4] = {};
  RnntLossArguments args;
  FakeProblem() {
    args.shape = {3, 7, 4, 5};
    args.logits = storage;
    args.grad = storage + 8;
    args.labels = ints;
    args.logit_lengths = ints;
    args.label_lengths = ints;
    args.costs = storage + 16;
    args.loss = storage + 20;
  }
};

TEST(RnntLossCudaHost, CanImplementAcceptsWellFormedProblems) {
  FakeProblem f;
  for (Variant v : {Variant::kUnfused, Variant::kFused}) {
    EXPECT_TRUE(RnntLoss::can_implement(f.args, v).ok()) << RnntLoss::can_implement(f.args, v).reason();
    RnntLossArguments packed = f.args;
    packed.layout = TransducerLayout::kPacked;
    packed.packed_offsets = f.offsets;
    packed.packed_rows = 50;
    EXPECT_TRUE(RnntLoss::can_implement(packed, v).ok());
    RnntLossArguments costs_only = f.args;
    costs_only.grad = nullptr;
    costs_only.loss = nullptr;
    EXPECT_TRUE(RnntLoss::can_implement(costs_only, v).ok());
    RnntLossArguments empty;  // B = 0: nothing to read
    empty.shape = {0, 0, 0, 5};
    EXPECT_TRUE(RnntLoss::can_implement(empty, v).ok());
  }
}

TEST(RnntLossCudaHost, CanImplementRejectsBadProblemsWithAReason) {
  struct Case {
    const char* what;
    void (*mutate)(RnntLossArguments&);
    const char* reason;
  };
  const Case cases[] = {
      {"vocab 0", [](RnntLossArguments& a) { a.shape.vocab = 0; }, "vocab >= 1"},
      {"negative batch", [](RnntLossArguments& a) { a.shape.batch = -1; }, "invalid shape"},
      {"no frames", [](RnntLossArguments& a) { a.shape.max_time = 0; }, "max_time must be >= 1"},
      {"blank 5 of 5", [](RnntLossArguments& a) { a.options.blank = 5; }, "blank index 5"},
      {"blank -2", [](RnntLossArguments& a) { a.options.blank = -2; }, "blank index -2"},
      {"packed without offsets",
       [](RnntLossArguments& a) { a.layout = TransducerLayout::kPacked; }, "packed_offsets"},
      {"null logits", [](RnntLossArguments& a) { a.logits = nullptr; }, "logits is null"},
      {"null labels", [](RnntLossArguments& a) { a.labels = nullptr; }, "labels is null"},
      {"null lengths", [](RnntLossArguments& a) { a.label_lengths = nullptr; }, "label_lengths"},
      {"null costs", [](RnntLossArguments& a) { a.costs = nullptr; }, "costs is null"},
      {"grad aliases logits", [](RnntLossArguments& a) { a.grad = const_cast<void*>(a.logits); },
       "alias"},
      {"misaligned fp32 grad",
       [](RnntLossArguments& a) { a.grad = static_cast<char*>(a.grad) + 2; }, "aligned"},
      {"B*T over 2^31", [](RnntLossArguments& a) { a.shape.batch = a.shape.max_time = 1 << 16; },
       "B*T"},
  };
  for (const Case& c : cases) {
    FakeProblem f;
    c.mutate(f.args);
    for (Variant v : {Variant::kUnfused, Variant::kFused}) {
      const Status status = RnntLoss::can_implement(f.args, v);
      EXPECT_FALSE(status.ok()) << c.what;
      EXPECT_NE(status.reason().find(c.reason), std::string::npos)
          << c.what << ": reason was \"" << status.reason() << "\"";
      EXPECT_EQ(status.reason().find('\n'), std::string::npos) << c.what;
      EXPECT_EQ(RnntLoss::workspace_bytes(f.args, v), 0u) << c.what;
      // run() refuses before touching the device.
      EXPECT_FALSE(RnntLoss().run(f.args, v, nullptr, nullptr).ok()) << c.what;
    }
  }
  // Packed rows must fit the padded grid.
  FakeProblem f;
  f.args.layout = TransducerLayout::kPacked;
  f.args.packed_offsets = f.offsets;
  f.args.packed_rows = 3 * 7 * 5 + 1;
  EXPECT_NE(RnntLoss::can_implement(f.args, Variant::kFused).reason().find("packed_rows"),
            std::string::npos);
}

TEST(RnntLossCudaHost, WorkspaceSizes) {
  FakeProblem f;  // 3*7*5 = 105 rows, V = 5
  const auto aligned = [](size_t bytes) { return (bytes + 255) / 256 * 256; };
  EXPECT_EQ(RnntLoss::rows(f.args), 105);
  EXPECT_EQ(RnntLoss::workspace_bytes(f.args, Variant::kUnfused),
            aligned(105 * 5 * 4) + 2 * aligned(105 * 4));
  EXPECT_EQ(RnntLoss::workspace_bytes(f.args, Variant::kFused), 5 * aligned(105 * 4));
  f.args.layout = TransducerLayout::kPacked;
  f.args.packed_offsets = f.offsets;
  f.args.packed_rows = 70;
  EXPECT_EQ(RnntLoss::rows(f.args), 70);
  EXPECT_EQ(RnntLoss::workspace_bytes(f.args, Variant::kUnfused),
            aligned(70 * 5 * 4) + 2 * aligned(70 * 4));
  EXPECT_EQ(RnntLoss::workspace_bytes(f.args, Variant::kFused), 5 * aligned(70 * 4));
  // A valid problem without its workspace is refused, not run.
  EXPECT_NE(RnntLoss().run(f.args, Variant::kFused, nullptr, nullptr).reason().find("workspace"),
            std::string::npos);
}

TEST(RnntLossCudaHost, HalfPrecisionEncodingsRoundTrip) {
  for (float x : {0.0f, 1.0f, -2.5f, 3.0f, -3.0f, 0.015625f, 1.0f / 3, 65504.0f, 1e-6f, -6e-8f}) {
    EXPECT_EQ(from_fp16(to_fp16(from_fp16(to_fp16(x)))), from_fp16(to_fp16(x))) << x;
    EXPECT_NEAR(from_fp16(to_fp16(x)), x, std::fabs(x) * std::ldexp(1.0, -11) + 3e-8) << x;
    EXPECT_NEAR(from_bf16(to_bf16(x)), x, std::fabs(x) * std::ldexp(1.0, -8)) << x;
  }
  EXPECT_EQ(to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(to_fp16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(to_bf16(1.0f), 0x3F80);
  EXPECT_TRUE(std::isnan(from_fp16(to_fp16(NAN))));
  EXPECT_TRUE(std::isnan(from_bf16(to_bf16(NAN))));
  for (int k = -192; k <= 192; ++k) {  // the test logits are exact in both
    const float x = static_cast<float>(k) / 64;
    EXPECT_EQ(from_fp16(to_fp16(x)), x);
    EXPECT_EQ(from_bf16(to_bf16(x)), x);
  }
}

std::vector<std::string> kernels_of(const LaunchList& list) {
  std::vector<std::string> out;
  for (const KernelLaunch& k : list) out.push_back(k.kernel);
  return out;
}

// What run() launches, declared on the host (the profiler's per-kernel
// floors; kernels/launch.h): the file comment's three kernels per variant.
TEST(RnntLossCudaHost, DeclaresTheKernelsRunLaunchesWithTheirBytes) {
  FakeProblem f;  // B=3, T=7, U=4, V=5: 105 padded rows, fp32
  EXPECT_EQ(kernels_of(RnntLoss::launches(f.args, Variant::kFused)),
            (std::vector<std::string>{"row_stats_kernel", "alpha_beta_kernel", "gradient_kernel"}));
  EXPECT_EQ(kernels_of(RnntLoss::launches(f.args, Variant::kUnfused)),
            (std::vector<std::string>{"log_softmax_kernel", "alpha_beta_kernel", "gradient_kernel"}));
  RnntLossArguments costs = f.args;
  costs.grad = nullptr;
  EXPECT_EQ(kernels_of(RnntLoss::launches(costs, Variant::kFused)),
            (std::vector<std::string>{"row_stats_kernel", "alpha_beta_kernel", "reduce_loss_kernel"}));
  // The fused pass reads the logits twice (row statistics, gradient) and
  // writes the gradient once; the unfused one also writes and reads the
  // fp32 log-probabilities: more bytes in all.
  const double logits = 105.0 * 5 * 4;
  double fused = 0, unfused = 0;
  for (const KernelLaunch& k : RnntLoss::launches(f.args, Variant::kFused)) fused += k.cost.bytes;
  for (const KernelLaunch& k : RnntLoss::launches(f.args, Variant::kUnfused)) unfused += k.cost.bytes;
  EXPECT_GE(fused, 3 * logits);
  EXPECT_GT(unfused, fused);
  RnntLossArguments bad = f.args;
  bad.logits = nullptr;
  EXPECT_TRUE(RnntLoss::launches(bad, Variant::kFused).empty()) << "nothing runs for a problem run() refuses";
  // An empty batch: run() only reduces the (empty) costs into the loss.
  RnntLossArguments empty = f.args;
  empty.shape = {0, 0, 0, 5};
  EXPECT_EQ(kernels_of(RnntLoss::launches(empty, Variant::kFused)), (std::vector<std::string>{"reduce_loss_kernel"}));
  empty.loss = nullptr;
  EXPECT_TRUE(RnntLoss::launches(empty, Variant::kFused).empty());
}

}  // namespace
}  // namespace perflab::kernels::cuda
