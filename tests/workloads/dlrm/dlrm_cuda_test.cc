// The cuda backend of dlrm. Without a device: the registration (backends,
// toggle rules, graphs needing sync-free) and the cpu backend refusing
// bf16. With a device (skipped otherwise): two models' bits (determinism),
// tables drawn on the device, host-sync counts, graph replay against eager
// steps (the run's DeviceStep driven by the harness's StepDriver), several
// steps and evaluation against the CPU, and a gate that fails when the GPU
// step is wrong. One step against the CPU in every mode and with each
// step option: dlrm_step_cuda_test.cc.
//
// Tiny odd shape: batch 37, 5 dense features, 3 tables of 5/7/3 rows, dim 4
// (bottom 8-4) or 16 (bottom 8-16), top 6-1; 111 training samples (3 batches
// per epoch) and 50 held-out ones (not a multiple of the batch).
// Tolerances (cuda_compare.h, step_tolerance at batch 37): one step: loss
// relative 1e-3 (TF32) / 3e-2 (bf16); each tensor's update, normwise,
// 0.05 / 0.15 + 2/sqrt(37) (a ReLU input near 0 decided the other way moves
// one sample's share, ~1/sqrt(batch), of a gradient). Six steps: mean loss
// 1e-2 / 5e-2, updates 1.5x the one-step tolerance (the differences
// compound). Graph replay against eager steps: 1e-6 relative (the same
// kernels in the same order: expected bit-identical).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/error.h"
#include "harness/registry.h"
#include "harness/run_spec.h"
#include "tests/support/test_context.h"
#include "workloads/dlrm/dlrm_benchmark.h"

#ifdef PERFLAB_DLRM_CUDA
#include "kernels/cpu/auc.h"
#include "harness/step_driver.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/raii.h"
#include "tests/support/cuda_device.h"
#include "workloads/dlrm/cuda_compare.h"
#include "workloads/dlrm/cuda_convert.h"
#include "workloads/dlrm/cuda_launches.h"
#include "workloads/dlrm/cuda_run.h"
#include "tests/workloads/dlrm/tiny_cuda_dlrm.h"
#endif

