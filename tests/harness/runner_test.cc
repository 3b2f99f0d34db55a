// The runner's loop on a scripted workload: stop rule, eval schedule, NaN
// handling and the MLLOG events it writes.
#include "harness/runner.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <utility>

#include <gtest/gtest.h>

#include "collectives/communicator.h"
#include "harness/registry.h"
#include "harness/run_context.h"

namespace perflab {
namespace {

namespace fs = std::filesystem;

/// Quality rises by `step` per evaluation from 0.5; the loss turns NaN at
/// evaluation `nan_at` (1-based; 0: never).
struct Script {
  double step = 0.1;
  int nan_at = 0;
  bool gate_passes = true;
  bool device = false;  ///< Run as a device step on fake device ops (2 ms per iteration).
  int step_syncs = 0;   ///< Host syncs the device step declares per iteration.
  class FakeDeviceOps* ops = nullptr;  ///< Told of each eager step (its kernels, when recording).
};

/// Reports 2 ms for every iteration bracketed since the last collect, or
/// *slow_ms for one stopped while *recording (null: never).
class FakeDeviceTimer : public DeviceIterationTimer {
 public:
  FakeDeviceTimer(const bool* recording = nullptr, const double* slow_ms = nullptr)
      : recording_(recording), slow_ms_(slow_ms) {}
  void start() override {}
  void stop() override { ms_.push_back(recording_ && *recording_ ? *slow_ms_ : 2.0); }
  std::vector<double> collect_ms() override { return std::exchange(ms_, {}); }

 private:
  const bool* recording_;
  const double* slow_ms_;
  std::vector<double> ms_;
};

/// Device calls that record what was asked of them. A step (eager or a
/// replayed graph) runs three kernels of 0.5 ms; while activity records,
/// they are recorded.
class FakeDeviceOps : public DeviceOps {
 public:
  int64_t host_sync_count() override { return 0; }
  void begin_capture(void*) override { capturing = true; }
  void end_capture(void*, int) override {
    capturing = false;
    ++captures;
  }
  void abort_capture(void*) override { capturing = false; }
  void launch(void*, int) override {
    ++launches;
    ran();
  }
  void synchronize(void*) override {}
  std::unique_ptr<DeviceIterationTimer> make_timer(void*) override {
    return std::make_unique<FakeDeviceTimer>(&recording, &recording_ms);
  }
  void start_activity() override {
    recording = true;
    ++recordings;
  }
  ActivityLog stop_activity() override {
    recording = false;
    return std::exchange(log, {});
  }
  uint64_t activity_clock_ns() override { return clock_ns += 1000; }
  void set_launch_checks(bool synchronous) override { launch_checks.push_back(synchronous); }
  void ran() {
    if (!recording || capturing) return;  // a captured step runs nothing until replayed
    for (const char* name : {"_Z7forwardv", "_Z8backwardv", "sgd"}) {
      log.records.push_back({ActivityKind::kKernel, name, clock_ns, clock_ns + 500000, 0, 7, 0, 0, 0});
      clock_ns += 500000;
    }
  }
  int captures = 0, launches = 0, recordings = 0;
  std::vector<bool> launch_checks;  ///< What set_launch_checks was told, in order.
  bool recording = false;
  double recording_ms = 2.0;  ///< What an iteration takes while activity records.
  bool capturing = false;
  uint64_t clock_ns = 0;
  ActivityLog log;
};

class ScriptedRun : public TrainableModel, public DeviceStep {
 public:
  explicit ScriptedRun(Script s) : s_(s) {}
  void run_iteration(int64_t) override { ++iterations_; }
  DeviceStep* device_step() override { return s_.device ? this : nullptr; }
  void* stream() override { return nullptr; }
  int begin(int64_t iteration) override { return static_cast<int>(iteration % 2); }
  void enqueue(int) override {
    ++iterations_;
    if (s_.ops) s_.ops->ran();
  }
  LaunchPlan launch_plan(int) override {
    return {{"forward", "the forward pass", "forward", {1e6, 0, ""}},
            {"backward", "the backward pass", "backward", {2e6, 0, ""}}};
  }
  int variants() const override { return 2; }
  int expected_host_syncs() const override { return s_.step_syncs; }
  double take_loss() override {
    ++evals_;
    return s_.nan_at == evals_ ? std::numeric_limits<double>::quiet_NaN() : 0.5;
  }
  double evaluate() override { return 0.5 + s_.step * evals_; }
  int64_t iterations() const { return iterations_; }
  CorrectnessReport check_correctness() override {
    return {s_.gate_passes, s_.gate_passes ? "scripted pass" : "scripted failure"};
  }

