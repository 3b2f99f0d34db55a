// The cuBLASLt linear layer with no device: which shapes, modes and
// pointers can_implement accepts (each refusal with its reason), the
// launches forward and backward declare for each mode, and the aux and
// workspace sizes. The GPU's results against the CPU: linear_cuda_test.cc.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cuda/bias_act.h"
#include "kernels/cuda/linear.h"

namespace perflab::kernels::cuda {
namespace {

LinearArguments valid() {
  LinearArguments a;
  a.batch = 37;
  a.in_features = 13;
  a.out_features = 127;
  a.activation = Activation::kRelu;
  return a;
}

void expect_rejected(const LinearArguments& args, const std::string& fragment) {
  Status status = Linear::can_implement(args);
  EXPECT_FALSE(status.ok()) << "accepted; it should say: " << fragment;
  EXPECT_NE(status.reason().find(fragment), std::string::npos) << status.reason();
}

TEST(LinearCanImplement, AcceptsValidProblems) {
  EXPECT_TRUE(Linear::can_implement(valid()).ok()) << Linear::can_implement(valid()).reason();
  LinearArguments a = valid();
  a.fused = false;
  a.precision = Precision::kBf16;
  EXPECT_TRUE(Linear::can_implement(a).ok()) << Linear::can_implement(a).reason();
  a = valid();
  a.dy_is_pre_activation = true;
  a.dx_applies_input_relu = true;
  EXPECT_TRUE(Linear::can_implement(a).ok()) << Linear::can_implement(a).reason();
}

TEST(LinearCanImplement, RejectsZeroAndHugeSizesWithAReason) {
  LinearArguments a = valid();
  a.batch = 0;
  expect_rejected(a, "batch must be in [1, 2^31-1], got 0");
  a = valid();
  a.in_features = 0;
  expect_rejected(a, "in_features");
  a = valid();
  a.out_features = -3;
  expect_rejected(a, "out_features must be in [1, 2^31-1], got -3");
  a = valid();
  a.batch = int64_t{1} << 31;
  expect_rejected(a, "batch");
}

TEST(LinearCanImplement, RejectsUnsupportedModeCombinations) {
  // The weight gradient from dzᵀ: not where cuBLASLt's BGRADB sums db on it.
  LinearArguments w = valid();
  w.wgrad_reads_dy_t = true;
  expect_rejected(w, "without cuBLASLt's BGRADB epilogue");
  w.dy_is_pre_activation = true;  // db from the layer above's DRELU_BGRAD: no BGRADB here
  EXPECT_TRUE(Linear::can_implement(w).ok()) << Linear::can_implement(w).reason();
  w = valid();
  w.wgrad_reads_dy_t = true;
  w.epilogues = Epilogues::kOwnBackward;
  EXPECT_TRUE(Linear::can_implement(w).ok()) << Linear::can_implement(w).reason();
  w.fused = false;
  EXPECT_TRUE(Linear::can_implement(w).ok()) << Linear::can_implement(w).reason();
  LinearArguments a = valid();
  a.fused = false;
  a.dy_is_pre_activation = true;
  expect_rejected(a, "need the fused mode");
  a = valid();
  a.fused = false;
  a.dx_applies_input_relu = true;
  expect_rejected(a, "need the fused mode");
  a = valid();
  a.activation = Activation::kNone;
  a.dy_is_pre_activation = true;
  expect_rejected(a, "ReLU layers only");
  a = valid();
  a.precision = static_cast<Precision>(7);
  expect_rejected(a, "unknown precision");
  a = valid();
  a.activation = Activation::kNone;
  a.dy_relu_applied = true;
  expect_rejected(a, "dy_relu_applied applies to ReLU layers");
  a = valid();
  a.dy_relu_applied = true;
  a.dy_is_pre_activation = true;
  expect_rejected(a, "not with dy_is_pre_activation");
  a = valid();
  a.dy_relu_applied = true;
  a.fused = false;
  EXPECT_TRUE(Linear::can_implement(a).ok()) << "either mode: " << Linear::can_implement(a).reason();
  // Our own epilogues do not chain through DRELU_BGRAD (no bitmask), but a
  // layer below a fused head may still take its dL/dz (and db) from above.
  for (Epilogues own : {Epilogues::kOwn, Epilogues::kOwnBackward}) {
    a = valid();
    a.epilogues = own;
    a.dx_applies_input_relu = true;
    expect_rejected(a, "dx_applies_input_relu needs cuBLASLt's epilogues");
    a = valid();
    a.epilogues = own;
    a.dy_is_pre_activation = true;
    EXPECT_TRUE(Linear::can_implement(a).ok()) << epilogues_name(own) << ": " << Linear::can_implement(a).reason();
  }
  a = valid();
  a.epilogues = static_cast<Epilogues>(9);
  expect_rejected(a, "unknown epilogues");
}

// What each fused mode launches around its GEMMs, and what it keeps: the
// own epilogues write no bitmask and need the bias-gradient partials.
TEST(LinearLaunches, OwnEpiloguesAddTheirPassesAndDropTheBitmask) {
  const auto names_of = [](const LaunchList& list) {
    std::vector<std::string> names;
    for (const auto& k : list) names.push_back(k.kernel);
    return names;
  };
  const std::string gemm = "gemm|gemv|nvjet|splitK";
  LinearArguments a = valid();
  EXPECT_EQ(names_of(Linear::forward_launches(a)), std::vector<std::string>{gemm});
  EXPECT_EQ(names_of(Linear::backward_launches(a, true)),
            (std::vector<std::string>{"relu_backward_kernel", gemm, gemm}));
  a.epilogues = Epilogues::kOwnBackward;
  EXPECT_EQ(Linear::aux_bytes(a), 0u);
  EXPECT_GT(Linear::workspace_bytes(a), Linear::workspace_bytes(valid())) << "+ the partial sums";
  EXPECT_EQ(Linear::workspace_bytes(a) % 256, 0u);
  EXPECT_EQ(names_of(Linear::forward_launches(a)), std::vector<std::string>{gemm});
  // 37 rows: one block per column tile reads them all; 4,096: row slices,
  // then the last blocks' sums.
  EXPECT_EQ(names_of(Linear::backward_launches(a, true)),
            (std::vector<std::string>{"relu_bias_grad_one_pass_kernel", gemm, gemm}));
  LinearArguments wide = a;
  wide.batch = 4096;
  EXPECT_EQ(names_of(Linear::backward_launches(wide, true)),
            (std::vector<std::string>{"relu_bias_grad_partial_kernel", gemm, gemm}));
  EXPECT_LT(Linear::backward_launches(a, true)[0].cost.bytes,
            3.0 * 37 * 127 * 4 + 2.0 * static_cast<double>(relu_bias_grad_workspace_bytes(37, 127)))
      << "the one-pass kernel reads and writes no partial sums";
  a.epilogues = Epilogues::kOwn;
  EXPECT_EQ(Linear::aux_bytes(a), 0u);
  EXPECT_EQ(names_of(Linear::forward_launches(a)), (std::vector<std::string>{gemm, "bias_act_kernel"}));
  // Below a fused head (dy_is_pre_activation): dz and db come from above.
  a.dy_is_pre_activation = true;
  EXPECT_EQ(names_of(Linear::backward_launches(a, true)), (std::vector<std::string>{gemm, gemm}));
  // wgrad_reads_dy_t: dz transposed just before the weight gradient, all
  // of it read and written once.
  a.wgrad_reads_dy_t = true;
  const LaunchList t = Linear::backward_launches(a, true);
  EXPECT_EQ(names_of(t), (std::vector<std::string>{"transpose_kernel", gemm, gemm}));
  EXPECT_DOUBLE_EQ(t[0].cost.bytes, 2.0 * 37 * 127 * 4);
  // After our own dReLU pass (dz written in place), before the weight gradient.
  a.dy_is_pre_activation = false;
  a.epilogues = Epilogues::kOwnBackward;
  EXPECT_EQ(names_of(Linear::backward_launches(a, true)),
            (std::vector<std::string>{"relu_bias_grad_one_pass_kernel", "transpose_kernel", gemm, gemm}));
}

TEST(LinearCanImplement, RejectsMisalignedPointers) {
  alignas(16) static float storage[8];
  LinearArguments a = valid();
  a.x = storage;
  EXPECT_TRUE(Linear::can_implement(a).ok());
  a.x = storage + 1;  // 4-byte aligned only
  expect_rejected(a, "x is not 16-byte aligned");
  a = valid();
  a.input_db = storage + 2;
  expect_rejected(a, "input_db is not 16-byte aligned");
  a = valid();
  a.dgrad_reads_w_t = true;
  a.w_t = storage + 3;
  expect_rejected(a, "w_t is not 16-byte aligned");
  a.w_t = storage + 4;
  EXPECT_TRUE(Linear::can_implement(a).ok()) << Linear::can_implement(a).reason();
  a = valid();
  a.wgrad_reads_dy_t = true;
  a.epilogues = Epilogues::kOwnBackward;
  a.dy_t = storage + 1;
  expect_rejected(a, "dy_t is not 16-byte aligned");
}

TEST(LinearSizes, AuxAndWorkspace) {
  EXPECT_EQ(Linear::aux_ld_bits(1), 128);
  EXPECT_EQ(Linear::aux_ld_bits(128), 128);
  EXPECT_EQ(Linear::aux_ld_bits(129), 256);
  LinearArguments a = valid();  // fused ReLU, out 127 -> 128 bits = 16 bytes per row
  EXPECT_EQ(Linear::aux_bytes(a), size_t{16 * 37});
  a.activation = Activation::kNone;
  EXPECT_EQ(Linear::aux_bytes(a), 0u);
  a.activation = Activation::kRelu;
  a.fused = false;
  EXPECT_EQ(Linear::aux_bytes(a), 0u);
  EXPECT_GT(Linear::workspace_bytes(a), Linear::workspace_bytes(valid()));  // + bias_grad partials
  EXPECT_EQ(Linear::workspace_bytes(valid()) % 256, 0u);
}

}  // namespace
}  // namespace perflab::kernels::cuda