namespace perflab::dlrm {
namespace {

// ---- Without a device ----------------------------------------------------------

TEST(DlrmCudaRegistration, ListsTheCudaBackendInCudaBuilds) {
  const WorkloadInfo& info = Registry::instance().get("dlrm");
  const bool has_cuda =
      std::find(info.backends.begin(), info.backends.end(), Backend::kCuda) != info.backends.end();
#ifdef PERFLAB_DLRM_CUDA
  EXPECT_TRUE(has_cuda);
#else
  EXPECT_FALSE(has_cuda);
#endif
  EXPECT_NE(std::find(info.backends.begin(), info.backends.end(), Backend::kCpu), info.backends.end());
}

TEST(DlrmCudaRegistration, ToggleReasons) {
  const WorkloadInfo& info = Registry::instance().get("dlrm");
  std::map<Toggle, bool> requested;
  for (Toggle t : kAllToggles) requested[t] = true;
  const ToggleSet on_cuda = resolve_toggles(requested, info, Backend::kCuda);
  const ToggleSet on_cpu = resolve_toggles(requested, info, Backend::kCpu);
  for (Toggle t : {Toggle::kFused, Toggle::kSyncFree, Toggle::kCudaGraphs}) {
    EXPECT_TRUE(on_cuda[t].in_effect) << toggle_key(t) << ": " << on_cuda[t].reason;
    EXPECT_FALSE(on_cpu[t].in_effect) << toggle_key(t);
    EXPECT_NE(on_cpu[t].reason, "") << toggle_key(t);
  }
  // SHARP: passed on to the cuda backend, whose NCCL path requests it for
  // the gradient all-reduce and says afterwards, from NCCL's log, whether it
  // took effect (dlrm_nccl_cuda_test.cc); never on the cpu backend, whose
  // all-reduce runs over MPI.
  EXPECT_TRUE(on_cuda[Toggle::kSharp].in_effect) << on_cuda[Toggle::kSharp].reason;
  EXPECT_FALSE(on_cpu[Toggle::kSharp].in_effect);
  EXPECT_NE(on_cpu[Toggle::kSharp].reason.find("gradient all-reduce runs over MPI"), std::string::npos);

  // Graph capture needs the sync-free step.
  requested[Toggle::kSyncFree] = false;
  const ToggleSet without = resolve_toggles(requested, info, Backend::kCuda);
  EXPECT_FALSE(without[Toggle::kCudaGraphs].in_effect);
  EXPECT_NE(without[Toggle::kCudaGraphs].reason.find("sync-free"), std::string::npos)
      << without[Toggle::kCudaGraphs].reason;
  EXPECT_TRUE(without[Toggle::kFused].in_effect);
}

// The cpu backend emulates bf16 (CpuPrecision::kBf16) on one rank, and says so
// in the plan; several ranks are refused (tests/cli/dlrm_mpi_test.sh).
TEST(DlrmCudaRegistration, CpuBackendEmulatesBf16) {
  const WorkloadInfo& info = Registry::instance().get("dlrm");
  perflab::testing::TestContext ctx(resolve_params("dlrm", info.params, info.find_preset("tiny"),
                                                   {{"train_samples", "512"}, {"eval_samples", "64"},
                                                    {"batch_size", "64"}, {"precision", "bf16"}}));
  DlrmBenchmark bench(ctx);
  EXPECT_EQ(bench.step_plan().precision, "bf16");
  EXPECT_NE(bench.step_plan().hyperparameters.at("perflab_dlrm_precision").get<std::string>().find("emulated"),
            std::string::npos);
}

/// The cpu backend refuses a tiny run with `extra` parameters in one line
/// holding `message`.
void expect_cpu_refuses(const std::pair<std::string, std::string>& extra, const std::string& message) {
  const WorkloadInfo& info = Registry::instance().get("dlrm");
  perflab::testing::TestContext ctx(resolve_params("dlrm", info.params, info.find_preset("tiny"),
                                                   {{"train_samples", "512"}, {"eval_samples", "64"},
                                                    {"batch_size", "64"}, extra}));
  try {
    DlrmBenchmark bench(ctx);
    FAIL() << "the cpu backend accepted " << extra.first << "=" << extra.second;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(DlrmCudaRegistration, CpuBackendRefusesTheNcclExchange) {
  expect_cpu_refuses({"exchange", "nccl"}, "exchange=nccl is the cuda backend's");
}

TEST(DlrmCudaRegistration, CpuBackendRefusesTunedGemms) {
  expect_cpu_refuses({"gemm_algorithms", "tuned"}, "gemm_algorithms=tuned chooses cuBLASLt algorithms");
  expect_cpu_refuses({"gemm_algorithms", "searched"}, "gemm_algorithms=searched chooses cuBLASLt algorithms");
}

TEST(DlrmCudaRegistration, CpuBackendRefusesAWgradDyChoice) {
  expect_cpu_refuses({"wgrad_dy", "transposed"}, "wgrad_dy=transposed chooses what");
}

TEST(DlrmCudaRegistration, CpuBackendRefusesADependentLaunchChoice) {
  expect_cpu_refuses({"dependent_launch", "on"}, "dependent_launch=on chooses how the cuda backend launches");
  expect_cpu_refuses({"dependent_launch", "off"}, "dependent_launch=off chooses how the cuda backend launches");
}

TEST(DlrmCudaRegistration, CpuBackendRefusesAWgradStreamsChoice) {
  expect_cpu_refuses({"wgrad_streams", "2"}, "wgrad_streams=2 chooses how many streams");
  expect_cpu_refuses({"wgrad_streams", "1"}, "wgrad_streams=1 chooses how many streams");
}

TEST(DlrmCudaRegistration, CpuBackendRefusesADgradWeightsChoice) {
  expect_cpu_refuses({"dgrad_weights", "transposed"}, "dgrad_weights=transposed chooses which weights");
  expect_cpu_refuses({"dgrad_weights", "stored"}, "dgrad_weights=stored chooses which weights");
}

// The NCCL exchange is model parallel only: the hybrid embedding is refused
// in one line before anything touches a GPU or NCCL.
TEST(DlrmCudaRegistration, NcclExchangeRefusesTheHybridEmbedding) {
  const WorkloadInfo& info = Registry::instance().get("dlrm");
  perflab::testing::TestContext ctx(resolve_params("dlrm", info.params, info.find_preset("tiny"),
                                                   {{"train_samples", "512"}, {"eval_samples", "64"},
                                                    {"batch_size", "64"}, {"exchange", "nccl"},
                                                    {"embedding", "hybrid"}}),
                                    Backend::kCuda);
  try {
    DlrmBenchmark bench(ctx);
    FAIL() << "the NCCL exchange accepted embedding=hybrid";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("embedding=hybrid runs on the cpu backend only"), std::string::npos)
        << e.what();
  }
}

#ifndef PERFLAB_DLRM_CUDA

TEST(DlrmCuda, Skipped) { GTEST_SKIP() << "built without CUDA"; }

#else  // PERFLAB_DLRM_CUDA

namespace kc = perflab::kernels::cuda;

constexpr int64_t kBatch = 37;
constexpr uint64_t kSeed = 5;

std::string mode_name(bool fused, bool sync_free, bool graphs, const std::string& precision) {
  return std::string(fused ? "fused" : "unfused") + (sync_free ? ", sync-free" : ", synchronising") +
         (graphs ? ", graphs" : "") + ", " + precision;
}

/// ||(actual - before) - (expected - before)|| / ||expected - before||: the
/// normwise error of a trained tensor's change against the reference's.
double relative_update_error(const std::vector<float>& before, const std::vector<float>& actual,
                             const std::vector<float>& expected) {
  double norm = 0, difference = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    const double d = static_cast<double>(expected[i]) - before[i];
    const double e = static_cast<double>(actual[i]) - expected[i];
    norm += d * d;
    difference += e * e;
  }
  const double error = std::sqrt(difference) / std::max(std::sqrt(norm), 1e-12);
  return std::isnan(error) ? INFINITY : error;
}

/// Every parameter of a CpuModel, flattened per tensor: dense tensors, then
/// one vector per table.
std::vector<std::vector<float>> cpu_state(CpuModel& m) {
  std::vector<std::vector<float>> out;
  for (const DenseParameter& p : m.dense_parameters()) out.emplace_back(p.value, p.value + p.size);
  for (int t = 0; t < static_cast<int>(m.shape().table_sizes.size()); ++t) {
    const float* v = m.embedding_row(t, 0);
    out.emplace_back(v, v + m.shape().table_sizes[static_cast<size_t>(t)] * m.shape().embed_dim);
  }
  return out;
}

// Same inputs, same bits: two models from one seed, trained on the same
// batches, hold bit-identical parameters afterwards (every dense tensor and
// every embedding row), in every mode. The embedding update's hot-row chunks
// are combined in a fixed order and the GEMMs are the heuristic's, so
// nothing may depend on which warp finishes first. Batches of 301 samples
// from tiny tables repeat rows hundreds of times (several chunks per row).
// The first model runs on one stream, the other two with side streams (the
// weight gradients and the update's sort beside the step; the third with
// the layers' weight gradients taking turns on two streams): the same
// arithmetic on the same operands, so the same bits, whatever overlaps (at
// this batch, fused, the side-stream copies run the head as two launches,
// train_rows and train_sums: the model-level check that the split gives
// the fused head's bits); unfused, and
// fused with each epilogue mode (their backward passes differ in what they
// write in place before the weight gradient forks).
TEST(DlrmCudaDeterminism, TwoModelsFromOneSeedOnTheSameBatchesHoldTheSameBits) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  constexpr int64_t kSamples = 301;
  constexpr int kSteps = 3;
  const Dataset data = tiny_data(kSamples * kSteps, 11);
  const ModelShape shape = tiny_shape(16);
  // (fused, epilogues, the data-gradient GEMMs reading transposed copies)
  std::vector<std::tuple<bool, kc::Epilogues, bool>> modes = {{false, kc::Epilogues::kCublasLt, false},
                                                              {false, kc::Epilogues::kCublasLt, true},
                                                              {true, kc::Epilogues::kOwnBackward, true}};
  for (kc::Epilogues e : {kc::Epilogues::kCublasLt, kc::Epilogues::kOwn, kc::Epilogues::kOwnBackward}) {
    modes.emplace_back(true, e, false);  // the epilogues apply when fused
  }
  for (kc::Precision precision : {kc::Precision::kTf32, kc::Precision::kBf16}) {
    for (const auto& [fused, epilogues, transposed] : modes) {
      CudaModelOptions options;
      options.batch = kSamples;
      options.precision = precision;
      options.fused = fused;
      options.epilogues = epilogues;
      options.dgrad_weights_transposed = transposed;
      std::vector<std::vector<float>> params[3];
      for (int copy = 0; copy < 3; ++copy) {
        CpuModel init(shape, kSeed);
        options.side_streams = copy > 0;
        options.wgrad_streams = copy == 2 ? 2 : 1;  // run 2: the layers take turns on two streams
        CudaModel model(init, options);
        kc::Stream stream;
        set_device_float(model.learning_rate(), 0.5f, stream.get());
        std::vector<kc::DeviceBuffer<float>> dense, labels;
        std::vector<kc::DeviceBuffer<int32_t>> ids;
        for (int step = 0; step < kSteps; ++step) {
          const BatchView b = data.batch(step * kSamples, kSamples);
          const auto n = static_cast<size_t>(kSamples);
          dense.emplace_back(std::vector<float>(b.dense, b.dense + n * static_cast<size_t>(shape.num_dense)));
          ids.emplace_back(std::vector<int32_t>(b.categorical, b.categorical + n * shape.table_sizes.size()));
          labels.emplace_back(std::vector<float>(b.labels, b.labels + n));
          model.train_step({dense.back().data(), ids.back().data(), labels.back().data()}, stream.get());
        }
        model.take_loss(stream.get());  // synchronises the stream
        for (size_t i = 0; i < init.dense_parameters().size(); ++i) params[copy].push_back(model.dense_parameter(i));
        for (int t = 0; t < static_cast<int>(shape.table_sizes.size()); ++t) {
          for (int64_t row = 0; row < shape.table_sizes[static_cast<size_t>(t)]; ++row) {
            params[copy].push_back(model.embedding_row(t, row));
          }
        }
      }
      for (int other : {1, 2}) {
        ASSERT_EQ(params[0].size(), params[other].size());
        for (size_t i = 0; i < params[0].size(); ++i) {
          ASSERT_EQ(params[0][i].size(), params[other][i].size());
          EXPECT_EQ(0, std::memcmp(params[0][i].data(), params[other][i].data(),
                                   params[0][i].size() * sizeof(float)))
              << "tensor " << i << " differs between a one-stream run and side-streams run " << other
              << (other == 2 ? " (two weight-gradient streams)" : "") << " ("
              << (precision == kc::Precision::kBf16 ? "bf16" : "tf32") << (fused ? ", fused, " : ", unfused, ")
              << kc::epilogues_name(epilogues) << " epilogues" << (transposed ? ", dgrads from Wᵀ" : "") << ")";
        }
      }
    }
  }
}

/// A CudaModel whose tables are drawn on the device (table_seed, from a
/// table-less CPU model), read back whole through copy_to into a CPU model
/// of another seed: every value must be CpuModel(shape, kSeed)'s, bit for bit.
void expect_drawn_model_is_the_cpu_models(const ModelShape& shape, kc::Precision precision) {
  CpuModel full(shape, kSeed);
  CpuModel tableless(shape, kSeed, EmbeddingStorage::kExternal);
  CudaModelOptions options;
  options.batch = 37;
  options.precision = precision;
  options.table_seed = kSeed;
  CudaModel drawn(tableless, options);
  CpuModel back(shape, kSeed + 1);
  drawn.copy_to(back);
  for (int t = 0; t < static_cast<int>(shape.table_sizes.size()); ++t) {
    const size_t n = static_cast<size_t>(shape.table_sizes[static_cast<size_t>(t)] * shape.embed_dim);
    EXPECT_EQ(0, std::memcmp(back.embedding_row(t, 0), full.embedding_row(t, 0), n * sizeof(float)))
        << "table " << t << ", dim " << shape.embed_dim << (precision == kc::Precision::kBf16 ? ", bf16" : ", tf32");
  }
  const std::vector<DenseParameter> want = full.dense_parameters(), got = back.dense_parameters();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(0, std::memcmp(got[i].value, want[i].value, static_cast<size_t>(want[i].size) * sizeof(float)))
        << want[i].name;
  }
}

