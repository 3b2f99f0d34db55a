// dependent_launch=on (kernels/cuda/dependent_launch.h) in the DLRM run, on
// a GPU (skipped otherwise; the cpu backend's refusal is in
// dlrm_cuda_test.cc, the step's description in dlrm_benchmark_test.cc): six
// iterations with the step's own kernels launched programmatically
// dependent against six without, eager and graphed, fp32 and bf16, fused
// and unfused: the same kernels in the same order on the same operands,
// so the same bits in every parameter (no tolerance); the run's facts say
// whether it was in effect (this GPU's compute capability and the build's);
// and the run's correctness gate, whose step is launched the same way,
// passes. One test a mode, so that ctest runs them side by side.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "workloads/dlrm/dlrm_benchmark.h"

#ifdef PERFLAB_DLRM_CUDA
#include "kernels/cuda/dependent_launch.h"
#include "tests/support/cuda_device.h"
#include "tests/workloads/dlrm/tiny_cuda_dlrm.h"
#endif

namespace perflab::dlrm {
namespace {

#ifndef PERFLAB_DLRM_CUDA
TEST(DlrmDependentLaunchCuda, Skipped) { GTEST_SKIP() << "built without CUDA"; }
#else

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
