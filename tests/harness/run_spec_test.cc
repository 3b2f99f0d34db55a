// RunSpec resolution: run modes, throughput iterations, and toggles that
// cannot take effect together.
#include "harness/run_spec.h"

#include <gtest/gtest.h>

#include "harness/device.h"
#include "base/error.h"
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
  // The kind follows from the factory set (never called here).
  if (modes.size() == 1 && modes[0] == RunMode::kThroughput) {
    info.create_timed_step = [](const RunContext&) { return std::unique_ptr<Benchmark>(); };
  } else {
    info.create_trainable = [](const RunContext&) { return std::unique_ptr<TrainableBenchmark>(); };
  }
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
            "--mode: 'fast' is not a valid value; valid values: time-to-train, throughput, inference");
  r = request();
  r.iterations = 0;
  EXPECT_EQ(usage_error(r, toy({RunMode::kThroughput})), "--iterations: must be in [1, 1000000000], got 0");
}

// Every count has bounds that keep what is derived from it in its type: the
// seeds from the first, warm-up plus timed iterations (an int), the threads.
TEST(RunSpecCounts, OutOfRangeCountsSayTheBounds) {
  const WorkloadInfo info = toy({RunMode::kThroughput});
  RunRequest r = request();
  r.seeds = 0;
  EXPECT_EQ(usage_error(r, info), "--seeds: must be in [1, 1000], got 0");
  r.seeds = 1001;
  EXPECT_EQ(usage_error(r, info), "--seeds: must be in [1, 1000], got 1001");
  r = request();
  r.seeds = 3;
  r.first_seed = 18446744073709551614ULL;  // seeds 2^64-2, 2^64-1, then 0 wrapped
  EXPECT_EQ(usage_error(r, info), "--seed: 3 seeds from 18446744073709551614 pass 2^64 - 1");
  r.seeds = 2;
  EXPECT_EQ(resolve_run_spec(r, info, {}).seeds.back(), 18446744073709551615ULL);
  r = request();
  r.threads = -1;
  EXPECT_EQ(usage_error(r, info), "--threads: must be in [0, 4096], got -1");
  r.threads = 4097;
  EXPECT_EQ(usage_error(r, info), "--threads: must be in [0, 4096], got 4097");
  r = request();
  r.warmup_iterations = 1'000'000'001;
  EXPECT_EQ(usage_error(r, info), "--warmup: must be in [0, 1000000000], got 1000000001");
  r = request();
  r.iterations = 2'000'000'000;
  EXPECT_EQ(usage_error(r, info), "--iterations: must be in [1, 1000000000], got 2000000000");
}

