// On a GPU (skipped without one): what a DLRM iteration launches, recorded
// by CUPTI through the harness's device ops, against what the step declares
// (workloads/dlrm/cuda_launches.h): each of our own kernels exactly as many
// times as declared, every library call (cuBLASLt, CUB) at least once, and
// the profiler's table matching every declaration. Eager and replayed from a
// graph, fused and unfused, tf32 and bf16.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>

#include "harness/kernel_profile.h"
#include "tests/support/cuda_device.h"

#if PERFLAB_DLRM_CUDA
#include "tests/workloads/dlrm/tiny_cuda_dlrm.h"
#endif

namespace perflab::dlrm {
namespace {

#if !PERFLAB_DLRM_CUDA
TEST(DlrmLaunchesCuda, Skipped) { GTEST_SKIP() << "built without CUDA"; }
#else

/// Library calls launch kernels of their own choosing (a split-K reduction,
/// CUB's passes): declared once, they must run at least once.
bool library(const std::string& kernel) {
  return kernel.find("gemm") != std::string::npos || kernel.rfind("Device", 0) == 0 || kernel == "ncclDevKernel";
}

// fused, graphs, precision, wide: the top MLP widened to 1024-1024-16-1
// with wgrad_dy=transposed (two layers with 1,024-wide inputs transpose dz
// before their weight gradients).
using Mode = std::tuple<bool, bool, std::string, bool>;
class DlrmLaunchesCudaTest : public ::testing::TestWithParam<Mode> {};

TEST_P(DlrmLaunchesCudaTest, TheDeviceRunsWhatTheStepDeclares) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const auto [fused, graphs, precision, wide] = GetParam();
  constexpr int64_t kBatch = 37;
  const Dataset train = tiny_data(3 * kBatch, 11), eval = tiny_data(50, 12);
  DlrmSetup setup = tiny_setup(16, precision, train, kBatch);
  if (wide) {
    setup.shape.top_mlp = {1024, 1024, 16, 1};
    setup.wgrad_dy_transposed = true;
  }
  Driven d(make_dlrm_cuda_run(setup, train, eval, 5, run_toggles(fused, true, graphs)), graphs);
  for (int64_t i = 0; i < 3; ++i) d.driver.iterate(i);  // with graphs: captured at 2
  d.driver.synchronize();
  d.ops->start_activity();
  d.driver.start_declaring();
  d.driver.iterate(3);
  const ActivityLog log = d.ops->stop_activity();
  const LaunchPlan declared = d.driver.stop_declaring();
  ASSERT_FALSE(declared.empty());
  EXPECT_EQ(log.dropped, 0u);

  std::map<std::string, int> declared_count;
  for (const DeclaredKernel& k : declared) ++declared_count[k.kernel];
  int kernels = 0;
  for (const ActivityRecord& r : log.records) kernels += r.kind == ActivityKind::kKernel;
  EXPECT_GE(kernels, static_cast<int>(declared.size()));
  for (const auto& [kernel, count] : declared_count) {
    int ran = 0;
    for (const ActivityRecord& r : log.records) {
      if (r.kind == ActivityKind::kKernel && kernel_matches(demangle(r.name), kernel)) ++ran;
    }
    if (library(kernel)) {
      EXPECT_GE(ran, count) << kernel;
    } else {
      EXPECT_EQ(ran, count) << kernel << ": declared " << count << ", ran " << ran;
    }
  }
  const KernelProfile p = build_kernel_profile(log, 1, 0, declared, nullptr, "test");
  EXPECT_TRUE(p.unmatched.empty()) << p.unmatched.front();
}

INSTANTIATE_TEST_SUITE_P(Modes, DlrmLaunchesCudaTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(),
                                            ::testing::Values(std::string("fp32"),
                                                              std::string("bf16")),
                                            ::testing::Values(false)));
INSTANTIATE_TEST_SUITE_P(WideWithTransposedDz, DlrmLaunchesCudaTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(true),
                                            ::testing::Values(std::string("fp32"), std::string("bf16")),
                                            ::testing::Values(true)));

#endif

}  // namespace
}  // namespace perflab::dlrm