 private:
  Script s_;
  int evals_ = 0;
  int64_t iterations_ = 0;
};

class ScriptedBenchmark : public TrainableBenchmark {
 public:
  explicit ScriptedBenchmark(Script s) : s_(s) {}
  StepPlan step_plan() const override {
    StepPlan p;
    p.batch_size = 4;
    p.hyperparameters = {{"opt_name", "sgd"}};
    return p;
  }
  TrainingPlan training() const override {
    TrainingPlan p;
    p.train_samples = 40;
    p.eval_samples = 10;
    p.iterations_per_epoch = 10;
    p.max_epochs = 3;
    p.eval_interval_epochs = 0.5;
    p.quality_metric = "AUC";
    p.quality_target = 0.75;
    return p;
  }
  std::unique_ptr<TrainableModel> start_model(uint64_t) override {
    return std::make_unique<ScriptedRun>(s_);
  }

 private:
  Script s_;
};

WorkloadInfo scripted(Script s) {
  WorkloadInfo info;
  info.name = "scripted";
  info.backends = {Backend::kCpu};
  info.create_trainable = [s](const RunContext&) { return std::make_unique<ScriptedBenchmark>(s); };
  return info;
}

/// Every seed of `spec` through the runner, as the invocation pipeline runs
/// them (prepare once, run_seed per seed, score by mode), logs in `dir`.
InvocationRecord run_benchmark(const RunSpec& spec, const WorkloadInfo& info, const fs::path& dir,
                               const std::string& platform, FakeDeviceOps* ops = nullptr) {
  static const DeviceContext device;
  static const nlohmann::json environment = nlohmann::json::object();
  auto comm = collectives::make_single_communicator();
  RunContext ctx{spec, device, environment, *comm};
  if (ops) {
    ctx.device_ops = [ops] {
      // The runner owns what the factory returns; hand it a forwarder.
      struct Forward : DeviceOps {
        explicit Forward(FakeDeviceOps* o) : o_(o) {}
        int64_t host_sync_count() override { return o_->host_sync_count(); }
        void begin_capture(void* s) override { o_->begin_capture(s); }
        void end_capture(void* s, int v) override { o_->end_capture(s, v); }
        void abort_capture(void* s) override { o_->abort_capture(s); }
        void launch(void* s, int v) override { o_->launch(s, v); }
        void synchronize(void* s) override { o_->synchronize(s); }
        std::unique_ptr<DeviceIterationTimer> make_timer(void* s) override { return o_->make_timer(s); }
        void start_activity() override { o_->start_activity(); }
        ActivityLog stop_activity() override { return o_->stop_activity(); }
        uint64_t activity_clock_ns() override { return o_->activity_clock_ns(); }
        void set_launch_checks(bool synchronous) override { o_->set_launch_checks(synchronous); }
        FakeDeviceOps* o_;
      };
      return std::unique_ptr<DeviceOps>(std::make_unique<Forward>(ops));
    };
  }
  PreparedBenchmark prepared = prepare_benchmark(ctx, info);
  InvocationRecord rec;
  rec.spec = spec;
  rec.step = prepared.step;
  rec.training = prepared.training;
  for (size_t i = 0; i < spec.seeds.size(); ++i) {
    rec.runs.push_back(run_seed(ctx, prepared, spec.seeds[i], dir / ("run_" + std::to_string(i) + ".log"),
                                platform));
  }
  rec.score = score_records(rec.runs, spec.mode);
  rec.toggles = toggles_as_run(spec.toggles, rec.runs);
  return rec;
}

RunSpec spec_with_seeds(int n) {
  RunSpec spec;
  spec.workload = "scripted";
  spec.preset = "p";
  for (int i = 0; i < n; ++i) spec.seeds.push_back(static_cast<uint64_t>(i + 1));
  spec.warmup_iterations = 2;
  return spec;
}

std::vector<nlohmann::json> read_log(const fs::path& path) {
  std::vector<nlohmann::json> events;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto pos = line.find(":::MLLOG ");
    if (pos != std::string::npos) events.push_back(nlohmann::json::parse(line.substr(pos + 9)));
  }
  return events;
}

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("perflab_runner_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RunnerTest, StopsWhenTheTargetIsReached) {
  InvocationRecord rec = run_benchmark(spec_with_seeds(1), scripted({}), dir_, "test platform");
  ASSERT_EQ(rec.runs.size(), 1u);
  const RunRecord& run = rec.runs[0];
  EXPECT_TRUE(run.success);
  EXPECT_EQ(run.status, "success");
  // Evaluations every 5 iterations: 0.6, 0.7, 0.8 -> target reached at the 3rd.
  ASSERT_EQ(run.quality_curve.size(), 3u);
  EXPECT_DOUBLE_EQ(run.quality_curve[2].epoch, 1.5);
  EXPECT_EQ(run.iterations, 15);
  EXPECT_EQ(run.samples, 60);
  EXPECT_EQ(run.iteration_ms.n, 13u);  // 15 iterations minus 2 of warm-up

  auto events = read_log(dir_ / run.log_file);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front()["key"], "cache_clear");
  EXPECT_EQ(events.back()["key"], "run_stop");
  EXPECT_EQ(events.back()["metadata"]["status"], "success");
  int accuracy = 0;
  for (const auto& e : events) {
    if (e["key"] == "eval_accuracy") {
      ++accuracy;
      EXPECT_TRUE(e["metadata"].contains("epoch_num"));
      EXPECT_TRUE(e["metadata"].contains("samples_count"));
    }
    EXPECT_EQ(e["event_type"], e["key"].get<std::string>().rfind("_start") != std::string::npos
                                   ? "INTERVAL_START"
                                   : e["key"].get<std::string>().rfind("_stop") != std::string::npos
                                         ? "INTERVAL_END"
                                         : "POINT_IN_TIME");
  }
  EXPECT_EQ(accuracy, 3);
}

