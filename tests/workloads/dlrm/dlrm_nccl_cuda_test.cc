// The cuda backend's NCCL path (exchange=nccl; cuda_model.h with a
// communicator) on one GPU, the only one a test can have: NCCL with one
// rank, so the exchanges are NCCL's self send/receive and the all-reduce
// one rank's. Skips with the runtime's reason without a device, and says so
// in a build without NCCL (label gpu: scripts/gpu-check fails if it skips
// on a GPU machine).
//
//   - one step of the NCCL model against the plain CudaModel, every mode, on
//     a seeded batch at odd sizes (batch 37; tables of 5, 7 and 3 rows; dim
//     4 and 16): the same kernels on the same values, the exchanges copies,
//     so expected bit-identical; asserted within 1e-6 relative;
//   - the same step against the CPU model within the cuda backend's own
//     tolerance (cuda_compare.h: compare_one_step, the gate);
//   - the run (cuda_run.h) on the NCCL path: six iterations and an
//     evaluation equal the plain run's (1e-6), and the same steps captured
//     in CUDA graphs by the harness's StepDriver equal the eager ones (1e-6);
//   - --sharp on one GPU: requested, not in effect, with a reason.
// The P-rank layout itself is checked on the CPU (exchange_layout_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.h"

#ifdef PERFLAB_DLRM_CUDA
#include "harness/step_driver.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/raii.h"
#include "tests/support/cuda_device.h"
#include "workloads/dlrm/cuda_compare.h"
#include "workloads/dlrm/cuda_convert.h"
#include "workloads/dlrm/cuda_model.h"
#include "workloads/dlrm/cuda_run.h"
#include "tests/workloads/dlrm/tiny_cuda_dlrm.h"
#endif
#ifdef PERFLAB_HAVE_NCCL
#include "collectives/nccl.h"
#endif

namespace perflab::dlrm {
namespace {

#if !defined(PERFLAB_DLRM_CUDA)

TEST(DlrmNcclCuda, Skipped) { GTEST_SKIP() << "built without CUDA"; }

#elif !defined(PERFLAB_HAVE_NCCL)

TEST(DlrmNcclCuda, Skipped) {
  GTEST_SKIP() << "built without NCCL: the cuda backend's exchange=nccl is refused";
}

#else

namespace kc = perflab::kernels::cuda;

constexpr int64_t kBatch = 37;
constexpr uint64_t kSeed = 9;

/// NCCL over the single-rank communicator, once per test binary.
collectives::Communicator& one_rank_nccl() {
  static std::unique_ptr<collectives::Communicator> host = collectives::make_single_communicator();
  static std::unique_ptr<collectives::Communicator> nccl =
      collectives::make_nccl_communicator(*host, {});
  return *nccl;
}

void expect_same(const std::vector<std::vector<float> >& actual,
                 const std::vector<std::vector<float> >& expected, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t k = 0; k < actual.size(); ++k) {
    ASSERT_EQ(actual[k].size(), expected[k].size()) << what << ": tensor " << k;
    for (size_t i = 0; i < actual[k].size(); ++i) {
      ASSERT_NEAR(actual[k][i], expected[k][i], 1e-6 * std::max(1.0f, std::abs(expected[k][i])))
          << what << ": tensor " << k << " element " << i;
    }
  }
}

class DlrmNcclStepTest : public ::testing::TestWithParam<StepParam> {};

TEST_P(DlrmNcclStepTest, OneRankStepEqualsThePlainStepAndTheCpu) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const auto [dim, precision, fused, sync_free] = GetParam();
  const ModelShape shape = tiny_shape(dim);
  const Dataset data = tiny_data(kBatch, 3);
  CudaModelOptions plain_options;
  plain_options.batch = kBatch;
  plain_options.precision = precision;
  plain_options.fused = fused;
  plain_options.update_mode =
      sync_free ? kc::EmbeddingUpdateMode::kSyncFree : kc::EmbeddingUpdateMode::kSynchronising;
  CudaModelOptions nccl_options = plain_options;
  nccl_options.comm = &one_rank_nccl();
  CudaModelOptions overlap_options = nccl_options;
  overlap_options.overlap = true;  // the exchanges on a second stream
  // And the weight gradients and the update's sort on side streams beside
  // NCCL's work (a run's side_streams=auto takes this path).
  CudaModelOptions side_options = overlap_options;
  side_options.side_streams = true;