std::string rerun_error(const nlohmann::json& spec) {
  try {
    request_from_json(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

// What rerun reads from a result's spec (issue 13: found by an earlier
// round of fuzzing; tests/fuzz/result_fuzz.cc drives this path): counts
// that do not fit an int and seeds that are not unsigned integers were cast
// without a check.
TEST(RunSpecRerun, CountsFromAResultAreCheckedBeforeAnyCast) {
  const nlohmann::json good = resolve_run_spec(request(), toy({RunMode::kThroughput}), {}).to_json();
  EXPECT_EQ(rerun_error(good), "no error");
  nlohmann::json bad = good;
  bad["threads"] = 1e300;
  EXPECT_EQ(rerun_error(bad), "result spec is malformed: threads is 1e+300, not an integer in range");
  bad = good;
  bad["warmup_iterations"] = 4294967299ULL;
  EXPECT_EQ(rerun_error(bad), "result spec is malformed: warmup_iterations is 4294967299, not an integer in range");
  bad = good;
  bad["iterations"] = -1e300;
  EXPECT_EQ(rerun_error(bad), "result spec is malformed: iterations is -1e+300, not an integer in range");
  bad = good;
  bad["seeds"] = {1e300};
  EXPECT_EQ(rerun_error(bad), "result spec seed 1e+300 is not an unsigned integer");
  bad["seeds"] = {18446744073709551615ULL, 0};  // "consecutive" only by wrapping
  EXPECT_EQ(rerun_error(bad), "result spec seeds are not consecutive");
  bad["seeds"] = nlohmann::json::array();
  for (uint64_t s = 1; s <= 1001; ++s) bad["seeds"].push_back(s);
  EXPECT_EQ(rerun_error(bad), "result spec has 1001 seeds, more than 1000");
  bad["seeds"] = 7;
  EXPECT_EQ(rerun_error(bad), "result spec has no seeds");
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

TEST(Registry, AWorkloadSetsExactlyOneFactory) {
  WorkloadInfo neither;
  neither.name = "neither";
  EXPECT_THROW(Registry::instance().add(neither), std::logic_error);
  WorkloadInfo both = toy({RunMode::kThroughput});
  both.name = "both";
  both.create_trainable = [](const RunContext&) { return std::unique_ptr<TrainableBenchmark>(); };
  EXPECT_THROW(Registry::instance().add(both), std::logic_error);
  EXPECT_THROW(Registry::instance().get("both"), UsageError);  // neither was added
}

TEST(RunSpecToggles, GraphsNeedSyncFreeByDefaultUnlessTheWorkloadSaysOtherwise) {
  WorkloadInfo info = toy({RunMode::kTimeToTrain, RunMode::kThroughput});
  const std::vector<Backend> cpu = {Backend::kCpu};
  info.toggle_rules = {{Toggle::kSyncFree, cpu, "", {}, ""}, {Toggle::kCudaGraphs, cpu, "", {}, ""}};
  RunRequest r = request();
  r.toggles[Toggle::kCudaGraphs] = true;
  RunSpec by_default = resolve_run_spec(r, info, {});
  EXPECT_FALSE(by_default.toggles[Toggle::kCudaGraphs].in_effect);
  EXPECT_EQ(by_default.toggles[Toggle::kCudaGraphs].reason,
            "--cuda-graphs needs --sync-free on (the step must not synchronise with the host inside its iteration)");
  info.toggle_rules[1].needs_nothing = true;  // a workload whose every iteration is capturable
  EXPECT_TRUE(resolve_run_spec(r, info, {}).toggles[Toggle::kCudaGraphs].in_effect);
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

namespace perflab {
namespace {

TEST(RunSpecProfile, RefusedOffTheGpuAndOutsideThroughputInOneLine) {
  RunRequest r = request();
  r.profile = "kernels";
  EXPECT_EQ(usage_error(r, toy({RunMode::kThroughput})),
            "--profile kernels: profiling records a GPU's kernels (CUPTI) and this run is on the cpu backend; "
            "run with --backend cuda on a machine with a GPU");
  r.backend = "auto";
  EXPECT_NE(usage_error(r, toy({RunMode::kThroughput})).find("cpu backend (auto: "), std::string::npos)
      << "auto says why it chose the CPU";
  r = request();
  r.profile = "everything";
  EXPECT_EQ(usage_error(r, toy({RunMode::kThroughput})),
            "--profile: 'everything' is not a valid value; valid values: off, kernels, trace");

  // With a device: time to train is refused, throughput taken.
  DeviceProbe gpu;
  gpu.available = true;
  WorkloadInfo info = toy({RunMode::kTimeToTrain, RunMode::kThroughput});
  info.backends = {Backend::kCpu, Backend::kCuda};
  r = request();
  r.backend = "cuda";
  r.profile = "trace";
  try {
    resolve_run_spec(r, info, gpu);
    FAIL() << "time to train cannot be profiled";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("add --mode throughput"), std::string::npos) << e.what();
  }
  r.mode = "throughput";
  const RunSpec spec = resolve_run_spec(r, info, gpu);
  EXPECT_EQ(spec.profile, ProfileMode::kTrace);
  EXPECT_EQ(spec.to_json()["profile"], "trace");
  EXPECT_EQ(request_from_json(spec.to_json()).profile, "trace") << "rerun profiles again";
}

TEST(RunSpecProfile, AnUnprofiledSpecIsWrittenAsBefore) {
  // A sweep run's key hashes its spec: profiling's absence must not change it.
  const RunSpec spec = resolve_run_spec(request(), toy({RunMode::kThroughput}), {});
  EXPECT_EQ(spec.profile, ProfileMode::kOff);
  EXPECT_FALSE(spec.to_json().contains("profile"));
  EXPECT_EQ(request_from_json(spec.to_json()).profile, "off");
}

TEST(RunSpecCheckLaunches, OnTheGpuItTurnsGraphsOffWithTheReasonAndIsRecorded) {
  RunRequest r = request();
  r.check_launches = true;
  EXPECT_EQ(usage_error(r, toy({RunMode::kThroughput})),
            "--check-launches waits for the GPU after every kernel launch, and this run is on the cpu backend; "
            "run with --backend cuda on a machine with a GPU");
  DeviceProbe gpu;
  gpu.available = true;
  WorkloadInfo info = toy({RunMode::kThroughput});
  info.backends = {Backend::kCpu, Backend::kCuda};
  ToggleRule graphs;
  graphs.toggle = Toggle::kCudaGraphs;
  graphs.backends = {Backend::kCuda};
  graphs.needs_nothing = true;
  info.toggle_rules = {graphs};
  r.backend = "cuda";
  r.toggles[Toggle::kCudaGraphs] = true;
  const RunSpec spec = resolve_run_spec(r, info, gpu);
  EXPECT_TRUE(spec.check_launches);
  EXPECT_TRUE(spec.toggles[Toggle::kCudaGraphs].requested);
  EXPECT_FALSE(spec.toggles[Toggle::kCudaGraphs].in_effect);
  EXPECT_EQ(spec.toggles[Toggle::kCudaGraphs].reason,
            "--check-launches waits for the device after every launch, which a captured graph cannot");
  EXPECT_EQ(spec.to_json()["check_launches"], true);
  EXPECT_TRUE(request_from_json(spec.to_json()).check_launches) << "rerun checks launches again";
  // Off, the spec (and a sweep run's key) is what it was.
  r.check_launches = false;
  EXPECT_FALSE(resolve_run_spec(r, info, gpu).to_json().contains("check_launches"));
}

}  // namespace
}  // namespace perflab