TEST_F(RunnerTest, NanLossAbortsWithTheReason) {
  Script s;
  s.nan_at = 2;
  InvocationRecord rec = run_benchmark(spec_with_seeds(1), scripted(s), dir_, "test platform");
  const RunRecord& run = rec.runs[0];
  EXPECT_FALSE(run.success);
  EXPECT_EQ(run.status, "aborted");
  EXPECT_NE(run.reason.find("diverged"), std::string::npos) << run.reason;
  auto events = read_log(dir_ / run.log_file);
  EXPECT_EQ(events.back()["key"], "run_stop");
  EXPECT_EQ(events.back()["metadata"]["status"], "aborted");
  EXPECT_NE(events.back()["metadata"]["reason"].get<std::string>().find("nan"), std::string::npos);
}

TEST_F(RunnerTest, MaxEpochsWithoutTargetAborts) {
  Script s;
  s.step = 0.01;  // 0.51 .. 0.56 over 6 evaluations: never 0.75
  InvocationRecord rec = run_benchmark(spec_with_seeds(3), scripted(s), dir_, "test platform");
  for (const auto& run : rec.runs) {
    EXPECT_EQ(run.status, "aborted");
    EXPECT_EQ(run.iterations, 30);
    EXPECT_EQ(run.quality_curve.size(), 6u);
    EXPECT_NE(run.reason.find("not reached in 3 epochs"), std::string::npos) << run.reason;
  }
  EXPECT_FALSE(rec.score.value);
  EXPECT_TRUE(fs::exists(dir_ / "run_2.log"));
}

TEST_F(RunnerTest, ThreeSeedsGiveAnOlympicScore) {
  InvocationRecord rec = run_benchmark(spec_with_seeds(3), scripted({}), dir_, "test platform");
  ASSERT_TRUE(rec.score.value);
  EXPECT_EQ(rec.score.method, "olympic mean of 3");
  EXPECT_EQ(rec.runs[1].seed, 2u);
}

RunSpec throughput_spec(int seeds, int iterations) {
  RunSpec spec = spec_with_seeds(seeds);
  spec.mode = RunMode::kThroughput;
  spec.iterations = iterations;
  return spec;
}

