// One DLRM training step on the GPU against the CPU reference
// (cuda_compare.h's compare_one_step, its tolerances at batch 37) in every
// mode (fused or not, sync-free or not, dim 4 and 16, TF32 and bf16) and
// with each step option: our own epilogues, the data-gradient GEMMs from
// transposed weights, the wide layers' weight gradients from dz transposed,
// tuned GEMMs. The tiny shape of tiny_dlrm.h; skipped without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <utility>

#ifdef PERFLAB_DLRM_CUDA
#include "kernels/cuda/linear_plan.h"
#include "tests/support/cuda_device.h"
#include "tests/workloads/dlrm/tiny_cuda_dlrm.h"
#include "workloads/dlrm/cuda_compare.h"
#include "workloads/dlrm/cuda_launches.h"
#include "workloads/dlrm/cuda_model.h"
#endif

namespace perflab::dlrm {
namespace {

#ifndef PERFLAB_DLRM_CUDA

TEST(DlrmCudaStep, Skipped) { GTEST_SKIP() << "built without CUDA"; }

#else  // PERFLAB_DLRM_CUDA

namespace kc = perflab::kernels::cuda;

constexpr int64_t kBatch = 37;
constexpr uint64_t kSeed = 5;

class DlrmCudaStepTest : public ::testing::TestWithParam<StepParam> {};

TEST_P(DlrmCudaStepTest, OneStepMatchesTheCpuModel) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const auto [dim, precision, fused, sync_free] = GetParam();
  const Dataset data = tiny_data(kBatch, 7);
  CudaModelOptions options;
  options.batch = kBatch;
  options.precision = precision;
  options.fused = fused;
  options.update_mode =
      sync_free ? kc::EmbeddingUpdateMode::kSyncFree : kc::EmbeddingUpdateMode::kSynchronising;
  const StepComparison c =
      compare_one_step(tiny_shape(dim), kSeed, options, data.batch(0, kBatch), 0.5f);
  EXPECT_TRUE(c.passed) << c.detail;
  EXPECT_TRUE(std::isfinite(c.loss_gpu)) << c.detail;
}

INSTANTIATE_TEST_SUITE_P(AllModes, DlrmCudaStepTest, all_step_params(), step_name);

// Our own epilogues (epilogues=own, own_backward; auto's picks for TF32 and
// bf16): one SGD step matches the CPU model within the same gate, synchronous
// and sync-free, with the fused head taking its layer's dReLU and db as with
// cuBLASLt's chain.
TEST(DlrmCudaStep, OwnEpiloguesMatchTheCpuModel) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Dataset data = tiny_data(kBatch, 7);
  for (kc::Precision precision : {kc::Precision::kTf32, kc::Precision::kBf16}) {
    for (kc::Epilogues epilogues : {kc::Epilogues::kOwn, kc::Epilogues::kOwnBackward}) {
      for (bool sync_free : {false, true}) {
        CudaModelOptions options;
        options.batch = kBatch;
        options.precision = precision;
        options.epilogues = epilogues;
        options.update_mode = sync_free ? kc::EmbeddingUpdateMode::kSyncFree : kc::EmbeddingUpdateMode::kSynchronising;
        const StepComparison c = compare_one_step(tiny_shape(16), kSeed, options, data.batch(0, kBatch), 0.5f);
        EXPECT_TRUE(c.passed) << kc::epilogues_name(epilogues) << ": " << c.detail;
        EXPECT_TRUE(std::isfinite(c.loss_gpu)) << c.detail;
      }
    }
  }
}

/// Options for one sync-free step in each precision, with our epilogues,
/// cuBLASLt's chain and unfused, on one stream and with side streams:
/// `check` gets each, after `set` has adjusted it, with its label.
void for_each_step_mode(const std::function<void(CudaModelOptions&)>& set,
                        const std::function<void(const CudaModelOptions&, const std::string&)>& check) {
  for (kc::Precision precision : {kc::Precision::kTf32, kc::Precision::kBf16}) {
    for (const auto& [fused, epilogues] : {std::pair{true, kc::Epilogues::kOwnBackward},
                                           std::pair{true, kc::Epilogues::kCublasLt},
                                           std::pair{false, kc::Epilogues::kCublasLt}}) {
      for (bool side_streams : {false, true}) {
        CudaModelOptions options;
        options.batch = kBatch;
        options.precision = precision;
        options.fused = fused;
        options.epilogues = epilogues;
        options.side_streams = side_streams;
        options.update_mode = kc::EmbeddingUpdateMode::kSyncFree;
        set(options);
        check(options, describe(options) + (side_streams ? ", side streams" : ", one stream"));
      }
    }
  }
}

void expect_one_step_matches(const ModelShape& shape, const CudaModelOptions& options, const std::string& label) {
  const Dataset data = tiny_data(kBatch, 7);
  const StepComparison c = compare_one_step(shape, kSeed, options, data.batch(0, kBatch), 0.5f);
  EXPECT_TRUE(c.passed) << label << ": " << c.detail;
  EXPECT_TRUE(std::isfinite(c.loss_gpu)) << label << ": " << c.detail;
}

