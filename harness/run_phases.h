// The runner's phases, shared by its two modes (time-to-train in runner.cc,
// throughput in throughput_run.cc). Internal to the harness.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "harness/mllog.h"
#include "harness/run_spec.h"
#include "harness/runner.h"
#include "harness/workload.h"

namespace perflab::detail {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Times iterations on the host clock and, when the workload has one, on
/// its device timer. Iterations before `warmup` are run but not recorded.
class IterationTimes {
 public:
  IterationTimes(TrainingRun& run, int64_t warmup) : run_(run), warmup_(warmup) {}

  /// Runs iteration `iteration` and returns its host time in seconds.
  double time(int64_t iteration);
  /// Collects the device times issued so far (synchronises with the device).
  void collect();
  /// Fills iteration_ms, host_iteration_ms and device_timed.
  void summarize_into(RunRecord& rec);
  /// Sum of recorded device times in seconds (0 without a device timer).
  double device_seconds() const;

 private:
  TrainingRun& run_;
  int64_t warmup_;
  std::vector<double> host_ms_;
  std::vector<double> device_ms_;  ///< Every iteration's, warm-up included.
  int64_t device_pending_ = 0;
};

/// Runs a throughput-mode seed after init: warm-up, timed iterations, the
/// correctness gate, and their MLLOG events.
void run_throughput(const RunSpec& spec, const TrainingPlan& plan, TrainingRun& model,
                    MllogWriter& log, RunRecord& rec);

}  // namespace perflab::detail