TEST_F(RunnerTest, ThroughputRunsWarmupPlusTimedIterationsThenTheGate) {
  InvocationRecord rec = run_benchmark(throughput_spec(3, 7), scripted({}), dir_, "test platform");
  ASSERT_EQ(rec.runs.size(), 3u);
  for (const RunRecord& run : rec.runs) {
    EXPECT_TRUE(run.success) << run.reason;
    EXPECT_EQ(run.iterations, 9);  // 2 warm-up + 7 timed
    EXPECT_EQ(run.samples, 36);
    EXPECT_EQ(run.iteration_ms.n, 7u);
    EXPECT_EQ(run.host_iteration_ms.n, 7u);
    EXPECT_FALSE(run.device_timed);
    EXPECT_TRUE(run.quality_curve.empty());  // no evaluation in throughput mode
    ASSERT_TRUE(run.correctness);
    EXPECT_EQ(run.correctness->detail, "scripted pass");
    EXPECT_GT(run.throughput, 0);
  }
  ASSERT_TRUE(rec.score.value);
  EXPECT_EQ(rec.score.method, "median of 3");

  auto events = read_log(dir_ / rec.runs[0].log_file);
  EXPECT_EQ(events.back()["key"], "run_stop");
  EXPECT_EQ(events.back()["metadata"]["status"], "success");
  bool gate_logged = false, mode_logged = false;
  for (const auto& e : events) {
    EXPECT_NE(e["key"], "eval_accuracy");
    if (e["key"] == "perflab_correctness") gate_logged = e["value"] == true;
    if (e["key"] == "perflab_mode") mode_logged = e["value"] == "throughput";
  }
  EXPECT_TRUE(gate_logged);
  EXPECT_TRUE(mode_logged);
}

TEST_F(RunnerTest, FailedCorrectnessGateFailsTheRunAndTheScore) {
  Script s;
  s.gate_passes = false;
  InvocationRecord rec = run_benchmark(throughput_spec(2, 3), scripted(s), dir_, "test platform");
  const RunRecord& run = rec.runs[0];
  EXPECT_FALSE(run.success);
  EXPECT_EQ(run.status, "aborted");
  EXPECT_EQ(run.reason, "correctness gate failed: scripted failure");
  EXPECT_FALSE(rec.score.value);
  EXPECT_NE(rec.score.reason.find("correctness gate failed"), std::string::npos) << rec.score.reason;
  auto events = read_log(dir_ / run.log_file);
  EXPECT_EQ(events.back()["metadata"]["status"], "aborted");
}

TEST_F(RunnerTest, DeviceTimerTimesIterationsInThroughputAndTimeToTrain) {
  Script s;
  s.device = true;
  FakeDeviceOps ops;
  InvocationRecord tp = run_benchmark(throughput_spec(1, 5), scripted(s), dir_, "test platform", &ops);
  EXPECT_TRUE(tp.runs[0].device_timed);
  EXPECT_EQ(tp.runs[0].iteration_ms.n, 5u);
  EXPECT_DOUBLE_EQ(tp.runs[0].iteration_ms.p50, 2.0);
  EXPECT_EQ(tp.runs[0].host_iteration_ms.n, 5u);

  InvocationRecord ttt = run_benchmark(spec_with_seeds(1), scripted(s), dir_, "test platform", &ops);
  const RunRecord& run = ttt.runs[0];
  EXPECT_TRUE(run.device_timed);
  EXPECT_EQ(run.iteration_ms.n, 13u);  // 15 iterations minus 2 of warm-up
  EXPECT_DOUBLE_EQ(run.iteration_ms.max, 2.0);
  EXPECT_DOUBLE_EQ(run.train_s, 15 * 2.0 / 1e3);  // device time, warm-up included
}

TEST_F(RunnerTest, TheHarnessCapturesAndReplaysADeviceStepAndRecordsIt) {
  Script s;
  s.device = true;
  FakeDeviceOps ops;
  RunSpec spec = throughput_spec(1, 6);
  spec.toggles[Toggle::kCudaGraphs] = {true, true, ""};
  InvocationRecord rec = run_benchmark(spec, scripted(s), dir_, "test platform", &ops);
  const RunRecord& run = rec.runs[0];
  ASSERT_TRUE(run.execution);
  EXPECT_TRUE(run.execution->graphs_used);
  EXPECT_EQ(run.execution->graphs_captured, 2);  // both variants, once
  EXPECT_EQ(run.execution->graph_replays, 6);    // 8 iterations minus 2 eager
  EXPECT_EQ(ops.captures, 2);
  EXPECT_EQ(ops.launches, 6);
  EXPECT_TRUE(rec.toggles[Toggle::kCudaGraphs].in_effect);
  ASSERT_TRUE(run.correctness);
  EXPECT_TRUE(run.correctness->passed) << run.correctness->detail;
  EXPECT_NE(run.correctness->detail.find("host syncs per iteration: 0"), std::string::npos)
      << run.correctness->detail;
}