// The tables drawn on the GPU (CudaModelOptions::table_seed: a training
// run's model, with no host tables) hold CpuModel's initial values: at dim
// 4 and 16, TF32 and bf16 models (the tables stay fp32), and a table past
// one grid of the fill (2^16 blocks of 256 threads: 16,777,216 values).
TEST(DlrmCudaInit, TablesDrawnOnTheDeviceAreTheCpuModelsBits) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (int dim : {4, 16}) {
    for (kc::Precision precision : {kc::Precision::kTf32, kc::Precision::kBf16}) {
      expect_drawn_model_is_the_cpu_models(tiny_shape(dim), precision);
    }
  }
  ModelShape big = tiny_shape(16);
  big.table_sizes = {5, 1048583, 3};  // x 16 = 16,777,328 values
  expect_drawn_model_is_the_cpu_models(big, kc::Precision::kTf32);
}

TEST(DlrmCudaCheck, FailsWhenTheGpuStepIsWrong) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Dataset data = tiny_data(kBatch, 7);
  CudaModelOptions options;
  options.batch = kBatch;
  const StepComparison c = compare_one_step(tiny_shape(4), kSeed, options, data.batch(0, kBatch),
                                            0.5f, /*gpu_lr_factor=*/2.0f);
  EXPECT_FALSE(c.passed) << c.detail;
  EXPECT_LE(c.loss_error, 1e-3) << "the loss is taken before the update: " << c.detail;
  EXPECT_GT(c.dense_error, 0.6) << "every update doubled: normwise error 1: " << c.detail;
  EXPECT_GT(c.embedding_error, 0.6) << c.detail;
}

