// Tests for the CUDA transducer joint (kernels/cuda/transducer_joint.h)
// against the CPU reference (kernels/cpu/transducer_joint.h) on seeded random
// inputs at odd sizes: both variants, padded and packed, identity and ReLU.
//
// Tolerance: exact. The device computes each output as the reference does
// (one fp32 add, then max(x, 0); sums over u or t in the same ascending
// order in fp32, no products to contract), so the results are bit-identical.
// Padding rows of padded outputs must be exactly 0 (outputs start as NaN).
// The first tests need no device (can_implement, workspace sizes).
#include "kernels/cuda/transducer_joint.h"

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/rnnt_loss.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "tests/support/cuda_device.h"
#include "base/random.h"

namespace perflab::kernels::cuda {
namespace {

using Variant = TransducerJoint::Variant;
using cpu::JointActivation;
using cpu::JointShape;

struct Problem {
  JointShape shape;
  std::vector<float> f, g;  // [B, T, H], [B, U+1, H]
  std::vector<int32_t> frames, lengths;
  std::vector<int64_t> offsets;  // packed rows, B+1
  int64_t packed_rows = 0;
};

std::string describe(const JointShape& s) {
  return "B=" + std::to_string(s.batch) + " T=" + std::to_string(s.max_time) +
         " U=" + std::to_string(s.max_labels) + " H=" + std::to_string(s.hidden);
}

Problem random_problem(const JointShape& s, std::vector<int32_t> frames,
                       std::vector<int32_t> lengths, uint32_t seed) {
  Problem p{s, {}, {}, std::move(frames), std::move(lengths), {}, 0};
  p.f = test_support::random_vector(static_cast<size_t>(s.batch * s.max_time * s.hidden), seed);
  p.g = test_support::random_vector(static_cast<size_t>(s.batch * (s.max_labels + 1) * s.hidden),
                                    seed + 1);
  p.offsets.resize(static_cast<size_t>(s.batch + 1));
  p.packed_rows = cpu::rnnt_packed_offsets(s.batch, p.frames.data(), p.lengths.data(), p.offsets.data());
  return p;
}

int64_t output_elements(const Problem& p, TransducerLayout layout) {
  const JointShape& s = p.shape;
  const int64_t rows = layout == TransducerLayout::kPacked
                           ? p.packed_rows
                           : s.batch * s.max_time * (s.max_labels + 1);
  return rows * s.hidden;
}

/// First index where the two differ (NaN never equals), or -1.
int64_t first_difference(const std::vector<float>& actual, const std::vector<float>& expected) {
  if (actual.size() != expected.size()) return 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!(actual[i] == expected[i])) return static_cast<int64_t>(i);
  }
  return -1;
}

::testing::AssertionResult same(const char* what, const std::string& config,
                                const std::vector<float>& actual,
                                const std::vector<float>& expected, int64_t hidden) {
  const int64_t i = first_difference(actual, expected);
  if (i < 0) return ::testing::AssertionSuccess();
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure() << config << ": " << what << " has " << actual.size()
                                         << " values, expected " << expected.size();
  }
  return ::testing::AssertionFailure()
         << config << ": " << what << "[row " << i / hidden << ", k " << i % hidden
         << "] expected " << expected[i] << " actual " << actual[i];
}

/// Runs forward then backward on the device and compares both with the CPU.
void check(const Problem& p, Variant variant, TransducerLayout layout, JointActivation act) {
  const JointShape& s = p.shape;
  const bool packed = layout == TransducerLayout::kPacked;
  const std::string config = describe(s) + " " + (variant == Variant::kFused ? "fused" : "unfused") +
                             (packed ? " packed" : " padded") +
                             (act == JointActivation::kRelu ? " relu" : " identity");
  const int64_t out_elements = output_elements(p, layout);
  // Reference.
  std::vector<float> h(static_cast<size_t>(out_elements));
  std::vector<float> dh = test_support::random_vector(h.size(), 99);
  std::vector<float> df(p.f.size()), dg(p.g.size());
  if (packed) {
    cpu::transducer_joint_forward_packed(s, act, p.f.data(), p.g.data(), p.frames.data(),
                                         p.lengths.data(), p.offsets.data(), h.data());
    cpu::transducer_joint_backward_packed(s, act, h.data(), dh.data(), p.frames.data(),
                                          p.lengths.data(), p.offsets.data(), df.data(), dg.data());
  } else {
    cpu::transducer_joint_forward(s, act, p.f.data(), p.g.data(), p.frames.data(),
                                  p.lengths.data(), h.data());
    cpu::transducer_joint_backward(s, act, h.data(), dh.data(), p.frames.data(), p.lengths.data(),
                                   df.data(), dg.data());
  }
  // Device; outputs start as NaN so every value must be written.
  DeviceBuffer<float> d_f(p.f), d_g(p.g), d_h(h.size()), d_dh(dh), d_df(df.size()), d_dg(dg.size());
  for (DeviceBuffer<float>* out : {&d_h, &d_df, &d_dg}) {
    if (out->size() > 0) PERFLAB_CUDA_CHECK(cudaMemset(out->data(), 0xFF, out->bytes()));
  }
  DeviceBuffer<int32_t> d_frames(p.frames), d_lengths(p.lengths);
  DeviceBuffer<int64_t> d_offsets(p.offsets);
  TransducerJointArguments args;
  args.shape = s;
  args.activation = act;
  args.layout = layout;
  args.frames = d_frames.data();
  args.label_lengths = d_lengths.data();
  args.packed_offsets = packed ? d_offsets.data() : nullptr;
  args.packed_rows = packed ? p.packed_rows : 0;
  args.f = d_f.data();
  args.g = d_g.data();
  args.h = d_h.data();
  args.dh = d_dh.data();
  args.df = d_df.data();
  args.dg = d_dg.data();
  const int64_t syncs = host_sync_count();
  for (JointPass pass : {JointPass::kForward, JointPass::kBackward}) {
    DeviceBuffer<uint8_t> workspace(TransducerJoint::workspace_bytes(args, variant, pass));
    const Status ran = TransducerJoint().run(args, variant, pass, workspace.data(), nullptr);
    ASSERT_TRUE(ran.ok()) << config << ": " << ran.reason();
    PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());  // test only: the workspace is freed next
  }
  EXPECT_EQ(host_sync_count(), syncs) << config;
  EXPECT_TRUE(same("h", config, d_h.download(), h, s.hidden));
  EXPECT_TRUE(same("df", config, d_df.download(), df, s.hidden));
  EXPECT_TRUE(same("dg", config, d_dg.download(), dg, s.hidden));
}