  CpuModel init_plain(shape, kSeed), init_nccl(shape, kSeed), init_overlap(shape, kSeed), init_side(shape, kSeed);
  CudaModel plain(init_plain, plain_options);
  CudaModel nccl(init_nccl, nccl_options);
  CudaModel overlapped(init_overlap, overlap_options);
  CudaModel side(init_side, side_options);
  ASSERT_EQ(nccl.local_batch(), kBatch);
  ASSERT_EQ(nccl.first_sample(), 0);

  kc::DeviceBuffer<float> dense(data.dense);
  kc::DeviceBuffer<int32_t> ids(data.categorical);
  kc::DeviceBuffer<float> labels(data.labels);
  kc::counted_stream_synchronize(nullptr);  // the uploads (legacy stream) have landed
  kc::Stream stream;
  double loss[4] = {0, 0, 0, 0};
  CudaModel* models[4] = {&plain, &nccl, &overlapped, &side};
  for (int m = 0; m < 4; ++m) {
    set_device_float(models[m]->learning_rate(), 0.5f, stream.get());
    models[m]->train_step({dense.data(), ids.data(), labels.data()}, stream.get());
    loss[m] = models[m]->take_loss(stream.get()).sum;  // synchronises the stream
  }
  EXPECT_NEAR(loss[1], loss[0], 1e-6 * std::abs(loss[0])) << describe(plain_options);
  const size_t tensors = init_plain.dense_parameters().size();
  expect_same(parameter_state(nccl, shape, tensors), parameter_state(plain, shape, tensors),
              "NCCL (1 rank) vs plain, " + describe(plain_options));
  EXPECT_NEAR(loss[2], loss[0], 1e-6 * std::abs(loss[0])) << "overlapped, " << describe(plain_options);
  expect_same(parameter_state(overlapped, shape, tensors), parameter_state(plain, shape, tensors),
              "NCCL (1 rank) with the exchanges overlapped vs plain, " + describe(plain_options));
  EXPECT_NEAR(loss[3], loss[0], 1e-6 * std::abs(loss[0])) << "side streams, " << describe(plain_options);
  expect_same(parameter_state(side, shape, tensors), parameter_state(plain, shape, tensors),
              "NCCL (1 rank), exchanges overlapped, side streams vs plain, " + describe(plain_options));

  // And against the CPU reference, as the gate compares it.
  const StepComparison c =
      compare_one_step(shape, kSeed, nccl_options, data.batch(0, kBatch), 0.5f);
  EXPECT_TRUE(c.passed) << c.detail;
}

INSTANTIATE_TEST_SUITE_P(AllModes, DlrmNcclStepTest, all_step_params(), step_name);

// ---- The run: eager, graphs, evaluation ------------------------------------------