// ---- Runs: syncs, graphs, several steps, evaluation ----------------------------------

struct RunCase {
  bool fused, sync_free, graphs;
  std::string precision;
  bool tuned = false;  ///< gemm_algorithms=tuned (the tuning's random operands must not leak into training).
  /// dgrad_weights: "auto" (tiny_setup's: transposed copies in fp32), "stored" or "transposed".
  std::string dgrad_weights = "auto";
  bool side_streams = true;
  /// The top MLP widened to 1024-1024-16-1 with wgrad_dy=transposed: two
  /// layers transpose dz before their weight gradients (the second below
  /// the fused head, the first after its own dReLU pass, as DLE's do).
  bool wide = false;
};

class DlrmCudaRunTest : public ::testing::TestWithParam<RunCase> {};

/// Six iterations (two epochs of three batches; with graphs: two eager, then
/// each input slot's graph captured and replayed twice) against six CPU steps.
TEST_P(DlrmCudaRunTest, SeveralIterationsMatchTheCpuModelAndCountSyncs) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const RunCase rc = GetParam();
  const std::string mode = mode_name(rc.fused, rc.sync_free, rc.graphs, rc.precision) + (rc.tuned ? ", tuned GEMMs" : "") +
                           ", dgrad_weights " + rc.dgrad_weights + (rc.side_streams ? "" : ", one stream") +
                           (rc.wide ? ", wide top MLP, wgrad_dy transposed" : "");
  const Dataset train = tiny_data(3 * kBatch, 11), eval = tiny_data(50, 12);
  DlrmSetup setup = tiny_setup(16, rc.precision, train, kBatch);
  setup.tune_gemms = rc.tuned;
  if (rc.dgrad_weights != "auto") setup.dgrad_weights_transposed = rc.dgrad_weights == "transposed";
  setup.side_streams = rc.side_streams;
  if (rc.wide) {
    setup.shape.top_mlp = {1024, 1024, 16, 1};
    setup.wgrad_dy_transposed = true;
  }
  Driven d(make_dlrm_cuda_run(setup, train, eval, kSeed, run_toggles(rc.fused, rc.sync_free, rc.graphs)),
           rc.graphs && rc.sync_free);
  DlrmCudaRun* run = d.run.get();

  CpuModel cpu(setup.shape, kSeed);
  const std::vector<std::vector<float>> before = cpu_state(cpu);
  double cpu_loss = 0;
  constexpr int64_t kIterations = 6;
  for (int64_t i = 0; i < kIterations; ++i) {
    const int64_t before_syncs = kc::host_sync_count();
    d.driver.iterate(i);
    EXPECT_EQ(kc::host_sync_count() - before_syncs, rc.sync_free ? 0 : 1) << mode << ", iteration " << i;
    cpu_loss += cpu.train_step(train.batch((i % 3) * kBatch, kBatch), static_cast<float>(setup.schedule.at(i)));
  }
  const ExecutionRecord& record = d.driver.record();
  EXPECT_EQ(record.graphs_used, rc.graphs && rc.sync_free) << record.graphs_note;
  EXPECT_EQ(record.iterations, kIterations);
  EXPECT_EQ(record.syncs_max, rc.sync_free ? 0 : 1) << mode;
  EXPECT_EQ(record.syncs_min, rc.sync_free ? 0 : 1) << mode;
  EXPECT_TRUE(record.syncs_as_expected()) << record.describe();

  const bool bf16 = rc.precision == "bf16";
  const StepTolerance tol =
      step_tolerance(bf16 ? kc::Precision::kBf16 : kc::Precision::kTf32, kBatch);
  const double gpu_loss = run->take_loss();
  cpu_loss /= kIterations;
  EXPECT_NEAR(gpu_loss, cpu_loss, (bf16 ? 5e-2 : 1e-2) * std::abs(cpu_loss)) << mode;
  EXPECT_EQ(run->take_loss(), 0.0) << "the accumulator restarts after a take";

  const std::vector<std::vector<float>> expected = cpu_state(cpu);
  const std::vector<std::vector<float>> actual = parameter_state(*run, setup.shape, cpu.dense_parameters().size());
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    // Six steps compound the per-step differences: 1.5x the one-step tolerance.
    EXPECT_LE(relative_update_error(before[k], actual[k], expected[k]), 1.5 * tol.update)
        << mode << ", tensor " << k << " (dense tensors first, then one per table)";
  }

  // Evaluation over 50 samples (two chunks, the second padded).
  const double auc = run->evaluate();
  std::vector<float> p(50);
  cpu.predict(eval.batch(0, 50), p.data());
  const double cpu_auc = kernels::cpu::roc_auc(p.data(), eval.labels.data(), 50);
  EXPECT_NEAR(auc, cpu_auc, bf16 ? 0.1 : 0.02) << mode;

  const CorrectnessReport gate = run->check_correctness();
  EXPECT_TRUE(gate.passed) << gate.detail;
  EXPECT_NE(record.describe().find(rc.sync_free ? "host syncs per iteration: 0" : "host syncs per iteration: 1"),
            std::string::npos)
      << record.describe();
}