TEST_F(RunnerTest, TheSpecsLaunchChecksAreSetBeforeTheWorkloadPrepares) {
  Script s;
  s.device = true;
  for (bool check : {true, false}) {
    FakeDeviceOps ops;
    RunSpec spec = throughput_spec(1, 2);
    spec.backend = Backend::kCuda;
    spec.check_launches = check;
    run_benchmark(spec, scripted(s), dir_, "test platform", &ops);
    EXPECT_EQ(ops.launch_checks, std::vector<bool>{check});
  }
  // The cpu backend launches nothing: nothing is set.
  FakeDeviceOps ops;
  run_benchmark(throughput_spec(1, 2), scripted(s), dir_, "test platform", &ops);
  EXPECT_TRUE(ops.launch_checks.empty());
}

TEST_F(RunnerTest, GraphsRequestedOnAStepThatSynchronisesAreRecordedAsNotInEffect) {
  Script s;
  s.device = true;
  s.step_syncs = 1;  // declared, but the fake counts none: the gate must fail too
  FakeDeviceOps ops;
  RunSpec spec = throughput_spec(1, 3);
  spec.toggles[Toggle::kCudaGraphs] = {true, true, ""};
  InvocationRecord rec = run_benchmark(spec, scripted(s), dir_, "test platform", &ops);
  const RunRecord& run = rec.runs[0];
  ASSERT_TRUE(run.execution);
  EXPECT_FALSE(run.execution->graphs_used);
  EXPECT_EQ(ops.captures, 0);
  EXPECT_FALSE(rec.toggles[Toggle::kCudaGraphs].in_effect);
  EXPECT_TRUE(rec.toggles[Toggle::kCudaGraphs].requested);
  EXPECT_NE(rec.toggles[Toggle::kCudaGraphs].reason.find("synchronises the host"), std::string::npos)
      << rec.toggles[Toggle::kCudaGraphs].reason;
  EXPECT_FALSE(run.success) << "0 counted syncs where the step declares 1 must fail the gate";
  EXPECT_NE(run.reason.find("VIOLATED"), std::string::npos) << run.reason;
}

TEST_F(RunnerTest, AProfiledThroughputRunAddsAWindowAndKeepsTheTimedOneClean) {
  FakeDeviceOps ops;
  Script s;
  s.device = true;
  s.ops = &ops;
  RunSpec spec = throughput_spec(1, 5);  // 2 warm-up iterations
  spec.profile = ProfileMode::kKernels;
  InvocationRecord rec = run_benchmark(spec, scripted(s), dir_, "test platform", &ops);
  const RunRecord& run = rec.runs[0];
  EXPECT_TRUE(run.success) << run.reason;
  EXPECT_EQ(run.iterations, 12);  // 2 warm-up + 5 profiled + 5 timed
  EXPECT_EQ(run.samples, 48);
  EXPECT_EQ(run.iteration_ms.n, 5u) << "the headline times are the unprofiled window's";
  EXPECT_EQ(ops.recordings, 2) << "the counted warm-up iteration, then the profiled window";
  ASSERT_TRUE(run.profile);
  const KernelProfile& p = *run.profile;
  EXPECT_EQ(p.iterations, 5);
  EXPECT_DOUBLE_EQ(p.kernels_per_iteration, 3);
  EXPECT_DOUBLE_EQ(*p.declared_kernels_per_iteration, 2);
  EXPECT_DOUBLE_EQ(p.iteration_us, 2000);  // the fake timer's 2 ms
  ASSERT_EQ(p.rows.size(), 3u);
  const KernelRow& forward = p.rows[0].name == "forward()" ? p.rows[0] : p.rows[1];
  EXPECT_EQ(forward.name, "forward()") << "demangled";
  EXPECT_DOUBLE_EQ(forward.us_per_iteration, 500);
  EXPECT_DOUBLE_EQ(forward.share, 0.25);
  EXPECT_EQ(forward.declared, "forward");
  EXPECT_DOUBLE_EQ(*forward.bytes, 1e6);
  EXPECT_FALSE(forward.x_floor) << "no device peaks in this context";
  EXPECT_EQ(p.peaks, "") << "the context's reason for having none";
  EXPECT_DOUBLE_EQ(*p.profiled_iteration_ms, 2.0);
  EXPECT_DOUBLE_EQ(*p.unprofiled_iteration_ms, 2.0);
  EXPECT_DOUBLE_EQ(*p.overhead(), 1.0);
  EXPECT_FALSE(run.activity) << "kernels only: no trace kept";
  ASSERT_TRUE(run.execution);
  EXPECT_EQ(run.execution->kernels_per_iteration, 3) << run.execution->launches_note;
  EXPECT_EQ(run.execution->launches_counted_at, 1);
  auto events = read_log(dir_ / run.log_file);
  for (const auto& e : events) {
    if (e["key"] == "block_stop") {
      EXPECT_EQ(e["metadata"]["samples_count"], 48) << "warm-up, profiled and timed samples";
    }
  }
}