void check_all(const Problem& p) {
  for (Variant variant : {Variant::kUnfused, Variant::kFused}) {
    for (TransducerLayout layout : {TransducerLayout::kPadded, TransducerLayout::kPacked}) {
      for (JointActivation act : {JointActivation::kIdentity, JointActivation::kRelu}) {
        check(p, variant, layout, act);
      }
    }
  }
}

// ---- no device needed ----

/// A well-formed problem whose device pointers are host addresses.
struct FakeProblem {
  float storage[64] = {};
  int32_t ints[4] = {};
  int64_t offsets[4] = {};
  TransducerJointArguments args;
  FakeProblem() {
    args.shape = {3, 7, 4, 5};
    args.frames = args.label_lengths = ints;
    args.f = storage;
    args.g = storage + 8;
    args.h = storage + 16;
    args.dh = storage + 24;
    args.df = storage + 32;
    args.dg = storage + 40;
  }
};

TEST(TransducerJointCudaHost, CanImplementAcceptsWellFormedProblems) {
  for (Variant v : {Variant::kUnfused, Variant::kFused}) {
    for (JointPass pass : {JointPass::kForward, JointPass::kBackward}) {
      FakeProblem f;
      EXPECT_TRUE(TransducerJoint::can_implement(f.args, v, pass).ok());
      f.args.layout = TransducerLayout::kPacked;
      f.args.packed_offsets = f.offsets;
      f.args.packed_rows = 30;
      EXPECT_TRUE(TransducerJoint::can_implement(f.args, v, pass).ok());
      f.args.activation = JointActivation::kIdentity;
      f.args.h = pass == JointPass::kBackward ? nullptr : f.args.h;  // identity backward needs no h
      EXPECT_TRUE(TransducerJoint::can_implement(f.args, v, pass).ok());
    }
  }
}

TEST(TransducerJointCudaHost, CanImplementRejectsBadProblemsWithAReason) {
  struct Case {
    const char* what;
    JointPass pass;
    void (*mutate)(TransducerJointArguments&);
    const char* reason;
  };
  const Case cases[] = {
      {"negative hidden", JointPass::kForward, [](TransducerJointArguments& a) { a.shape.hidden = -1; },
       "invalid shape"},
      {"packed without offsets", JointPass::kForward,
       [](TransducerJointArguments& a) { a.layout = TransducerLayout::kPacked; }, "packed_offsets"},
      {"null f", JointPass::kForward, [](TransducerJointArguments& a) { a.f = nullptr; }, "f, g and h"},
      {"h aliases g", JointPass::kForward, [](TransducerJointArguments& a) { a.h = const_cast<float*>(a.g); },
       "alias"},
      {"null dg", JointPass::kBackward, [](TransducerJointArguments& a) { a.dg = nullptr; },
       "dh, df and dg"},
      {"relu without h", JointPass::kBackward, [](TransducerJointArguments& a) { a.h = nullptr; },
       "forward output h"},
      {"df aliases dg", JointPass::kBackward, [](TransducerJointArguments& a) { a.df = a.dg; }, "alias"},
      {"null lengths", JointPass::kBackward, [](TransducerJointArguments& a) { a.frames = nullptr; },
       "frames and label_lengths"},
      {"B*T over 2^31", JointPass::kForward,
       [](TransducerJointArguments& a) { a.shape.batch = a.shape.max_time = 1 << 16; }, "2^31-1"},
  };
  for (const Case& c : cases) {
    for (Variant v : {Variant::kUnfused, Variant::kFused}) {
      FakeProblem f;
      c.mutate(f.args);
      const Status status = TransducerJoint::can_implement(f.args, v, c.pass);
      EXPECT_FALSE(status.ok()) << c.what;
      EXPECT_NE(status.reason().find(c.reason), std::string::npos)
          << c.what << ": reason was \"" << status.reason() << "\"";
      EXPECT_EQ(TransducerJoint::workspace_bytes(f.args, v, c.pass), 0u) << c.what;
      EXPECT_FALSE(TransducerJoint().run(f.args, v, c.pass, nullptr, nullptr).ok()) << c.what;
    }
  }
}