std::vector<RunCase> run_cases() {
  std::vector<RunCase> cases;
  for (const char* precision : {"fp32", "bf16"}) {
    for (bool fused : {false, true}) {
      for (bool sync_free : {false, true}) {
        cases.push_back({fused, sync_free, false, precision});
        if (sync_free) cases.push_back({fused, sync_free, true, precision});
      }
    }
    // Tuned GEMMs: six steps would carry any operand the tuning left behind
    // (the fp32 interaction output's zero padding column, for one).
    cases.push_back({true, true, true, precision, true});
    cases.push_back({false, true, false, precision, true});
  }
  // The data-gradient GEMMs' weights: auto transposes them in fp32 (every
  // fp32 case above) and not in bf16; each the other way here, and the
  // transpose on the step's one stream (no side streams), eager and graphed.
  cases.push_back({true, true, true, "fp32", false, "stored"});
  cases.push_back({false, false, false, "fp32", false, "stored"});
  cases.push_back({true, true, true, "bf16", false, "transposed"});
  cases.push_back({true, true, true, "bf16", true, "transposed"});
  cases.push_back({true, true, true, "fp32", false, "auto", false});
  cases.push_back({true, false, false, "fp32", false, "auto", false});
  // The wide layers' weight gradients from dz transposed, graphed, tuned
  // (the tuning times them from the copy) and not.
  cases.push_back({true, true, true, "fp32", true, "auto", true, true});
  cases.push_back({true, true, true, "bf16", false, "auto", true, true});
  cases.push_back({false, true, false, "fp32", false, "auto", true, true});
  return cases;
}

