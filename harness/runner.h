// The runner owns the loop of a train-to-target benchmark: seeds, the init
// and run phases, timing, the eval schedule, the stop rule and the MLLOG
// events. Workloads only compute.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/run_spec.h"
#include "harness/stats.h"
#include "harness/workload.h"

namespace perflab {

struct WorkloadInfo;

/// One point of the quality curve.
struct QualityPoint {
  double epoch = 0;        ///< Fractional epochs trained.
  int64_t samples = 0;     ///< Samples trained.
  double value = 0;        ///< Quality metric.
  double train_loss = 0;   ///< Mean training loss since the previous point.
  double elapsed_s = 0;    ///< Since run_start.
};

/// The record of one seed's run.
struct RunRecord {
  uint64_t seed = 0;
  bool success = false;
  std::string status;  ///< "success" or "aborted".
  std::string reason;  ///< Why it stopped.
  double init_s = 0;   ///< init_start .. init_stop.
  double time_to_train_s = 0;  ///< run_start .. run_stop (steady clock).
  double train_s = 0;          ///< Time inside training iterations.
  double eval_s = 0;           ///< Time inside evaluations.
  int64_t iterations = 0;
  int64_t samples = 0;
  double epochs = 0;
  double throughput = 0;  ///< Training samples per second (iterations only).
  /// Per-iteration times after warm-up: on the device (CUDA events) when the
  /// workload runs on one, else on the host clock.
  Summary iteration_ms;
  /// Host (CPU) time per iteration after warm-up: the time the training
  /// iteration call took to return (launch cost on a device backend).
  Summary host_iteration_ms;
  bool device_timed = false;  ///< iteration_ms comes from device events.
  /// Throughput mode: wall time of the timed iterations (device finished).
  double measured_s = 0;
  /// Throughput mode: the correctness gate's outcome.
  std::optional<CorrectnessReport> correctness;
  std::vector<QualityPoint> quality_curve;
  std::string log_file;  ///< Relative to the invocation directory.
};

/// Everything an invocation produced, before serialisation.
struct InvocationRecord {
  RunSpec spec;
  TrainingPlan plan;
  double prepare_s = 0;  ///< Data preparation, once per invocation.
  std::vector<RunRecord> runs;
  Score score;
};

/// What the runner tells its observer (the CLI's progress display).
struct ProgressEvent {
  enum class Kind { kPrepared, kRunStarted, kEvaluated, kRunFinished } kind;
  size_t run_index = 0;
  size_t run_count = 0;
  const RunRecord* run = nullptr;  ///< The run so far (for kEvaluated, kRunFinished).
};
using ProgressObserver = std::function<void(const ProgressEvent&)>;

/// A workload configured for a spec: data prepared, plan known. Shared by
/// every seed run on it.
struct PreparedBenchmark {
  std::unique_ptr<Benchmark> bench;
  TrainingPlan plan;
  double prepare_s = 0;
};

/// Creates the workload's Benchmark for `spec` (prepares its data).
PreparedBenchmark prepare_benchmark(const RunSpec& spec, const WorkloadInfo& info);

/// Trains one seed to the target (or until the stop rule aborts), writing
/// its MLLOG to `log_path`. `on_eval` sees the record after each evaluation.
RunRecord run_seed(const RunSpec& spec, PreparedBenchmark& prepared, uint64_t seed,
                   const std::filesystem::path& log_path, const std::string& platform,
                   const std::function<void(const RunRecord&)>& on_eval = {});

/// The score of a set of runs. Time to train: MLPerf's olympic mean (failed
/// runs count as slowest). Throughput: the median samples/s, only when
/// every run passed its correctness gate.
Score score_runs(const std::vector<RunRecord>& runs, RunMode mode = RunMode::kTimeToTrain);

/// Runs every seed of `spec`, writing one MLLOG file per run into `dir`.
/// `platform` is logged as submission_platform.
InvocationRecord run_benchmark(const RunSpec& spec, const WorkloadInfo& info,
                               const std::filesystem::path& dir, const std::string& platform,
                               const ProgressObserver& observer = {});

}  // namespace perflab
