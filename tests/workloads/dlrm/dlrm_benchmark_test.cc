// The DLRM benchmark as the runner drives it: reproducible loss curves for a
// seed, different curves for different seeds, and one-line errors for
// parameters the data cannot satisfy.
#include "workloads/dlrm/dlrm_benchmark.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "base/error.h"
#include "harness/registry.h"
#include "tests/support/test_context.h"

namespace perflab::dlrm {
namespace {

using perflab::testing::TestContext;

ParamValues small_params(std::map<std::string, std::string> extra = {}) {
  const WorkloadInfo& info = Registry::instance().get("dlrm");
  std::map<std::string, std::string> overrides = {
      {"train_samples", "4096"}, {"eval_samples", "2048"}, {"max_table_size", "97"},
      {"batch_size", "128"}};
  for (auto& [k, v] : extra) overrides[k] = v;
  return resolve_params("dlrm", info.params, info.find_preset("tiny"), overrides);
}

std::vector<double> loss_curve(TrainableBenchmark& bench, uint64_t seed) {
  auto run = bench.start_model(seed);
  std::vector<double> curve;
  for (int64_t i = 0; i < 40; ++i) {
    run->run_iteration(i);
    if (i % 8 == 7) curve.push_back(run->take_loss());
  }
  curve.push_back(run->evaluate());
  return curve;
}

bool bit_identical(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(DlrmBenchmark, SameSeedSameThreadsGivesABitIdenticalCurve) {
  TestContext ctx(small_params());
  DlrmBenchmark bench(ctx);
  TrainingPlan plan = bench.training();
  EXPECT_EQ(plan.iterations_per_epoch, 32);
  EXPECT_EQ(plan.quality_metric, "AUC");
  ASSERT_TRUE(plan.quality_ceiling);
  EXPECT_GT(*plan.quality_ceiling, 0.7);
  auto a = loss_curve(bench, 11);
  auto b = loss_curve(bench, 11);
  auto c = loss_curve(bench, 12);
  EXPECT_TRUE(bit_identical(a, b));
  EXPECT_FALSE(bit_identical(a, c));
  EXPECT_LT(a[a.size() - 2], a[0]) << "the loss should fall over 40 SGD steps";
}

std::string error_of(const ParamValues& params) {
  try {
    TestContext ctx(params);
    DlrmBenchmark bench(ctx);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no UsageError";
}

TEST(DlrmBenchmark, RejectsWhatTheDataCannotSatisfy) {
  EXPECT_NE(error_of(small_params({{"target_auc", "0.999"}})).find("above the best AUC"),
            std::string::npos);
  EXPECT_NE(error_of(small_params({{"batch_size", "8192"}})).find("larger than the training set"),
            std::string::npos);
  EXPECT_NE(error_of(small_params({{"bottom_mlp", "64-32"}})).find("must end in embed_dim (16)"),
            std::string::npos);
  EXPECT_NE(error_of(small_params({{"top_mlp", "64-2"}})).find("must end in 1"), std::string::npos);
  EXPECT_NE(error_of(small_params({{"data", "/nonexistent/feature_spec.yaml"}})).find("/nonexistent"),
            std::string::npos);
  // The cpu backend has no epilogue kernels to choose.
  EXPECT_NE(error_of(small_params({{"epilogues", "own"}})).find("leave epilogues at auto"), std::string::npos);
  // Nor streams: side_streams=on or off names a GPU's.
  EXPECT_NE(error_of(small_params({{"side_streams", "off"}})).find("leave side_streams at auto"), std::string::npos);
  EXPECT_NE(error_of(small_params({{"side_streams", "on"}})).find("the cpu backend has none"), std::string::npos);
}

// What a step moves between ranks: fp32 everywhere but a bf16 cuda run,
// whose rows, their gradients and the dense all-reduce are all bf16; the
// recorded all-to-all bytes follow both directions.
TEST(DlrmBenchmark, ExchangeBytesFollowThePrecisionBothWays) {
  const ValueBytes fp32 = exchange_values(Backend::kCpu, "fp32");
  EXPECT_EQ(fp32.forward, 4);
  EXPECT_EQ(fp32.backward, 4);
  EXPECT_EQ(fp32.all_reduce, 4);
  EXPECT_EQ(exchange_values(Backend::kCpu, "bf16").backward, 4);  // the cpu's bf16 is emulated in fp32
  EXPECT_EQ(exchange_values(Backend::kCuda, "fp32").forward, 4);
  const ValueBytes bf16 = exchange_values(Backend::kCuda, "bf16");
  EXPECT_EQ(bf16.forward, 2);
  EXPECT_EQ(bf16.backward, 2);
  EXPECT_EQ(bf16.all_reduce, 2);

  DlrmSetup setup;
  setup.shape.num_dense = 3;
  setup.shape.table_sizes = {5, 7, 11};
  setup.shape.embed_dim = 8;
  setup.batch_size = 10;
  nlohmann::json full, half;
  add_rank_facts(2, setup, Dataset{}, fp32, full);
  add_rank_facts(2, setup, Dataset{}, bf16, half);
  const nlohmann::json& f = full["all_to_all_bytes_per_iteration"];
  const nlohmann::json& h = half["all_to_all_bytes_per_iteration"];
  ASSERT_GT(f["forward"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(h["forward"].get<double>(), f["forward"].get<double>() / 2);
  EXPECT_DOUBLE_EQ(h["backward"].get<double>(), f["backward"].get<double>() / 2);
  EXPECT_DOUBLE_EQ(h["total"].get<double>(), f["total"].get<double>() / 2);
}

// What the cuda backend's result says about the lookups and the
// interaction (no device needed: the plan is made before any model).
TEST(DlrmBenchmark, CudaHyperparametersSayWhereTheLookupsRun) {
#if PERFLAB_DLRM_CUDA
  // A training set at least one batch_size (small_params' 4,096 samples
  // otherwise), for batches past it.
  const auto with_room_for_the_batch = [](std::map<std::string, std::string>& extra) {
    extra["train_samples"] = std::to_string(std::max<int64_t>(4096, std::stoll(extra.at("batch_size"))));
  };
  const auto plan = [](bool fused, const std::string& precision, const std::string& interaction) {
    ToggleSet toggles;
    toggles[Toggle::kFused] = {fused, fused, ""};
    TestContext ctx(small_params({{"precision", precision}, {"interaction", interaction}}), Backend::kCuda, toggles);
    return DlrmBenchmark(ctx).step_plan().hyperparameters;
  };
  const nlohmann::json fused = plan(true, "fp32", "cuda_cores");
  EXPECT_EQ(fused["perflab_dlrm_lookup"].get<std::string>().rfind("inside the interaction", 0), 0u) << fused;
  EXPECT_EQ(fused["perflab_dlrm_interaction"], "fp32 CUDA cores");
  const nlohmann::json unfused = plan(false, "bf16", "tensor_cores");
  EXPECT_EQ(unfused["perflab_dlrm_lookup"].get<std::string>().rfind("a gather", 0), 0u) << unfused;
  EXPECT_EQ(unfused["perflab_dlrm_interaction"], "bf16 tensor cores (WMMA), fp32 accumulate");
  EXPECT_EQ(plan(true, "fp32", "tensor_cores")["perflab_dlrm_interaction"],
            "TF32 tensor cores (WMMA), fp32 accumulate");
  // epilogues=auto: own_backward in both precisions; unfused names the
  // separate kernels whatever was asked.
  const auto epilogues = [](bool on, const std::string& precision, const std::string& asked) {
    ToggleSet toggles;
    toggles[Toggle::kFused] = {on, on, ""};
    TestContext ctx(small_params({{"precision", precision}, {"epilogues", asked}}), Backend::kCuda, toggles);
    return DlrmBenchmark(ctx).step_plan().hyperparameters["perflab_dlrm_epilogues"].get<std::string>();
  };
  EXPECT_EQ(epilogues(true, "fp32", "auto").rfind("own_backward:", 0), 0u) << epilogues(true, "fp32", "auto");
  EXPECT_EQ(epilogues(true, "fp32", "own").rfind("own:", 0), 0u) << epilogues(true, "fp32", "own");
  EXPECT_EQ(epilogues(true, "bf16", "auto").rfind("own_backward:", 0), 0u) << epilogues(true, "bf16", "auto");
  EXPECT_EQ(epilogues(true, "fp32", "cublaslt").rfind("cublaslt:", 0), 0u);
  EXPECT_EQ(epilogues(false, "fp32", "own").rfind("separate", 0), 0u);
  // side_streams: auto and on move the weight gradients and (one GPU) the
  // update's sort off the step's stream; off keeps one stream.
  const auto streams = [](const std::string& asked) {
    ToggleSet toggles;
    toggles[Toggle::kFused] = {true, true, ""};
    TestContext ctx(small_params({{"side_streams", asked}}), Backend::kCuda, toggles);
    return DlrmBenchmark(ctx).step_plan().hyperparameters["perflab_dlrm_side_streams"].get<std::string>();
  };
  EXPECT_NE(streams("auto").find("weight-gradient GEMM and then its SGD on a weight-gradient stream"), std::string::npos)
      << streams("auto");
  EXPECT_NE(streams("auto").find("sort on its own stream"), std::string::npos) << streams("auto");
  EXPECT_NE(streams("auto").find("the step's stream (the forward and the data-gradient chain) at the device's most "
                                 "urgent priority, the weight gradients' and the sort's at the least"),
            std::string::npos)
      << streams("auto");
  EXPECT_EQ(streams("off").find("priority"), std::string::npos) << "one stream: nothing to rank";
  EXPECT_EQ(streams("on"), streams("auto"));
  // Up to 2,048 samples the fused head's sums leave the step's stream too
  // (batch 128 here); past it the head stays one kernel.
  EXPECT_NE(streams("auto").find("the fused head's sums"), std::string::npos) << streams("auto");
  {
    ToggleSet toggles;
    toggles[Toggle::kFused] = {true, true, ""};
    TestContext ctx(small_params({{"batch_size", "4096"}, {"train_samples", "8192"}}), Backend::kCuda, toggles);
    const std::string big = DlrmBenchmark(ctx).step_plan().hyperparameters["perflab_dlrm_side_streams"];
    EXPECT_EQ(big.find("fused head's sums"), std::string::npos) << big;
  }
  EXPECT_EQ(streams("off").rfind("off:", 0), 0u) << streams("off");
  // dgrad_weights: auto transposes in fp32 (TF32 GEMMs) from
  // kTransposedDgradMinBatch samples, but not with cuBLASLt's chained
  // epilogues, and never in bf16; asked for by name, as asked; the text
  // says where the copy is written.
  const auto dgrad = [&](std::map<std::string, std::string> extra) {
    ToggleSet toggles;
    toggles[Toggle::kFused] = {true, true, ""};
    if (extra.count("batch_size") == 0) extra["batch_size"] = std::to_string(kTransposedDgradMinBatch);
    with_room_for_the_batch(extra);
    TestContext ctx(small_params(extra), Backend::kCuda, toggles);
    return DlrmBenchmark(ctx).step_plan().hyperparameters["perflab_dlrm_dgrad_weights"].get<std::string>();
  };
  const std::string beside = "transposed: a copy of each layer's weights transposed, written once a step on the "
                             "weight gradients' stream beside the forward";
  EXPECT_EQ(dgrad({}).rfind(beside, 0), 0u) << dgrad({});
  EXPECT_EQ(dgrad({{"batch_size", std::to_string(kTransposedDgradMinBatch - 1)}}).rfind("stored:", 0), 0u);
  EXPECT_EQ(dgrad({{"epilogues", "cublaslt"}}).rfind("stored:", 0), 0u) << dgrad({{"epilogues", "cublaslt"}});
  EXPECT_EQ(dgrad({{"precision", "bf16"}}).rfind("stored:", 0), 0u) << dgrad({{"precision", "bf16"}});
  EXPECT_EQ(dgrad({{"precision", "bf16"}, {"dgrad_weights", "transposed"}}).rfind(beside, 0), 0u);
  EXPECT_EQ(dgrad({{"epilogues", "cublaslt"}, {"dgrad_weights", "transposed"}}).rfind(beside, 0), 0u);
  EXPECT_EQ(dgrad({{"batch_size", "128"}, {"dgrad_weights", "transposed"}}).rfind(beside, 0), 0u);
  EXPECT_EQ(dgrad({{"dgrad_weights", "stored"}}).rfind("stored:", 0), 0u);
  EXPECT_NE(dgrad({{"side_streams", "off"}}).find("written once a step at the step's start"), std::string::npos)
      << dgrad({{"side_streams", "off"}});
  // wgrad_streams: auto takes turns on two streams up to
  // kTwoWgradStreamsMaxBatch samples a rank, one above; asked, as asked;
  // without side streams none.
  const auto wgrad_streams = [&](std::map<std::string, std::string> extra) {
    ToggleSet toggles;
    toggles[Toggle::kFused] = {true, true, ""};
    if (extra.count("batch_size") > 0) with_room_for_the_batch(extra);
    TestContext ctx(small_params(extra), Backend::kCuda, toggles);
    return DlrmBenchmark(ctx).step_plan().hyperparameters["perflab_dlrm_wgrad_streams"].get<std::string>();
  };
  EXPECT_EQ(wgrad_streams({}).rfind("2: ", 0), 0u) << wgrad_streams({});
  EXPECT_EQ(wgrad_streams({{"batch_size", std::to_string(kTwoWgradStreamsMaxBatch)}}).rfind("2: ", 0), 0u);
  EXPECT_EQ(wgrad_streams({{"batch_size", std::to_string(kTwoWgradStreamsMaxBatch + 1)}}).rfind("1: ", 0), 0u);
  EXPECT_EQ(wgrad_streams({{"wgrad_streams", "1"}}).rfind("1: ", 0), 0u);
  EXPECT_EQ(wgrad_streams({{"batch_size", "4096"}, {"wgrad_streams", "2"}}).rfind("2: ", 0), 0u);
  EXPECT_EQ(wgrad_streams({{"side_streams", "off"}}).rfind("none: ", 0), 0u) << wgrad_streams({{"side_streams", "off"}});
  EXPECT_EQ(auto_wgrad_streams(1), 2);
  EXPECT_EQ(auto_wgrad_streams(65536), 1);
  // wgrad_dy: auto is stored (not measured yet); transposed as asked, in
  // the layers with inputs at least kWgradTransposedMinInput wide, counted
  // (the tiny preset's MLPs have none: in effect nowhere, and it says so).
  const auto wgrad = [](const std::string& asked, const std::string& top) {
    ToggleSet toggles;
    toggles[Toggle::kFused] = {true, true, ""};
    TestContext ctx(small_params({{"wgrad_dy", asked}, {"top_mlp", top}}), Backend::kCuda, toggles);
    return DlrmBenchmark(ctx).step_plan().hyperparameters["perflab_dlrm_wgrad_dy"].get<std::string>();
  };
  const std::string wide = "1024-1024-16-1";
  EXPECT_EQ(wgrad("auto", wide).rfind("stored:", 0), 0u) << wgrad("auto", wide);
  EXPECT_EQ(wgrad("stored", wide), wgrad("auto", wide));
  EXPECT_EQ(wgrad("transposed", wide).rfind("transposed: in the 2 layers whose input is at least 1024 wide", 0), 0u)
      << wgrad("transposed", wide);
  EXPECT_EQ(wgrad("transposed", "64-32-1").rfind("transposed, in effect nowhere", 0), 0u)
      << wgrad("transposed", "64-32-1");
  // dependent_launch: auto is off (not measured yet); on as asked (whether
  // the GPU has it is the run's fact, dlrm_dependent_launch_cuda_test.cc).
  const auto dependent = [](const std::string& asked) {
    TestContext ctx(small_params({{"dependent_launch", asked}}), Backend::kCuda, ToggleSet{});
    return DlrmBenchmark(ctx).step_plan().hyperparameters["perflab_dlrm_dependent_launch"].get<std::string>();
  };
  EXPECT_EQ(dependent("auto").rfind("off:", 0), 0u) << dependent("auto");
  EXPECT_EQ(dependent("off"), dependent("auto"));
  EXPECT_EQ(dependent("on").rfind("on: the step's own kernels", 0), 0u) << dependent("on");
  // auto: tensor cores for bf16 from kTensorCoreInteractionMinBatch samples
  // a rank (the faster there), CUDA cores below it and for TF32.
  const auto interaction_at = [](const std::string& precision, int64_t batch) {
    ToggleSet toggles;
    toggles[Toggle::kFused] = {true, true, ""};
    TestContext ctx(small_params({{"precision", precision}, {"batch_size", std::to_string(batch)}}),
                    Backend::kCuda, toggles);
    return DlrmBenchmark(ctx).step_plan().hyperparameters["perflab_dlrm_interaction"].get<std::string>();
  };
  const std::string bf16_tc = "bf16 tensor cores (WMMA), fp32 accumulate";
  EXPECT_EQ(interaction_at("bf16", kTensorCoreInteractionMinBatch), bf16_tc);
  EXPECT_EQ(interaction_at("bf16", 4096), bf16_tc);
  EXPECT_EQ(interaction_at("bf16", kTensorCoreInteractionMinBatch - 1), "fp32 CUDA cores");
  EXPECT_EQ(interaction_at("bf16", 128), "fp32 CUDA cores");
  EXPECT_EQ(interaction_at("fp32", 4096), "fp32 CUDA cores");
  EXPECT_EQ(plan(true, "fp32", "auto")["perflab_dlrm_interaction"], "fp32 CUDA cores");
  // Asked for by name, tensor cores run at any batch.
  EXPECT_EQ(plan(true, "bf16", "tensor_cores")["perflab_dlrm_interaction"], bf16_tc);
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

}  // namespace
}  // namespace perflab::dlrm