std::string run_name(const ::testing::TestParamInfo<RunCase>& p) {
  const RunCase& c = p.param;
  return std::string(c.fused ? "fused" : "unfused") + (c.sync_free ? "_syncfree" : "_sync") +
         (c.graphs ? "_graphs" : "") + "_" + c.precision + (c.tuned ? "_tuned" : "") +
         (c.dgrad_weights == "auto" ? "" : "_dgrad_" + c.dgrad_weights) + (c.side_streams ? "" : "_one_stream") +
         (c.wide ? "_wide_wgrad_dy_transposed" : "");
}

INSTANTIATE_TEST_SUITE_P(Modes, DlrmCudaRunTest, ::testing::ValuesIn(run_cases()), run_name);

TEST(DlrmCudaGraphs, ReplayGivesTheSameResultAsEagerSteps) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Dataset train = tiny_data(3 * kBatch, 21), eval = tiny_data(50, 22);
  for (bool fused : {false, true}) {
    const DlrmSetup setup = tiny_setup(4, "fp32", train, kBatch);
    Driven graphed(make_dlrm_cuda_run(setup, train, eval, kSeed, run_toggles(fused, true, true)), true);
    Driven eager(make_dlrm_cuda_run(setup, train, eval, kSeed, run_toggles(fused, true, false)), false);
    // Iterations 2..5 replay: slot 0's graph at 2 and 4, slot 1's at 3 and 5.
    for (int64_t i = 0; i < 6; ++i) {
      graphed.driver.iterate(i);
      eager.driver.iterate(i);
    }
    ASSERT_TRUE(graphed.driver.record().graphs_used) << graphed.driver.record().graphs_note;
    EXPECT_EQ(graphed.driver.record().graph_replays, 4);
    ASSERT_FALSE(eager.driver.record().graphs_used);
    EXPECT_NEAR(graphed.run->take_loss(), eager.run->take_loss(), 1e-6);
    const size_t dense = CpuModel(setup.shape, kSeed).dense_parameters().size();
    const auto a = parameter_state(*graphed.run, setup.shape, dense);
    const auto b = parameter_state(*eager.run, setup.shape, dense);
    ASSERT_EQ(a.size(), b.size());
    for (size_t k = 0; k < a.size(); ++k) {
      ASSERT_EQ(a[k].size(), b[k].size());
      for (size_t i = 0; i < a[k].size(); ++i) {
        ASSERT_NEAR(a[k][i], b[k][i], 1e-6 * std::max(1.0f, std::abs(b[k][i])))
            << (fused ? "fused" : "unfused") << ": tensor " << k << " element " << i;
      }
    }
  }
}

