// The runner's phases, shared by its two modes (time to train in runner.cc,
// throughput in throughput_run.cc). Internal to the harness.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "collectives/communicator.h"
#include "harness/mllog.h"
#include "harness/phase.h"
#include "harness/runner.h"
#include "harness/step_driver.h"
#include "harness/workload.h"

namespace perflab::detail {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// A run's time to train: its log's run_stop minus run_start (time_ms), as
/// MLPerf's result summarizer reads it from the same two lines.
inline double logged_seconds(int64_t run_start_ms, int64_t run_stop_ms) {
  return static_cast<double>(run_stop_ms - run_start_ms) / 1e3;
}

/// One seed's step as the harness drives it: host iterations, or the
/// workload's DeviceStep through a StepDriver (warm-up, graphs, sync
/// counting, CUDA-event timing).
class SeedStep {
 public:
  SeedStep(TimedStep& step, const RunContext& ctx);
  /// Stops a profiled window an error left open (CUPTI recording, the
  /// phase recording), so the process's next run can record again.
  ~SeedStep();
  SeedStep(const SeedStep&) = delete;
  SeedStep& operator=(const SeedStep&) = delete;
  void iterate(int64_t iteration);
  /// Waits for the device (window boundaries only); nothing on the host.
  void synchronize();
  /// The device timer, or null for host iterations.
  DeviceIterationTimer* timer();
  /// What the device step did; empty for host iterations.
  std::optional<ExecutionRecord> execution() const;
  TimedStep& step() { return step_; }
  /// The parts the step names, timed alone by the harness (collective:
  /// none when a signal stopped any rank). Per-iteration samples leave out
  /// the first `warmup` iterations.
  std::vector<ResultPart> time_parts(collectives::Communicator& comm, int64_t warmup);

  /// A profiled window (device steps only): device activity, the harness's
  /// phase ranges on the activity's clock and the launches the step
  /// declares, from now until stop_profile.
  void start_profile();
  /// Waits for the device and ends the window: every record (ranges
  /// included) and the declared launches of its iterations.
  std::pair<ActivityLog, LaunchPlan> stop_profile();

 private:
  TimedStep& step_;
  std::unique_ptr<DeviceOps> ops_;
  std::unique_ptr<StepDriver> driver_;
  std::unique_ptr<PhaseRecording> phases_;
};

/// Iterations of the profiled window a throughput run adds (--profile):
/// as many as it times, run after the timed window (so its headline
/// numbers are taken before the profiler starts).
int64_t profiled_iterations(const RunSpec& spec);

/// Times iterations on the host clock and, when the step has one, on its
/// device timer. Iterations before `warmup` are run but not recorded. The
/// per-iteration times are reduced across ranks (the slowest rank's time).
class IterationTimes {
 public:
  IterationTimes(SeedStep& step, int64_t warmup, collectives::Communicator& comm,
                 RankTimes rank_times = RankTimes::kMax)
      : step_(step), warmup_(warmup), comm_(comm), rank_times_(rank_times) {}

  /// Runs iteration `iteration` and returns its host time in seconds.
  double time(int64_t iteration);
  /// Collects the device times issued so far (synchronises with the device).
  void collect();
  /// Fills iteration_ms, host_iteration_ms and device_timed.
  void summarize_into(RunRecord& rec);
  /// Sum of recorded device times in seconds (0 without a device timer).
  double device_seconds() const;

 private:
  /// Each iteration's time becomes the ranks' combined time (rank_times_).
  void combine_across_ranks(std::vector<double>& ms);

  SeedStep& step_;
  int64_t warmup_;
  collectives::Communicator& comm_;
  RankTimes rank_times_;
  std::vector<double> host_ms_;
  std::vector<double> device_ms_;  ///< Every iteration's, warm-up included.
  int64_t device_pending_ = 0;
};

/// Ends a run's gate: a device step must have made exactly the host syncs
/// it declares (sync-free: none); the execution record joins the detail.
void add_execution_to_gate(const std::optional<ExecutionRecord>& execution, CorrectnessReport& gate);

/// Runs a throughput-mode seed after init: warm-up, timed iterations, the
/// correctness gate, and their MLLOG events up to run_stop (run_start was
/// logged at `run_start_ms`).
void run_throughput(const RunContext& ctx, const PreparedBenchmark& prepared, SeedStep& step,
                    MllogWriter& log, int64_t run_start_ms, RunRecord& rec);

}  // namespace perflab::detail