// The profile's two medians come from their own windows: the profiled one
// (slower here, as the profiler may make it) and the timed one.
TEST_F(RunnerTest, TheProfilersCostIsTheProfiledOverTheTimedWindow) {
  FakeDeviceOps ops;
  ops.recording_ms = 3.0;
  Script s;
  s.device = true;
  s.ops = &ops;
  RunSpec spec = throughput_spec(1, 4);
  spec.profile = ProfileMode::kKernels;
  spec.warmup_iterations = 0;  // no counted warm-up iteration: only the window records
  InvocationRecord rec = run_benchmark(spec, scripted(s), dir_, "test platform", &ops);
  const RunRecord& run = rec.runs[0];
  ASSERT_TRUE(run.profile);
  EXPECT_DOUBLE_EQ(*run.profile->profiled_iteration_ms, 3.0);
  EXPECT_DOUBLE_EQ(*run.profile->unprofiled_iteration_ms, 2.0);
  EXPECT_DOUBLE_EQ(*run.profile->overhead(), 1.5);
  EXPECT_DOUBLE_EQ(run.profile->iteration_us, 3000);
  EXPECT_DOUBLE_EQ(run.iteration_ms.p50, 2.0) << "the headline time is the timed window's";
  EXPECT_EQ(ops.recordings, 1);
}

TEST_F(RunnerTest, AProfiledTraceKeepsTheRecordsWithTheHarnessPhases) {
  FakeDeviceOps ops;
  Script s;
  s.device = true;
  s.ops = &ops;
  RunSpec spec = throughput_spec(1, 3);
  spec.profile = ProfileMode::kTrace;
  spec.toggles[Toggle::kCudaGraphs] = {true, true, ""};
  InvocationRecord rec = run_benchmark(spec, scripted(s), dir_, "test platform", &ops);
  const RunRecord& run = rec.runs[0];
  ASSERT_TRUE(run.activity);
  int kernels = 0, iterations = 0, windows = 0;
  for (const ActivityRecord& r : run.activity->records) {
    kernels += r.kind == ActivityKind::kKernel;
    if (r.kind == ActivityKind::kRange && r.name == std::string("iteration")) ++iterations;
    if (r.kind == ActivityKind::kRange && r.name == std::string("profiled window")) ++windows;
  }
  EXPECT_EQ(kernels, 9) << "three replayed graphs of three kernels";
  EXPECT_EQ(iterations, 3);
  EXPECT_EQ(windows, 1);
  ASSERT_TRUE(run.profile);
  EXPECT_DOUBLE_EQ(run.profile->kernels_per_iteration, 3);
}

TEST_F(RunnerTest, TimeToTrainDoesNotCountLaunchesAndSaysWhy) {
  FakeDeviceOps ops;
  Script s;
  s.device = true;
  s.ops = &ops;
  InvocationRecord rec = run_benchmark(spec_with_seeds(1), scripted(s), dir_, "test platform", &ops);
  ASSERT_TRUE(rec.runs[0].execution);
  EXPECT_FALSE(rec.runs[0].execution->kernels_per_iteration);
  EXPECT_NE(rec.runs[0].execution->launches_note.find("time-to-train"), std::string::npos);
  EXPECT_EQ(ops.recordings, 0);
}

}  // namespace
}  // namespace perflab