TEST(DlrmCudaGraphs, WithoutSyncFreeTheHarnessCapturesNothingAndSaysWhy) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Dataset train = tiny_data(3 * kBatch, 31), eval = tiny_data(50, 32);
  const DlrmSetup setup = tiny_setup(4, "fp32", train, kBatch);
  Driven d(make_dlrm_cuda_run(setup, train, eval, kSeed, run_toggles(true, false, true)), true);
  for (int64_t i = 0; i < 3; ++i) d.driver.iterate(i);
  EXPECT_FALSE(d.driver.record().graphs_used);
  EXPECT_NE(d.driver.record().graphs_note.find("synchronises the host"), std::string::npos)
      << d.driver.record().graphs_note;
  EXPECT_TRUE(d.driver.record().syncs_as_expected()) << d.driver.record().describe();
  const CorrectnessReport gate = d.run->check_correctness();
  EXPECT_TRUE(gate.passed) << gate.detail;
}

// A NaN in one batch's features: sync-free steps replayed from graphs read
// nothing per step, yet the loss taken afterwards is NaN, and the run names
// the iteration (counted on the device) and the first poisoned parameter.
TEST(DlrmCudaDivergence, TheDeviceFlagsTheStepAndTheRunNamesTheTensor) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  Dataset train = tiny_data(3 * kBatch, 11);
  const Dataset eval = tiny_data(50, 12);
  train.dense[static_cast<size_t>((2 * kBatch + 3) * train.num_dense)] = std::numeric_limits<float>::quiet_NaN();
  const DlrmSetup setup = tiny_setup(16, "tf32", train, kBatch);
  Driven d(make_dlrm_cuda_run(setup, train, eval, kSeed, run_toggles(true, true, true)), true);
  for (int64_t i = 0; i < 6; ++i) {
    const int64_t before = kc::host_sync_count();
    d.driver.iterate(i);
    EXPECT_EQ(kc::host_sync_count(), before) << "iteration " << i;
  }
  EXPECT_TRUE(std::isnan(d.run->take_loss()));
  const std::string detail = d.run->nonfinite_detail();
  EXPECT_NE(detail.find("first non-finite loss at iteration 2 (flagged on the device)"), std::string::npos) << detail;
  EXPECT_NE(detail.find("first non-finite parameter: bottom."), std::string::npos) << detail;
}

#endif  // PERFLAB_DLRM_CUDA

}  // namespace
}  // namespace perflab::dlrm