TEST(TransducerJointCudaHost, OnlyTheUnfusedPackedForwardNeedsWorkspace) {
  FakeProblem f;
  for (Variant v : {Variant::kUnfused, Variant::kFused}) {
    for (JointPass pass : {JointPass::kForward, JointPass::kBackward}) {
      EXPECT_EQ(TransducerJoint::workspace_bytes(f.args, v, pass), 0u);
    }
  }
  f.args.layout = TransducerLayout::kPacked;
  f.args.packed_offsets = f.offsets;
  f.args.packed_rows = 30;
  EXPECT_EQ(TransducerJoint::workspace_bytes(f.args, Variant::kUnfused, JointPass::kForward),
            size_t{3 * 7 * 5 * 5 * 4});
  EXPECT_EQ(TransducerJoint::workspace_bytes(f.args, Variant::kFused, JointPass::kForward), 0u);
  EXPECT_EQ(TransducerJoint::workspace_bytes(f.args, Variant::kUnfused, JointPass::kBackward), 0u);
  EXPECT_NE(TransducerJoint()
                .run(f.args, Variant::kUnfused, JointPass::kForward, nullptr, nullptr)
                .reason()
                .find("workspace"),
            std::string::npos);
}

// ---- device ----

TEST(TransducerJointCuda, MatchesCpuReferenceAtOddSizes) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  check_all(random_problem({3, 7, 4, 5}, {7, 5, 0}, {4, 0, 2}, 1));
  check_all(random_problem({2, 37, 13, 29}, {37, 20}, {13, 7}, 2));
  check_all(random_problem({1, 1, 0, 1}, {1}, {0}, 3));
  check_all(random_problem({2, 5, 3, 300}, {5, 3}, {3, 1}, 4));  // H > threads per block
  check_all(random_problem({4, 3, 2, 3}, {3, 3, 3, 3}, {2, 2, 2, 2}, 5));  // no padding at all
}

// The device cannot throw: a sequence with invalid lengths gets NaN in its
// padded rows and gradients; the others are unharmed.
TEST(TransducerJointCuda, InvalidLengthsGiveNanRowsWithoutHarmingOthers) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Problem p = random_problem({2, 4, 2, 3}, {4, 3}, {2, 1}, 6);
  std::vector<int32_t> bad_frames = {4, 5};  // T_1 > T
  DeviceBuffer<float> d_f(p.f), d_g(p.g), d_h(static_cast<size_t>(2 * 4 * 3 * 3));
  DeviceBuffer<float> d_dh(std::vector<float>(d_h.size(), 1.0f)), d_df(p.f.size()), d_dg(p.g.size());
  DeviceBuffer<int32_t> d_frames(bad_frames), d_lengths(p.lengths);
  TransducerJointArguments args;
  args.shape = p.shape;
  args.activation = JointActivation::kIdentity;
  args.frames = d_frames.data();
  args.label_lengths = d_lengths.data();
  args.f = d_f.data();
  args.g = d_g.data();
  args.h = d_h.data();
  args.dh = d_dh.data();
  args.df = d_df.data();
  args.dg = d_dg.data();
  for (JointPass pass : {JointPass::kForward, JointPass::kBackward}) {
    ASSERT_TRUE(TransducerJoint().run(args, Variant::kFused, pass, nullptr, nullptr).ok());
  }
  const std::vector<float> h = d_h.download(), df = d_df.download(), dg = d_dg.download();
  for (size_t i = 0; i < h.size(); ++i) {
    EXPECT_EQ(std::isnan(h[i]), i >= h.size() / 2) << "h[" << i << "]";
  }
  for (size_t i = 0; i < df.size(); ++i) EXPECT_EQ(std::isnan(df[i]), i >= df.size() / 2) << i;
  for (size_t i = 0; i < dg.size(); ++i) EXPECT_EQ(std::isnan(dg[i]), i >= dg.size() / 2) << i;
  EXPECT_EQ(df[0], 3.0f);  // identity: Σ_{u<=2} 1
  EXPECT_EQ(dg[0], 4.0f);  // identity: Σ_{t<4} 1
}

}  // namespace
}  // namespace perflab::kernels::cuda