/// Six iterations (two epochs of three batches): plain eager, NCCL eager,
/// NCCL with graphs (iterations 2..5 replayed). All three end equal, and
/// the NCCL run's evaluation (logits gathered through NCCL) gives the plain
/// run's AUC.
TEST(DlrmNcclRun, EagerAndCapturedStepsEqualThePlainRun) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Dataset train = tiny_data(3 * kBatch, 41), eval = tiny_data(50, 42);
  const DlrmSetup setup = tiny_setup(16, "fp32", train, kBatch);
  const DlrmNccl nccl{&one_rank_nccl(), 0, false, ""};
  Driven plain(make_dlrm_cuda_run(setup, train, eval, kSeed, run_toggles(true, true, false)), false);
  Driven eager(make_dlrm_cuda_run(setup, train, eval, kSeed, run_toggles(true, true, false), nccl), false);
  Driven graphed(make_dlrm_cuda_run(setup, train, eval, kSeed, run_toggles(true, true, true), nccl), true);
  // One run after the other (take_loss waits for its steps): the two NCCL
  // runs share one communicator, whose operations must not interleave
  // between their streams.
  double losses[3] = {0, 0, 0};
  Driven* runs[3] = {&plain, &eager, &graphed};
  for (int r = 0; r < 3; ++r) {
    for (int64_t i = 0; i < 6; ++i) {
      const int64_t before = kc::host_sync_count();
      runs[r]->driver.iterate(i);
      EXPECT_EQ(kc::host_sync_count(), before)
          << "run " << r << ", iteration " << i << ": a sync-free step synchronised";
    }
    losses[r] = runs[r]->run->take_loss();
  }
  ASSERT_TRUE(graphed.driver.record().graphs_used) << graphed.driver.record().graphs_note;
  EXPECT_EQ(graphed.driver.record().graph_replays, 4);
  EXPECT_NEAR(losses[1], losses[0], 1e-6 * std::abs(losses[0]));
  EXPECT_NEAR(losses[2], losses[0], 1e-6 * std::abs(losses[0]));
  const size_t tensors = CpuModel(setup.shape, kSeed).dense_parameters().size();
  const auto expected = parameter_state(*plain.run, setup.shape, tensors);
  expect_same(parameter_state(*eager.run, setup.shape, tensors), expected, "NCCL eager vs plain");
  expect_same(parameter_state(*graphed.run, setup.shape, tensors), expected, "NCCL graphs vs plain");

  const double auc = plain.run->evaluate();
  EXPECT_NEAR(eager.run->evaluate(), auc, 1e-9);
  EXPECT_NEAR(graphed.run->evaluate(), auc, 1e-9);
  const CorrectnessReport gate = graphed.run->check_correctness();
  EXPECT_TRUE(gate.passed) << gate.detail;
  const nlohmann::json facts = graphed.run->run_facts();
  EXPECT_EQ(facts.value("exchange", ""), "nccl") << facts.dump();
  // The all-reduce's bytes are the model's gradient buffer (padded slots included).
  CpuModel init(setup.shape, kSeed);
  CudaModelOptions options;
  options.batch = kBatch;
  const CudaModel model(init, options);
  EXPECT_EQ(facts.value("gradient_all_reduce_bytes", int64_t{-1}),
            model.dense_count() * static_cast<int64_t>(sizeof(float)))
      << facts.dump();
  EXPECT_EQ(model.gradient_all_reduce_bytes(), static_cast<size_t>(model.dense_count()) * sizeof(float));
  // A bf16 model all-reduces the GEMMs' bf16 gradients: half the bytes.
  CudaModelOptions bf16_options = options;
  bf16_options.precision = kc::Precision::kBf16;
  const CudaModel bf16_model(init, bf16_options);
  EXPECT_EQ(bf16_model.gradient_all_reduce_bytes(), static_cast<size_t>(bf16_model.dense_count()) * 2);
}

/// --sharp on the NCCL path with one GPU: requested, not in effect, and the
/// reason (from NCCL's log, or its absence) says why.
TEST(DlrmNcclRun, SharpOnOneGpuReadsOffWithAReason) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Dataset train = tiny_data(3 * kBatch, 51), eval = tiny_data(50, 52);
  const DlrmSetup setup = tiny_setup(16, "fp32", train, kBatch);
  const DlrmNccl nccl{&one_rank_nccl(), 0, true, ""};
  Driven d(make_dlrm_cuda_run(setup, train, eval, kSeed, run_toggles(true, true, false, true), nccl), false);
  for (int64_t i = 0; i < 2; ++i) d.driver.iterate(i);
  const auto outcomes = d.run->toggle_outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].first, Toggle::kSharp);
  EXPECT_TRUE(outcomes[0].second.requested);
  EXPECT_FALSE(outcomes[0].second.in_effect);
  EXPECT_FALSE(outcomes[0].second.reason.empty());

  // Without the exchange there is no all-reduce to offload, and it says so.
  Driven plain(make_dlrm_cuda_run(setup, train, eval, kSeed, run_toggles(true, true, false, true)), false);
  const auto plain_outcomes = plain.run->toggle_outcomes();
  ASSERT_EQ(plain_outcomes.size(), 1u);
  EXPECT_FALSE(plain_outcomes[0].second.in_effect);
  EXPECT_NE(plain_outcomes[0].second.reason.find("exchange=none"), std::string::npos)
      << plain_outcomes[0].second.reason;
}

#endif

}  // namespace
}  // namespace perflab::dlrm
