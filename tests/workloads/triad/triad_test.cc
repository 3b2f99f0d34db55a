// The triad workload as the harness sees it: registered as a timed step, its
// plan's bytes floor, a gate that passes after an iteration and fails on an
// array the step never wrote, and one clear line for a size the machine
// cannot hold.
#include <gtest/gtest.h>

#include "base/error.h"
#include "harness/registry.h"
#include "tests/support/test_context.h"

namespace perflab {
namespace {

ParamValues triad_params(std::map<std::string, std::string> overrides) {
  const WorkloadInfo& info = Registry::instance().get("triad");
  return resolve_params("triad", info.params, info.find_preset("tiny"), overrides);
}

TEST(Triad, RegisteredAsATimedStep) {
  const WorkloadInfo& info = Registry::instance().get("triad");
  EXPECT_EQ(info.kind(), WorkloadKind::kTimedStep);
  EXPECT_EQ(info.modes(), std::vector<RunMode>{RunMode::kThroughput});
}

TEST(Triad, PlanCountsTwentyFourBytesPerElement) {
  testing::TestContext ctx(triad_params({{"elements", "1001"}}));
  auto bench = Registry::instance().get("triad").create_timed_step(ctx);
  const StepPlan plan = bench->step_plan();
  EXPECT_EQ(plan.batch_size, 1001);
  EXPECT_DOUBLE_EQ(plan.work.bytes, 24.0 * 1001);
  EXPECT_DOUBLE_EQ(plan.work.flops, 2.0 * 1001);
  EXPECT_FALSE(bench->training_plan());
}

TEST(Triad, GatePassesAfterAnIterationAndFailsBefore) {
  testing::TestContext ctx(triad_params({{"elements", "1001"}, {"scalar", "-2.5"}}));
  auto bench = Registry::instance().get("triad").create_timed_step(ctx);
  auto step = bench->start_step(7);
  const CorrectnessReport before = step->check_correctness();
  EXPECT_FALSE(before.passed) << before.detail;
  EXPECT_NE(before.detail.find("wrong; first at 0"), std::string::npos) << before.detail;
  step->run_iteration(0);
  const CorrectnessReport after = step->check_correctness();
  EXPECT_TRUE(after.passed) << after.detail;
  EXPECT_EQ(after.detail, "all 1001 elements equal b + q*c (within 2 ulp)");
}

TEST(Triad, RefusesWhatTheMachineCannotHold) {
  testing::TestContext ctx(triad_params({{"elements", "4294967296"}}));  // 96 GiB
  try {
    Registry::instance().get("triad").create_timed_step(ctx);
    FAIL() << "a 96 GiB triad was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 75% of the"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace perflab
