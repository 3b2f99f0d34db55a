// dependent_launch=on (kernels/cuda/dependent_launch.h) in the DLRM run.
// Without a device: the cpu backend refuses the choice, and the step's
// description says what was asked. On a GPU (skipped otherwise): six
// iterations with the step's own kernels launched programmatically
// dependent against six without, eager and graphed, fp32 and bf16, fused
// and unfused: the same kernels in the same order on the same operands,
// so the same bits in every parameter (no tolerance); the run's facts say
// whether it was in effect (this GPU's compute capability and the build's);
// and the run's correctness gate, whose step is launched the same way,
// passes. One test a mode, so that ctest runs them side by side.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "harness/registry.h"
#include "tests/support/test_context.h"
#include "workloads/dlrm/dlrm_benchmark.h"

#ifdef PERFLAB_DLRM_CUDA
#include "kernels/cuda/dependent_launch.h"
#include "tests/support/cuda_device.h"
#include "tests/workloads/dlrm/tiny_cuda_dlrm.h"
#endif

namespace perflab::dlrm {
namespace {

using perflab::testing::TestContext;

/// The tiny preset with a training set of 4,096 samples (as dlrm_benchmark_test's).
ParamValues small_params(const std::map<std::string, std::string>& extra) {
  const WorkloadInfo& info = Registry::instance().get("dlrm");
  std::map<std::string, std::string> overrides = {
      {"train_samples", "4096"}, {"eval_samples", "2048"}, {"max_table_size", "97"}, {"batch_size", "128"}};
  for (const auto& [k, v] : extra) overrides[k] = v;
  return resolve_params("dlrm", info.params, info.find_preset("tiny"), overrides);
}

TEST(DlrmDependentLaunch, TheCpuBackendRefusesAChoice) {
  for (const char* asked : {"on", "off"}) {
    TestContext ctx(small_params({{"dependent_launch", asked}}), Backend::kCpu, ToggleSet{});
    try {
      DlrmBenchmark b(ctx);
      ADD_FAILURE() << "dependent_launch=" << asked << " accepted on the cpu backend";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("dependent_launch=" + std::string(asked) + " chooses how the cuda"),
                std::string::npos)
          << e.what();
    }
  }
}

#ifdef PERFLAB_DLRM_CUDA
TEST(DlrmDependentLaunch, TheStepSaysWhatWasAsked) {
  const auto said = [](const std::string& asked) {
    TestContext ctx(small_params({{"dependent_launch", asked}}), Backend::kCuda, ToggleSet{});
    return DlrmBenchmark(ctx).step_plan().hyperparameters["perflab_dlrm_dependent_launch"].get<std::string>();
  };
  EXPECT_EQ(said("auto").rfind("off:", 0), 0u) << said("auto");
  EXPECT_EQ(said("off"), said("auto"));
  EXPECT_EQ(said("on").rfind("on: the step's own kernels", 0), 0u) << said("on");
}

struct LaunchCase {
  std::string precision;
  bool fused, graphs;
};

class DlrmDependentLaunchCuda : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(DlrmDependentLaunchCuda, OnGivesTheSameBitsAsOff) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  constexpr int64_t kBatch = 37;
  constexpr uint64_t kSeed = 5;
  const LaunchCase c = GetParam();
  const std::string mode = c.precision + (c.fused ? ", fused" : ", unfused") + (c.graphs ? ", graphs" : ", eager");
  const Dataset train = tiny_data(3 * kBatch, 41), eval = tiny_data(50, 42);
  // Two setups: a run keeps a reference to its own.
  const DlrmSetup setup = tiny_setup(16, c.precision, train, kBatch);
  DlrmSetup setup_on = setup;
  setup_on.dependent_launch = true;
  Driven off(make_dlrm_cuda_run(setup, train, eval, kSeed, run_toggles(c.fused, true, c.graphs)), c.graphs);
  Driven on(make_dlrm_cuda_run(setup_on, train, eval, kSeed, run_toggles(c.fused, true, c.graphs)), c.graphs);
  for (int64_t i = 0; i < 6; ++i) {  // with graphs: two eager, then each slot's graph twice
    off.driver.iterate(i);
    on.driver.iterate(i);
  }
  EXPECT_EQ(on.driver.record().graphs_used, c.graphs) << mode << ": " << on.driver.record().graphs_note;
  const nlohmann::json facts = on.run->run_facts()["dependent_launch"];
  EXPECT_EQ(facts["requested"], true) << mode;
  EXPECT_EQ(facts["in_effect"], kernels::cuda::device_supports_dependent_launch(0)) << mode << ": " << facts.dump();
  EXPECT_EQ(off.run->run_facts()["dependent_launch"]["requested"], false) << mode;
  EXPECT_EQ(off.run->run_facts()["dependent_launch"]["in_effect"], false) << mode;
  EXPECT_EQ(on.run->take_loss(), off.run->take_loss()) << mode;
  const size_t dense = CpuModel(setup.shape, kSeed).dense_parameters().size();
  const auto a = parameter_state(*on.run, setup.shape, dense);
  const auto b = parameter_state(*off.run, setup.shape, dense);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k], b[k]) << mode << ": tensor " << k << " (dense tensors first, then one per table)";
  }
  // The gate compares a step launched as the run's are.
  const CorrectnessReport gate = on.run->check_correctness();
  EXPECT_TRUE(gate.passed) << mode << ": " << gate.detail;
}

std::vector<LaunchCase> launch_cases() {
  std::vector<LaunchCase> cases;
  for (const char* precision : {"fp32", "bf16"}) {
    for (bool fused : {false, true}) {
      for (bool graphs : {false, true}) cases.push_back({precision, fused, graphs});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Modes, DlrmDependentLaunchCuda, ::testing::ValuesIn(launch_cases()),
                         [](const ::testing::TestParamInfo<LaunchCase>& p) {
                           return p.param.precision + (p.param.fused ? "_fused" : "_unfused") +
                                  (p.param.graphs ? "_graphs" : "_eager");
                         });
#endif  // PERFLAB_DLRM_CUDA

}  // namespace
}  // namespace perflab::dlrm