// The data-gradient GEMMs reading each layer's weights transposed
// (dgrad_weights_transposed: auto's choice in TF32), written at the step's
// start beside the forward or, without side streams, before it: one step
// within the gate, both precisions, fused with either epilogues and unfused.
TEST(DlrmCudaStep, TransposedDgradWeightsMatchTheCpuModel) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const ModelShape shape = tiny_shape(16);
  for_each_step_mode(
      [](CudaModelOptions& o) { o.dgrad_weights_transposed = true; },
      [&](const CudaModelOptions& o, const std::string& label) { expect_one_step_matches(shape, o, label); });
}

// The wide layers' weight gradients from dz transposed (wgrad_dy_transposed):
// tiny_shape's top MLP widened to 1024-1024-16-1, so layers 1 and 2 read
// 1,024-wide inputs (layer 1 after its own dReLU pass with our epilogues,
// layer 2 with its dz from the fused head); one step within the gate in
// every mode above, with transposed data-gradient weights beside them.
TEST(DlrmCudaStep, TransposedDzForTheWideWeightGradientsMatchesTheCpuModel) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  ModelShape shape = tiny_shape(16);
  shape.top_mlp = {1024, 1024, 16, 1};
  for_each_step_mode(
      [](CudaModelOptions& o) {
        o.wgrad_dy_transposed = true;
        o.dgrad_weights_transposed = o.side_streams;
      },
      [&](const CudaModelOptions& o, const std::string& label) {
        // Layers 1 and 2 in every mode (unfused, the logit layer reads 16).
        const LaunchPlan plan = train_step_launches(shape, o);
        EXPECT_EQ(std::count_if(plan.begin(), plan.end(),
                                [](const DeclaredKernel& k) {
                                  return k.kernel == "transpose_kernel" && k.phase == "backward";
                                }),
                  2)
            << label << ": the layers that take the transposed dz";
        expect_one_step_matches(shape, o, label);
      });
}

// gemm_algorithms=tuned: every GEMM of every layer timed (forward and
// wgrad always, dgrad where the layer has a data gradient), the kept
// candidate one that ran, and the step still within the gate's tolerances.
// Tuned (the heuristic's candidates timed) and searched (every algorithm
// id's configurations too): each GEMM keeps its fastest candidate that
// runs, says which, and the step still matches the CPU model.
TEST(DlrmCudaStep, TunedGemmsChooseARunningCandidateAndStillMatchTheCpuModel) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Dataset data = tiny_data(kBatch, 7);
  for (kc::Precision precision : {kc::Precision::kTf32, kc::Precision::kBf16}) for (bool search : {false, true}) {
    SCOPED_TRACE(std::string(precision == kc::Precision::kBf16 ? "bf16" : "tf32") + (search ? ", searched" : ", tuned"));
    CudaModelOptions options;
    options.batch = kBatch;
    options.precision = precision;
    options.tune_gemms = true;
    options.search_gemms = search;
    const ModelShape shape = tiny_shape(16);
    {
      CpuModel init(shape, kSeed);
      CudaModel model(init, options);
      // The fused head (the top's last layer inside the loss's kernel, on by
      // default) is no cuBLASLt GEMM; every other layer is, and every one but
      // the bottom's first computes dx.
      ASSERT_TRUE(fused_head(shape, options));
      const size_t layers = shape.bottom_mlp.size() + shape.top_mlp.size() - 1;
      EXPECT_EQ(model.gemm_choices().size(), 3 * layers - 1);
      for (const GemmTuning& t : model.gemm_choices()) {
        ASSERT_FALSE(t.choice.median_ms.empty()) << t.layer << " " << t.choice.gemm;
        ASSERT_GE(t.choice.chosen, 0);
        ASSERT_LT(static_cast<size_t>(t.choice.chosen), t.choice.median_ms.size());
        const double chosen = t.choice.median_ms[static_cast<size_t>(t.choice.chosen)];
        EXPECT_TRUE(std::isfinite(chosen) && chosen > 0) << t.layer << " " << t.choice.gemm;
        EXPECT_LE(t.choice.median_ms.size(), static_cast<size_t>(search ? kc::kSearchMostCandidates
                                                                        : kc::kLinearAlgorithmCandidates));
        EXPECT_EQ(t.choice.kept.rfind("algo ", 0), 0u) << t.choice.kept;
        for (double ms : t.choice.median_ms) {
          if (std::isfinite(ms)) {
            EXPECT_LE(chosen, ms) << t.layer << " " << t.choice.gemm;
          }
        }
      }
    }
    const StepComparison c = compare_one_step(shape, kSeed, options, data.batch(0, kBatch), 0.5f);
    EXPECT_TRUE(c.passed) << c.detail;
  }
}

#endif  // PERFLAB_DLRM_CUDA

}  // namespace
}  // namespace perflab::dlrm
