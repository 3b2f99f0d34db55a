// Tests for the CUDA transducer joint (kernels/cuda/transducer_joint.h)
// against the CPU reference (kernels/cpu/transducer_joint.h) on seeded random
// inputs at odd sizes: both variants, padded and packed, identity and ReLU,
// activations in fp32, bf16 and fp16; and a bf16 joint's h read by the bf16
// RNN-T loss as its logits.
//
// Tolerance: exact. The device computes each output as the reference does
// (one fp32 add, then max(x, 0); sums over u or t in the same ascending
// order in fp32, no products to contract), so the results are bit-identical.
// In bf16 and fp16 the reference takes the inputs rounded to the type, rounds
// h to it (nearest even, as the device stores it) and masks the backward
// with that rounded h: the same arithmetic, still bit-identical.
// Padding rows of padded outputs must be exactly 0 (outputs start as NaN).
// The first tests need no device (can_implement, workspace sizes).
#include "kernels/cuda/transducer_joint.h"

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/rnnt_loss.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/rnnt_loss.h"
#include "kernels/half_precision.h"
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

/// `v` stored as `dtype` (raw bytes, rounded to nearest even), and back.
std::vector<unsigned char> as_bytes(const std::vector<float>& v, RnntDType dtype) {
  const size_t e = rnnt_dtype_bytes(dtype);
  std::vector<unsigned char> out(v.size() * e);
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == RnntDType::kFloat32) {
      std::memcpy(out.data() + 4 * i, &v[i], 4);
    } else {
      const uint16_t bits = dtype == RnntDType::kBFloat16 ? to_bf16(v[i]) : to_fp16(v[i]);
      std::memcpy(out.data() + 2 * i, &bits, 2);
    }
  }
  return out;
}
std::vector<float> from_bytes(const std::vector<unsigned char>& b, RnntDType dtype) {
  const size_t e = rnnt_dtype_bytes(dtype);
  std::vector<float> out(b.size() / e);
  for (size_t i = 0; i < out.size(); ++i) {
    if (dtype == RnntDType::kFloat32) {
      std::memcpy(&out[i], b.data() + 4 * i, 4);
    } else {
      uint16_t bits = 0;
      std::memcpy(&bits, b.data() + 2 * i, 2);
      out[i] = dtype == RnntDType::kBFloat16 ? from_bf16(bits) : from_fp16(bits);
    }
  }
  return out;
}
std::vector<float> rounded(const std::vector<float>& v, RnntDType dtype) { return from_bytes(as_bytes(v, dtype), dtype); }

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
void check(const Problem& p, Variant variant, TransducerLayout layout, JointActivation act,
           RnntDType dtype = RnntDType::kFloat32) {
  const JointShape& s = p.shape;
  const bool packed = layout == TransducerLayout::kPacked;
  const std::string config = describe(s) + " " + (variant == Variant::kFused ? "fused" : "unfused") +
                             (packed ? " packed" : " padded") +
                             (act == JointActivation::kRelu ? " relu " : " identity ") + rnnt_dtype_name(dtype);
  const int64_t out_elements = output_elements(p, layout);
  // Reference, on the inputs as the device holds them.
  const std::vector<float> f = rounded(p.f, dtype), g = rounded(p.g, dtype);
  std::vector<float> h(static_cast<size_t>(out_elements));
  const std::vector<float> dh = rounded(test_support::random_vector(h.size(), 99), dtype);
  std::vector<float> df(p.f.size()), dg(p.g.size());
  if (packed) {
    cpu::transducer_joint_forward_packed(s, act, f.data(), g.data(), p.frames.data(), p.lengths.data(),
                                         p.offsets.data(), h.data());
    h = rounded(h, dtype);
    cpu::transducer_joint_backward_packed(s, act, h.data(), dh.data(), p.frames.data(),
                                          p.lengths.data(), p.offsets.data(), df.data(), dg.data());
  } else {
    cpu::transducer_joint_forward(s, act, f.data(), g.data(), p.frames.data(), p.lengths.data(), h.data());
    h = rounded(h, dtype);
    cpu::transducer_joint_backward(s, act, h.data(), dh.data(), p.frames.data(), p.lengths.data(),
                                   df.data(), dg.data());
  }
  // Device; outputs start as NaN so every value must be written.
  DeviceBuffer<unsigned char> d_f(as_bytes(f, dtype)), d_g(as_bytes(g, dtype)), d_dh(as_bytes(dh, dtype));
  DeviceBuffer<unsigned char> d_h(h.size() * rnnt_dtype_bytes(dtype));
  DeviceBuffer<float> d_df(df.size()), d_dg(dg.size());
  if (d_h.size() > 0) PERFLAB_CUDA_CHECK(cudaMemset(d_h.data(), 0xFF, d_h.bytes()));
  for (DeviceBuffer<float>* out : {&d_df, &d_dg}) {
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
  args.dtype = dtype;
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
  EXPECT_TRUE(same("h", config, from_bytes(d_h.download(), dtype), h, s.hidden));
  EXPECT_TRUE(same("df", config, d_df.download(), df, s.hidden));
  EXPECT_TRUE(same("dg", config, d_dg.download(), dg, s.hidden));
}

void check_all(const Problem& p) {
  for (Variant variant : {Variant::kUnfused, Variant::kFused}) {
    for (TransducerLayout layout : {TransducerLayout::kPadded, TransducerLayout::kPacked}) {
      for (JointActivation act : {JointActivation::kIdentity, JointActivation::kRelu}) {
        for (RnntDType dtype : {RnntDType::kFloat32, RnntDType::kBFloat16, RnntDType::kFloat16}) {
          check(p, variant, layout, act, dtype);
        }
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
      {"h aliases g", JointPass::kForward, [](TransducerJointArguments& a) { a.h = const_cast<void*>(a.g); },
       "alias"},
      {"null dg", JointPass::kBackward, [](TransducerJointArguments& a) { a.dg = nullptr; },
       "dh, df and dg"},
      {"relu without h", JointPass::kBackward, [](TransducerJointArguments& a) { a.h = nullptr; },
       "forward output h"},
      {"df aliases dg", JointPass::kBackward, [](TransducerJointArguments& a) { a.df = a.dg; }, "alias"},
      {"null lengths", JointPass::kBackward, [](TransducerJointArguments& a) { a.frames = nullptr; },
       "frames and label_lengths"},
      {"unknown dtype", JointPass::kForward, [](TransducerJointArguments& a) { a.dtype = static_cast<RnntDType>(7); },
       "unknown dtype"},
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
  f.args.dtype = RnntDType::kBFloat16;  // the padded h in the workspace is of dtype
  EXPECT_EQ(TransducerJoint::workspace_bytes(f.args, Variant::kUnfused, JointPass::kForward),
            size_t{3 * 7 * 5 * 5 * 2});
  f.args.dtype = RnntDType::kFloat32;
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

// The loss accepts the joint's output: a bf16 joint writes h in the layout
// and type the bf16 loss reads as logits (H = V), and the loss's costs on it
// equal the CPU loss's on the same values (the loss test's tolerance,
// 1e-5 + 1e-4 relative: fp32 recursions against the reference's doubles).
TEST(TransducerJointCuda, TheBf16LossReadsTheBf16JointsOutput) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (TransducerLayout layout : {TransducerLayout::kPadded, TransducerLayout::kPacked}) {
    const bool packed = layout == TransducerLayout::kPacked;
    const Problem p = random_problem({3, 9, 4, 17}, {9, 6, 1}, {4, 2, 0}, 11);  // H = V = 17
    const JointShape& s = p.shape;
    const std::vector<int32_t> labels = {1, 5, 15, 3, 2, 7, 0, 0, 0, 0, 0, 0};  // [B, U], below the blank (16)
    DeviceBuffer<unsigned char> d_f(as_bytes(p.f, RnntDType::kBFloat16)), d_g(as_bytes(p.g, RnntDType::kBFloat16));
    const int64_t rows = packed ? p.packed_rows : s.batch * s.max_time * (s.max_labels + 1);
    DeviceBuffer<unsigned char> d_h(static_cast<size_t>(rows * s.hidden) * 2);
    DeviceBuffer<int32_t> d_frames(p.frames), d_lengths(p.lengths), d_labels(labels);
    DeviceBuffer<int64_t> d_offsets(p.offsets);
    TransducerJointArguments j;
    j.shape = s;
    j.activation = JointActivation::kIdentity;  // logits take any sign
    j.layout = layout;
    j.dtype = RnntDType::kBFloat16;
    j.frames = d_frames.data();
    j.label_lengths = d_lengths.data();
    j.packed_offsets = packed ? d_offsets.data() : nullptr;
    j.packed_rows = packed ? p.packed_rows : 0;
    j.f = d_f.data();
    j.g = d_g.data();
    j.h = d_h.data();
    ASSERT_TRUE(TransducerJoint().run(j, Variant::kFused, JointPass::kForward, nullptr, nullptr).ok());
    RnntLossArguments l;
    l.shape = {s.batch, s.max_time, s.max_labels, s.hidden};
    l.options = {-1, cpu::RnntReduction::kNone};
    l.layout = layout;
    l.dtype = RnntDType::kBFloat16;
    l.logits = d_h.data();
    l.labels = d_labels.data();
    l.logit_lengths = d_frames.data();
    l.label_lengths = d_lengths.data();
    l.packed_offsets = j.packed_offsets;
    l.packed_rows = j.packed_rows;
    DeviceBuffer<float> d_costs(static_cast<size_t>(s.batch));
    l.costs = d_costs.data();
    ASSERT_TRUE(RnntLoss::can_implement(l, RnntLoss::Variant::kFused).ok());
    DeviceBuffer<uint8_t> workspace(std::max<size_t>(1, RnntLoss::workspace_bytes(l, RnntLoss::Variant::kFused)));
    ASSERT_TRUE(RnntLoss().run(l, RnntLoss::Variant::kFused, workspace.data(), nullptr).ok());
    const std::vector<float> costs = d_costs.download();
    // The reference on exactly the logits the loss read.
    const std::vector<float> logits = from_bytes(d_h.download(), RnntDType::kBFloat16);
    std::vector<double> ref(static_cast<size_t>(s.batch));
    std::vector<double> ws(static_cast<size_t>(cpu::rnnt_workspace_elements(rows)));
    if (packed) {
      cpu::rnnt_loss_packed<float, double>(l.shape, l.options, logits.data(), labels.data(), p.frames.data(),
                                           p.lengths.data(), p.offsets.data(), ref.data(), nullptr, ws.data());
    } else {
      cpu::rnnt_loss<float, double>(l.shape, l.options, logits.data(), labels.data(), p.frames.data(),
                                    p.lengths.data(), ref.data(), nullptr, ws.data());
    }
    for (int64_t b = 0; b < s.batch; ++b) {
      EXPECT_NEAR(costs[static_cast<size_t>(b)], ref[static_cast<size_t>(b)],
                  1e-5 + 1e-4 * std::fabs(ref[static_cast<size_t>(b)]))
          << (packed ? "packed" : "padded") << " b=" << b;
    }
  }
}

}  // namespace
}  // namespace perflab::kernels::cuda
