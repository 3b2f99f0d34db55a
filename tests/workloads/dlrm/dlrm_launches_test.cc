// DLRM's CUDA step, counted on the CPU: the kernels CudaModel::train_step
// launches per phase, from the operators' own declarations
// (workloads/dlrm/cuda_launches.h), for the DeepLearningExamples shape in
// each mode. The numbers below are the record: a change that adds or
// removes launches fails here and says how many and in which phase; update
// them when it is meant (issue 22 lowers them). Library calls (cuBLASLt
// matmuls, CUB's sort) count one each here;
// the profiler's kernels per iteration on a GPU counts what they launch.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#if PERFLAB_DLRM_CUDA
#include "workloads/dlrm/cuda_launches.h"
#endif

namespace perflab::dlrm {
namespace {

#if PERFLAB_DLRM_CUDA
namespace kc = kernels::cuda;

/// The dle preset's shape (26 tables; their sizes change no count).
ModelShape dle_shape() {
  ModelShape s;
  s.num_dense = 13;
  s.table_sizes.assign(26, 1000);
  s.embed_dim = 128;
  s.bottom_mlp = {512, 256, 128};
  s.top_mlp = {1024, 1024, 512, 256, 1};
  return s;
}

CudaModelOptions options(kc::Precision precision, bool fused) {
  CudaModelOptions o;
  o.batch = 16384;
  o.precision = precision;
  o.fused = fused;
  return o;
}

/// Whether k is in `phase` (every phase: "") and named `kernel` (any: "").
bool selected(const DeclaredKernel& k, const std::string& phase, const std::string& kernel) {
  return (phase.empty() || k.phase == phase) && (kernel.empty() || k.kernel == kernel);
}
/// The selected launches of `plan`, and their declared bytes.
int count(const LaunchPlan& plan, const std::string& phase, const std::string& kernel = "") {
  int n = 0;
  for (const DeclaredKernel& k : plan) n += selected(k, phase, kernel);
  return n;
}
double bytes(const LaunchPlan& plan, const std::string& phase, const std::string& kernel = "") {
  double total = 0;
  for (const DeclaredKernel& k : plan) total += selected(k, phase, kernel) ? k.cost.bytes : 0.0;
  return total;
}

std::string counts(const LaunchPlan& plan) {
  std::string out;
  for (const auto& [phase, n] : launches_per_phase(plan))
    out += phase + " " + std::to_string(n) + ", ";
  return out + "total " + std::to_string(plan.size());
}

/// Per phase, the recorded count against the plan's, with the plan listed
/// when they differ.
void expect_launches(const LaunchPlan& plan, const std::map<std::string, int>& recorded,
                     int total) {
  std::map<std::string, int> got;
  for (const auto& [phase, n] : launches_per_phase(plan)) got[phase] = n;
  std::string listing;
  for (const DeclaredKernel& k : plan)
    listing += "\n  " + k.phase + ": " + k.kernel + " (" + k.label + ")";
  EXPECT_EQ(got, recorded) << "launches per phase changed: now " << counts(plan) << listing;
  EXPECT_EQ(static_cast<int>(plan.size()), total) << counts(plan);
}
#endif

TEST(DlrmLaunches, Tf32FusedStep) {
#if PERFLAB_DLRM_CUDA
  // forward: 3 bottom + 4 top GEMMs with epilogues and the interaction,
  // which looks the embedding rows up itself and writes the update's sort
  // keys (one rank: no gather launch); the top MLP's last layer, 256 -> 1,
  // runs inside the loss's kernel, forward and backward; backward: wgrad + dgrad for each of the 4
  // top layers, the interaction (which applies the bottom's last ReLU's
  // dReLU), the bottom's last layer's wgrad and dgrad, then 2 and 1 (no
  // dgrad for the data); optimizer: the sort and the row update, whose
  // launch also runs the dense SGD (the interaction wrote the sort keys; the
  // update finds each row's run in the sorted keys: no run-length encoding
  // or scan); the loss is one kernel (its last block finishes the sum).
  expect_launches(train_step_launches(dle_shape(), options(kc::Precision::kTf32, true)),
                  {{"forward", 8}, {"loss", 1}, {"backward", 14}, {"optimizer", 2}}, 25);
#else
  GTEST_SKIP() << "built without CUDA: the operators' declarations are not built";
#endif
}

TEST(DlrmLaunches, OwnEpiloguesAddTheirPassesAndDropCublasLtsChain) {
#if PERFLAB_DLRM_CUDA
  // epilogues=own: each of the 7 ReLU layers adds a
  // bias+ReLU pass after its GEMM (forward 8 -> 15); the backward adds one
  // dReLU+bias-gradient launch (its last blocks finish the sum) to each
  // layer but the top's last ReLU layer, whose dz and db the fused head
  // writes (6 layers: 14 -> 20). cuBLASLt's own epilogue kernels, which no
  // plan declares (one or two per GEMM on an H100 in TF32), go.
  CudaModelOptions o = options(kc::Precision::kTf32, true);
  o.epilogues = kc::Epilogues::kOwn;
  expect_launches(train_step_launches(dle_shape(), o),
                  {{"forward", 15}, {"loss", 1}, {"backward", 20}, {"optimizer", 2}}, 38);
  // own_backward (auto's pick): the forward as cuBLASLt's (RELU_BIAS),
  // the backward as own.
  const LaunchPlan lt = train_step_launches(dle_shape(), options(kc::Precision::kBf16, true));
  CudaModelOptions b = options(kc::Precision::kBf16, true);
  b.epilogues = kc::Epilogues::kOwnBackward;
  const LaunchPlan own = train_step_launches(dle_shape(), b);
  EXPECT_EQ(count(own, "forward"), count(lt, "forward"));
  EXPECT_EQ(count(own, "backward"), count(lt, "backward") + 6);
  EXPECT_EQ(count(own, "", "relu_bias_grad_partial_kernel"), 6);
  // Unfused, the choice changes nothing.
  CudaModelOptions u = options(kc::Precision::kTf32, false);
  const size_t unfused = train_step_launches(dle_shape(), u).size();
  u.epilogues = kc::Epilogues::kOwn;
  EXPECT_EQ(train_step_launches(dle_shape(), u).size(), unfused);
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(DlrmLaunches, SideStreamsUpdateEachLayerInTheBackwardAndLeaveTheHeadToTheUpdate) {
#if PERFLAB_DLRM_CUDA
  // side_streams on one GPU: each of the 7 Linear layers' SGD runs after
  // its backward, on the weight gradients' stream (backward 14 -> 21); the
  // update's launch keeps only the fused head's weight and bias (257 values,
  // padded to 264) beside the rows. bf16 the same, beside its input cast.
  CudaModelOptions t = options(kc::Precision::kTf32, true);
  t.side_streams = true;
  expect_launches(train_step_launches(dle_shape(), t),
                  {{"forward", 8}, {"loss", 1}, {"backward", 21}, {"optimizer", 2}}, 32);
  for (kc::Precision precision : {kc::Precision::kTf32, kc::Precision::kBf16}) {
    CudaModelOptions o = options(precision, true);
    o.side_streams = true;
    const LaunchPlan plan = train_step_launches(dle_shape(), o);
    const LaunchPlan one_stream = train_step_launches(dle_shape(), options(precision, true));
    std::map<std::string, int> expected;
    for (const auto& [phase, n] : launches_per_phase(one_stream)) expected[phase] = n + (phase == "backward" ? 7 : 0);
    expect_launches(plan, expected, static_cast<int>(one_stream.size()) + 7);
    const double dense_bytes_in_backward = bytes(plan, "backward", "sgd_kernel");
    const double update_bytes[2] = {bytes(one_stream, "optimizer"), bytes(plan, "optimizer")};
    // The dense SGD's bytes moved from the optimizer to the backward, less
    // the head's, which stay.
    EXPECT_GT(dense_bytes_in_backward, 0);
    EXPECT_LT(update_bytes[1], update_bytes[0]);
    EXPECT_NEAR(update_bytes[0] - update_bytes[1], dense_bytes_in_backward, 1e-6 * update_bytes[0]);
  }
  // Unfused (no fused head): every layer, 8, in the backward, nothing left
  // for the optimizer but the update.
  CudaModelOptions u = options(kc::Precision::kTf32, false);
  const LaunchPlan unfused_one = train_step_launches(dle_shape(), u);
  u.side_streams = true;
  const LaunchPlan unfused_side = train_step_launches(dle_shape(), u);
  EXPECT_EQ(count(unfused_side, "backward", "sgd_kernel"), 8);
  EXPECT_EQ(count(unfused_side, "optimizer", "sgd_kernel"), 0);
  EXPECT_EQ(unfused_side.size(), unfused_one.size() + 7);
  // Across ranks the gradients are all-reduced first: the SGD stays whole.
  CudaModelOptions r = options(kc::Precision::kTf32, true);
  const size_t ranks_one = train_step_launches(dle_shape(), r, 2, 0).size();
  r.side_streams = true;
  EXPECT_EQ(train_step_launches(dle_shape(), r, 2, 0).size(), ranks_one);
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(DlrmLaunches, UpTo2048SamplesWithSideStreamsTheHeadIsTwoLaunches) {
#if PERFLAB_DLRM_CUDA
  // The fused head's dx on the step's stream, its sums beside the backward
  // (CudaModel::split_head_): one launch more, the same declared work.
  for (kc::Precision precision : {kc::Precision::kTf32, kc::Precision::kBf16}) {
    CudaModelOptions o = options(precision, true);
    o.batch = 512;
    o.side_streams = true;
    const LaunchPlan split = train_step_launches(dle_shape(), o);
    EXPECT_EQ(count(split, "loss"), 2);
    EXPECT_EQ(count(split, "loss", "logit_rows_kernel"), 1);
    EXPECT_EQ(count(split, "loss", "logit_head_kernel"), 1);
    CudaModelOptions one = o;
    one.side_streams = false;
    const LaunchPlan fused = train_step_launches(dle_shape(), one);
    EXPECT_EQ(count(fused, "loss"), 1);
    double flops[2] = {0, 0};
    for (const DeclaredKernel& k : split) flops[0] += k.phase == "loss" ? k.cost.flops : 0.0;
    for (const DeclaredKernel& k : fused) flops[1] += k.phase == "loss" ? k.cost.flops : 0.0;
    EXPECT_DOUBLE_EQ(flops[0], flops[1]);
    // The second read of x, and each sample's g and loss between them.
    EXPECT_GT(bytes(split, "loss"), bytes(fused, "loss"));
    o.batch = 2048;  // kSplitHeadMaxBatch itself: two
    EXPECT_EQ(count(train_step_launches(dle_shape(), o), "loss"), 2);
    o.batch = 2049;  // past it: one kernel
    EXPECT_EQ(count(train_step_launches(dle_shape(), o), "loss"), 1);
    o.batch = 512;  // across ranks: one kernel
    EXPECT_EQ(count(train_step_launches(dle_shape(), o, 2, 0), "loss"), 1);
  }
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(DlrmLaunches, TensorCoreInteractionKeepsTheCountsAndNamesItsKernels) {
#if PERFLAB_DLRM_CUDA
  CudaModelOptions o = options(kc::Precision::kTf32, true);
  o.interaction_tensor_cores = true;
  const LaunchPlan plan = train_step_launches(dle_shape(), o);
  expect_launches(plan, {{"forward", 8}, {"loss", 1}, {"backward", 14}, {"optimizer", 2}}, 25);
  int tc = 0;
  for (const auto& k : plan) {
    if (k.kernel.find("interaction_") == 0) {
      EXPECT_NE(k.kernel.find("_tc_kernel"), std::string::npos) << k.kernel;
      EXPECT_EQ(k.cost.precision, "tf32") << k.label;
      ++tc;
    }
  }
  EXPECT_EQ(tc, 2) << "the forward and the backward";
  // A bf16 model's interaction, everything stored bf16, runs on bf16 tensor cores.
  CudaModelOptions b = options(kc::Precision::kBf16, true);
  b.interaction_tensor_cores = true;
  int bf16_tc = 0;
  for (const auto& k : train_step_launches(dle_shape(), b)) {
    if (k.kernel.find("interaction_") == 0) {
      EXPECT_NE(k.kernel.find("_tc_bf16_kernel"), std::string::npos) << k.kernel;
      EXPECT_EQ(k.cost.precision, "bf16") << k.label;
      ++bf16_tc;
    }
  }
  EXPECT_EQ(bf16_tc, 2) << "the forward and the backward";
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(DlrmLaunches, FusedOnOneGpuTheInteractionLooksTheRowsUp) {
#if PERFLAB_DLRM_CUDA
  // Fused on one GPU: no gather, the interaction's forward reads the tables
  // and writes the sort keys, and neither pass reads a gathered tensor;
  // unfused, or across ranks (the rows are exchanged), the gather stays.
  const auto gathers = [](const LaunchPlan& plan) {
    int n = 0;
    for (const DeclaredKernel& k : plan) n += k.kernel.find("gather") == 0;
    return n;
  };
  const auto fused_interactions = [](const LaunchPlan& plan) {
    int n = 0;
    for (const DeclaredKernel& k : plan) n += k.label.find("(the lookups fused in)") != std::string::npos;
    return n;
  };
  for (kc::Precision p : {kc::Precision::kTf32, kc::Precision::kBf16}) {
    const LaunchPlan fused = train_step_launches(dle_shape(), options(p, true));
    EXPECT_EQ(gathers(fused), 0);
    EXPECT_EQ(fused_interactions(fused), 2) << "forward and backward";
    const LaunchPlan unfused = train_step_launches(dle_shape(), options(p, false));
    EXPECT_EQ(gathers(unfused), 1);
    EXPECT_EQ(fused_interactions(unfused), 0);
    const LaunchPlan ranks = train_step_launches(dle_shape(), options(p, true), 2, 1);
    EXPECT_EQ(gathers(ranks), 1);
    EXPECT_EQ(fused_interactions(ranks), 0);
  }
  CudaModelOptions serving = options(kc::Precision::kTf32, true);
  serving.external_embeddings = true;
  EXPECT_FALSE(lookup_in_interaction(serving, false));
  EXPECT_TRUE(lookup_in_interaction(options(kc::Precision::kTf32, true), false));
  EXPECT_FALSE(lookup_in_interaction(options(kc::Precision::kTf32, true), true));
  // The fused forward reads the rows from the fp32 tables whatever the
  // precision, plus the ids, and writes 8 bytes of sort input per slot.
  const ModelShape shape = dle_shape();
  const LaunchPlan plan = train_step_launches(shape, options(kc::Precision::kTf32, true));
  const double slots = 16384.0 * 26;
  int found = 0;
  for (const DeclaredKernel& k : plan) {
    if (k.kernel == "interaction_forward_kernel") {
      const double x = 16384.0 * 128 * 4, out = 16384.0 * (128 + 27 * 26 / 2) * 4;
      EXPECT_DOUBLE_EQ(k.cost.bytes, x + slots * (128 * 4 + 4) + out + slots * 8);
      ++found;
    }
  }
  EXPECT_EQ(found, 1);
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(DlrmLaunches, Bf16OnOneGpuTheEmbeddingGradientIsBf16) {
#if PERFLAB_DLRM_CUDA
  // The interaction's backward writes the embedding gradient in bf16 (2
  // bytes a value) on one GPU: dout, x (bf16), the looked-up rows (fp32
  // tables plus the ids), dx (bf16) and demb (bf16).
  const double b = 16384, slots = b * 26, d = 128, width = 128 + 27 * 26 / 2;
  int found = 0;
  for (const DeclaredKernel& k : train_step_launches(dle_shape(), options(kc::Precision::kBf16, true))) {
    if (k.kernel != "interaction_backward_kernel") continue;
    EXPECT_DOUBLE_EQ(k.cost.bytes, b * width * 2 + b * d * 2 + slots * (d * 4 + 4) + b * d * 2 + slots * d * 2);
    ++found;
  }
  EXPECT_EQ(found, 1);
  // Unfused (the gather's bf16 rows) the same gradient; in TF32 an fp32 one.
  for (const DeclaredKernel& k : train_step_launches(dle_shape(), options(kc::Precision::kBf16, false))) {
    if (k.kernel == "interaction_backward_kernel") {
      EXPECT_DOUBLE_EQ(k.cost.bytes, b * width * 2 + b * d * 2 + slots * d * 2 + b * d * 2 + slots * d * 2);
      ++found;
    }
  }
  for (const DeclaredKernel& k : train_step_launches(dle_shape(), options(kc::Precision::kTf32, false))) {
    if (k.kernel == "interaction_backward_kernel") {
      EXPECT_DOUBLE_EQ(k.cost.bytes, b * width * 4 + b * d * 4 + slots * d * 4 + b * d * 4 + slots * d * 4);
      ++found;
    }
  }
  EXPECT_EQ(found, 3);
  // Across ranks the gradients go back bf16 too: the same bytes as the rows
  // that came (their labels name the exchanges).
  for (kc::Precision p : {kc::Precision::kBf16, kc::Precision::kTf32}) {
    double rows = 0, gradients = 0;
    for (const DeclaredKernel& k : train_step_launches(dle_shape(), options(p, true), 2, 0)) {
      if (k.label.find("send/receive: embeddings") != std::string::npos) rows += k.cost.bytes;
      if (k.label.find("send/receive: embedding gradients") != std::string::npos) gradients += k.cost.bytes;
    }
    EXPECT_GT(rows, 0);
    EXPECT_DOUBLE_EQ(gradients, rows);
  }
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(DlrmLaunches, Tf32UnfusedStepAddsTheBiasAndReluKernels) {
#if PERFLAB_DLRM_CUDA
  expect_launches(train_step_launches(dle_shape(), options(kc::Precision::kTf32, false)),
                  {{"forward", 25}, {"loss", 1}, {"backward", 38}, {"optimizer", 3}}, 67);
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(DlrmLaunches, Bf16StepCastsOnlyItsDenseInput) {
#if PERFLAB_DLRM_CUDA
  // The interaction reads and writes the MLPs' bf16 buffers, the loss reads
  // the bf16 logits and writes a bf16 dlogit, and the SGD reads the GEMMs'
  // bf16 gradients (40 launches before): the one cast left is the dense
  // input's, the TF32 step's count plus one.
  const LaunchPlan plan = train_step_launches(dle_shape(), options(kc::Precision::kBf16, true));
  expect_launches(plan, {{"forward", 9}, {"loss", 1}, {"backward", 14}, {"optimizer", 2}}, 26);
  const auto casts = [](const LaunchPlan& p) {
    int n = 0;
    for (const DeclaredKernel& k : p) n += k.kernel == "cast_bf16_kernel" || k.kernel == "widen_kernel";
    return n;
  };
  EXPECT_EQ(casts(plan), 1);
  // The training run's batches bring bf16 dense rows (packed at setup):
  // not even that one. An fp32 model ignores the option.
  CudaModelOptions packed = options(kc::Precision::kBf16, true);
  packed.dense_input_bf16 = true;
  const LaunchPlan no_cast = train_step_launches(dle_shape(), packed);
  EXPECT_EQ(casts(no_cast), 0);
  EXPECT_EQ(count(no_cast, "forward"), count(plan, "forward") - 1);
  CudaModelOptions fp32 = options(kc::Precision::kTf32, true);
  const size_t fp32_launches = train_step_launches(dle_shape(), fp32).size();
  fp32.dense_input_bf16 = true;
  EXPECT_EQ(train_step_launches(dle_shape(), fp32).size(), fp32_launches);
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(DlrmLaunches, TransposedDgradWeightsAddOneLaunchForEveryLayerWithADataGradient) {
#if PERFLAB_DLRM_CUDA
  // dgrad_weights_transposed: one transpose at the step's start (declared in
  // the forward, where it runs beside it), for the layers whose data
  // gradient runs: bottom 1 and 2, top 0-3 (not the data's layer, not the
  // fused head); nothing else changes.
  CudaModelOptions o = options(kc::Precision::kTf32, true);
  o.dgrad_weights_transposed = true;
  const LaunchPlan plan = train_step_launches(dle_shape(), o);
  expect_launches(plan, {{"forward", 9}, {"loss", 1}, {"backward", 14}, {"optimizer", 2}}, 26);
  EXPECT_EQ(count(plan, "forward", "transpose_kernel"), 1);
  // Every element of bottom 1-2 and top 0-3's weights read and written once.
  const double weights = 512.0 * 256 + 256.0 * 128 + 480.0 * 1024 + 1024.0 * 1024 + 1024.0 * 512 + 512.0 * 256;
  EXPECT_DOUBLE_EQ(bytes(plan, "forward", "transpose_kernel"), 2 * weights * sizeof(float));
  const auto reads_w_t = [&](bool bottom, const std::vector<int>& widths, int64_t in, const CudaModelOptions& m) {
    std::vector<bool> out;
    for (const kc::LinearArguments& a : mlp_layer_modes(widths, in, bottom, 512, m)) out.push_back(a.dgrad_reads_w_t);
    return out;
  };
  const ModelShape s = dle_shape();
  EXPECT_EQ(reads_w_t(true, s.bottom_mlp, 16, o), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(reads_w_t(false, s.top_mlp, 480, o), (std::vector<bool>{true, true, true, true, false}));
  // Unfused, the last top layer is a Linear layer with a data gradient too;
  // bf16 transposes the bf16 copies (half the bytes).
  CudaModelOptions u = options(kc::Precision::kTf32, false);
  u.dgrad_weights_transposed = true;
  EXPECT_EQ(reads_w_t(false, s.top_mlp, 480, u), (std::vector<bool>(5, true)));
  EXPECT_EQ(train_step_launches(dle_shape(), u).size(), train_step_launches(dle_shape(), options(kc::Precision::kTf32, false)).size() + 1);
  CudaModelOptions b = options(kc::Precision::kBf16, true);
  b.dgrad_weights_transposed = true;
  EXPECT_DOUBLE_EQ(bytes(train_step_launches(dle_shape(), b), "forward", "transpose_kernel"), 2 * weights * 2);
  // A serving model runs no backward: no copies.
  CudaModelOptions serving = o;
  serving.external_embeddings = true;
  EXPECT_EQ(reads_w_t(false, s.top_mlp, 480, serving), (std::vector<bool>(5, false)));
  // Off (the options' default): the step as recorded above.
  EXPECT_EQ(count(train_step_launches(dle_shape(), options(kc::Precision::kTf32, true)), "", "transpose_kernel"), 0);
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(DlrmLaunches, TransposedDzAddsALaunchBeforeEachWideLayersWeightGradient) {
#if PERFLAB_DLRM_CUDA
  // wgrad_dy_transposed: the layers with inputs at least
  // kWgradTransposedMinInput wide (top 1 and 2 at the DLE shape: 1024 in)
  // transpose their dz before the weight gradient, each B x out read and
  // written once; in the backward, nothing else changes.
  for (kc::Epilogues e : {kc::Epilogues::kCublasLt, kc::Epilogues::kOwnBackward}) {
    CudaModelOptions o = options(kc::Precision::kTf32, true);
    o.epilogues = e;
    const LaunchPlan before = train_step_launches(dle_shape(), o);
    o.wgrad_dy_transposed = true;
    const LaunchPlan plan = train_step_launches(dle_shape(), o);
    EXPECT_EQ(count(plan, "backward"), count(before, "backward") + 2) << kc::epilogues_name(e);
    EXPECT_EQ(count(plan, "forward"), count(before, "forward"));
    EXPECT_EQ(count(plan, "backward", "transpose_kernel"), 2);
    EXPECT_DOUBLE_EQ(bytes(plan, "backward", "transpose_kernel"), 2.0 * 16384 * (1024 + 512) * sizeof(float));
    std::vector<bool> top;
    for (const kc::LinearArguments& a : mlp_layer_modes(dle_shape().top_mlp, 480, false, 512, o)) {
      top.push_back(a.wgrad_reads_dy_t);
    }
    EXPECT_EQ(top, (std::vector<bool>{false, true, true, false, false})) << kc::epilogues_name(e);
    for (const kc::LinearArguments& a : mlp_layer_modes(dle_shape().bottom_mlp, 16, true, 512, o)) {
      EXPECT_FALSE(a.wgrad_reads_dy_t) << "the bottom MLP's inputs are at most 512 wide";
    }
  }
  // A serving model has no backward: nothing transposed.
  CudaModelOptions serving = options(kc::Precision::kTf32, true);
  serving.wgrad_dy_transposed = true;
  serving.external_embeddings = true;
  for (const kc::LinearArguments& a : mlp_layer_modes(dle_shape().top_mlp, 480, false, 512, serving)) {
    EXPECT_FALSE(a.wgrad_reads_dy_t);
  }
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(DlrmLaunches, EveryLaunchDeclaresItsWorkAndTheGemmsTheirFlops) {
#if PERFLAB_DLRM_CUDA
  const ModelShape shape = dle_shape();
  const LaunchPlan plan = train_step_launches(shape, options(kc::Precision::kTf32, true));
  double gemm_flops = 0;
  for (const DeclaredKernel& k : plan) {
    EXPECT_FALSE(k.kernel.empty()) << k.label;
    if (k.kernel != "bce_finish_kernel") {
      EXPECT_GT(k.cost.bytes, 0) << k.label;
    }
    if (k.kernel.find("gemm") != std::string::npos) {
      EXPECT_EQ(k.cost.precision, "tf32") << k.label;
      gemm_flops += k.cost.flops;
    }
  }
  // Forward 2·B·in·out per layer, backward twice that, less the first
  // layer's dgrad (no gradient for the data) and the last layer's three
  // (256 -> 1: the fused loss kernel's, 6·B·256, declared as its own).
  double mlp = 0, first = 0;
  // The dense features, 13, padded to 16 on the GPU (bottom_input_width).
  int64_t in = 16;
  EXPECT_EQ(bottom_input_width(shape), in);
  for (int out : shape.bottom_mlp) {
    if (mlp == 0) first = 2.0 * 16384 * static_cast<double>(in) * out;
    mlp += 2.0 * 16384 * static_cast<double>(in) * out;
    in = out;
  }
  // The interaction's width, 128 + 27 * 26 / 2 = 479, padded to 480 on the
  // GPU (top_input_width): the GEMMs do the zero column's work too.
  in = 480;
  EXPECT_EQ(top_input_width(shape), in);
  double head = 0;
  for (int out : shape.top_mlp) {
    head = 2.0 * 16384 * static_cast<double>(in) * out;
    mlp += head;
    in = out;
  }
  EXPECT_DOUBLE_EQ(gemm_flops, 3 * mlp - first - 3 * head);
  double head_flops = 0;
  for (const DeclaredKernel& k : plan) {
    if (k.kernel == "logit_head_kernel") head_flops += k.cost.flops;
  }
  EXPECT_DOUBLE_EQ(head_flops, 3 * head);
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(DlrmLaunches, AcrossRanksTheExchangesAreLaunchesToo) {
#if PERFLAB_DLRM_CUDA
  const LaunchPlan plan =
      train_step_launches(dle_shape(), options(kc::Precision::kTf32, true), 2, 1);
  expect_launches(plan, {{"forward", 12}, {"loss", 1}, {"backward", 16}, {"optimizer", 3}}, 32);
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

}  // namespace
}  // namespace perflab::dlrm
