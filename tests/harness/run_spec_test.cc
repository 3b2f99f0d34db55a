// RunSpec resolution: run modes, throughput iterations, and toggles that
// cannot take effect together.
#include "harness/run_spec.h"

#include <gtest/gtest.h>

#include "harness/device.h"
#include "harness/error.h"
#include "harness/registry.h"

namespace perflab {
namespace {

/// A workload offering `modes`: both for a trainable one, throughput alone
/// for a timed step.
WorkloadInfo toy(const std::vector<RunMode>& modes) {
  WorkloadInfo info;
  info.name = "spectoy";
  info.presets = {{"p", "", {}}};
  info.default_preset = "p";
  info.backends = {Backend::kCpu};
  info.kind = modes.size() == 1 && modes[0] == RunMode::kThroughput ? WorkloadKind::kTimedStep
                                                                    : WorkloadKind::kTrainable;
  EXPECT_EQ(info.modes(), modes) << "toy cannot offer these modes";
  return info;
}

RunRequest request() {
  RunRequest r;
  r.workload = "spectoy";
  r.backend = "cpu";
  return r;
}

std::string usage_error(const RunRequest& r, const WorkloadInfo& info) {
  try {
    resolve_run_spec(r, info, DeviceProbe{});
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RunSpecMode, DefaultIsTheWorkloadsFirstMode) {
  EXPECT_EQ(resolve_run_spec(request(), toy({RunMode::kTimeToTrain, RunMode::kThroughput}), {}).mode,
            RunMode::kTimeToTrain);
  EXPECT_EQ(resolve_run_spec(request(), toy({RunMode::kThroughput}), {}).mode, RunMode::kThroughput);
  RunRequest r = request();
  r.mode = "throughput";
  r.iterations = 17;
  RunSpec spec = resolve_run_spec(r, toy({RunMode::kTimeToTrain, RunMode::kThroughput}), {});
  EXPECT_EQ(spec.mode, RunMode::kThroughput);
  EXPECT_EQ(spec.iterations, 17);
  EXPECT_EQ(spec.to_json()["mode"], "throughput");
  EXPECT_EQ(request_from_json(spec.to_json()).mode, "throughput");
}

TEST(RunSpecMode, BadModesAndIterationsSayWhy) {
  RunRequest r = request();
  r.mode = "time-to-train";
  EXPECT_EQ(usage_error(r, toy({RunMode::kThroughput})), "spectoy has no time-to-train mode; available: throughput");
  r.mode = "fast";
  EXPECT_EQ(usage_error(r, toy({RunMode::kThroughput})),
            "--mode: 'fast' is not a valid value; valid values: time-to-train, throughput");
  r = request();
  r.iterations = 0;
  EXPECT_EQ(usage_error(r, toy({RunMode::kThroughput})), "--iterations: must be at least 1");
}

TEST(RunSpecMode, OldResultsWithoutAModeAreTimeToTrain) {
  nlohmann::json spec =
      resolve_run_spec(request(), toy({RunMode::kTimeToTrain, RunMode::kThroughput}), {}).to_json();
  spec.erase("mode");
  spec.erase("iterations");
  RunRequest r = request_from_json(spec);
  EXPECT_EQ(r.mode, "time-to-train");
  EXPECT_EQ(r.iterations, 100);
}

TEST(RunSpecToggles, ConflictTurnsAToggleOffWithTheReason) {
  WorkloadInfo info = toy({RunMode::kTimeToTrain, RunMode::kThroughput});
  const std::vector<Backend> cpu = {Backend::kCpu};
  info.toggle_rules = {{Toggle::kSyncFree, cpu, "", {}, ""},
                       {Toggle::kCudaGraphs, cpu, "", Toggle::kSyncFree, "graph capture needs --sync-free"}};
  RunRequest r = request();
  r.toggles[Toggle::kCudaGraphs] = true;
  RunSpec alone = resolve_run_spec(r, info, {});
  EXPECT_TRUE(alone.toggles[Toggle::kCudaGraphs].requested);
  EXPECT_FALSE(alone.toggles[Toggle::kCudaGraphs].in_effect);
  EXPECT_EQ(alone.toggles[Toggle::kCudaGraphs].reason, "graph capture needs --sync-free");

  r.toggles[Toggle::kSyncFree] = true;
  RunSpec both = resolve_run_spec(r, info, {});
  EXPECT_TRUE(both.toggles[Toggle::kCudaGraphs].in_effect);
  EXPECT_TRUE(both.toggles[Toggle::kSyncFree].in_effect);
}

}  // namespace
}  // namespace perflab

namespace perflab {
namespace {

TEST(RunSpecToggles, RulesDeclareWhereEachToggleIsHonoured) {
  WorkloadInfo info = toy({RunMode::kThroughput});
  info.backends = {Backend::kCpu, Backend::kCuda};
  info.toggle_rules = {{Toggle::kFused, {Backend::kCuda}, "the cpu backend has one implementation", {}, ""}};
  std::map<Toggle, bool> requested = {{Toggle::kFused, true}, {Toggle::kSharp, true}};
  ToggleSet on_cpu = resolve_toggles(requested, info, Backend::kCpu);
  EXPECT_FALSE(on_cpu[Toggle::kFused].in_effect);
  EXPECT_EQ(on_cpu[Toggle::kFused].reason, "the cpu backend has one implementation");
  EXPECT_FALSE(on_cpu[Toggle::kSharp].in_effect);
  EXPECT_EQ(on_cpu[Toggle::kSharp].reason, "spectoy has no sharp variant");
  ToggleSet on_cuda = resolve_toggles(requested, info, Backend::kCuda);
  EXPECT_TRUE(on_cuda[Toggle::kFused].in_effect);
  EXPECT_EQ(on_cuda[Toggle::kFused].reason, "");
  EXPECT_FALSE(on_cuda[Toggle::kCudaGraphs].requested);
}

TEST(RunSpecParams, TheSpecNamesTheWorkloadsBatchAndLearningRateParameters) {
  WorkloadInfo info = toy({RunMode::kThroughput});
  info.batch_param = "batch";
  nlohmann::json spec = resolve_run_spec(request(), info, {}).to_json();
  EXPECT_EQ(spec["batch_param"], "batch");
  EXPECT_TRUE(spec["learning_rate_param"].is_null());
}

}  // namespace
}  // namespace perflab
