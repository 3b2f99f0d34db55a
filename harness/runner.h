// The runner owns the loops of one seed's run: the init and run phases,
// timing, the eval schedule and stop rule (time to train), the timed window
// and gate (throughput), device steps (harness/step_driver.h) and the MLLOG
// events. Workloads only compute. The invocation pipeline
// (harness/invocation.h) calls it once per seed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/kernel_profile.h"
#include "harness/program.h"
#include "harness/result_model.h"
#include "harness/run_context.h"
#include "harness/run_spec.h"
#include "harness/scoring.h"
#include "harness/stats.h"
#include "harness/step_driver.h"
#include "harness/workload.h"

namespace perflab {

struct WorkloadInfo;

/// One point of the quality curve, as the result records it.
using QualityPoint = ResultQualityPoint;

/// The record of one seed's run.
struct RunRecord {
  uint64_t seed = 0;
  bool success = false;
  std::string status;  ///< "success" or "aborted".
  std::string reason;  ///< Why it stopped.
  double init_s = 0;   ///< init_start .. init_stop.
  double time_to_train_s = 0;  ///< The log's run_stop - run_start (time_ms), MLPerf's reading.
  double train_s = 0;          ///< Time inside training iterations.
  double eval_s = 0;           ///< Time inside evaluations.
  int64_t iterations = 0;
  int64_t samples = 0;
  std::optional<double> epochs;  ///< Epochs trained (trainable workloads only).
  double throughput = 0;  ///< Samples per second (training iterations only).
  /// Per-iteration times after warm-up: on the device (CUDA events) when the
  /// workload runs on one, else on the host clock.
  Summary iteration_ms;
  /// Host (CPU) time per iteration after warm-up: the time the iteration
  /// call took to return (launch cost on a device backend).
  Summary host_iteration_ms;
  bool device_timed = false;  ///< iteration_ms comes from device events.
  /// Throughput mode: wall time of the timed iterations (device finished).
  double measured_s = 0;
  /// Throughput mode: the correctness gate's outcome.
  std::optional<CorrectnessReport> correctness;
  /// What the device step did (graphs captured and replayed, host syncs);
  /// empty when iterations ran on the host.
  std::optional<ExecutionRecord> execution;
  /// What the step said of its toggles as it ran (TimedStep::toggle_outcomes).
  std::vector<std::pair<Toggle, ToggleState>> toggle_outcomes;
  /// What the step learned as it ran (TimedStep::run_facts), "facts" in the result.
  nlohmann::json facts = nlohmann::json::object();
  /// Its parts timed alone (TimedStep::time_parts), "parts" in the result.
  std::vector<ResultPart> parts;
  std::vector<QualityPoint> quality_curve;
  std::string log_file;  ///< Relative to the invocation directory.
  /// --profile: the per-kernel table of the profiled window (this rank's
  /// device; rank 0's is the one written).
  std::optional<KernelProfile> profile;
  /// --profile trace: the window's records, written as a Chrome trace
  /// beside the result (not into result.json).
  std::optional<ActivityLog> activity;
  /// An external workload's program: what ran and how it ended.
  std::optional<ResultProgram> program;
  /// --mode inference: LoadGen's outcome, the batches and LoadGen's folder.
  std::optional<nlohmann::json> inference;

  /// What scoring needs (harness/scoring.h).
  RunOutcome outcome() const { return {seed, success, time_to_train_s, throughput, reason}; }
};

/// Everything an invocation produced, before serialisation.
struct InvocationRecord {
  RunSpec spec;
  /// The toggles as they ran: cuda_graphs is in effect only when a run
  /// replayed captured graphs (otherwise off, with what happened instead).
  ToggleSet toggles;
  StepPlan step;
  std::optional<TrainingPlan> training;  ///< Trainable workloads only.
  double prepare_s = 0;  ///< Data preparation, once per invocation.
  std::vector<RunRecord> runs;
  Score score;
  /// The signal that interrupted the invocation ("SIGINT"), empty when none
  /// did: the runs so far are kept, there is no score.
  std::string interrupted;
};

/// What the runner tells its observer (the CLI's progress display).
struct ProgressEvent {
  enum class Kind { kPrepared, kRunStarted, kEvaluated, kRunFinished } kind;
  size_t run_index = 0;
  size_t run_count = 0;
  const RunRecord* run = nullptr;  ///< The run so far (for kEvaluated, kRunFinished).
};
using ProgressObserver = std::function<void(const ProgressEvent&)>;

/// A workload configured for a spec: data prepared, plans known, the
/// roofline floor applied. Shared by every seed run on it.
struct PreparedBenchmark {
  std::unique_ptr<Benchmark> bench;
  /// The same benchmark when the workload is trainable (its factory's type), else null.
  TrainableBenchmark* trainable = nullptr;
  /// An external workload's program (then `bench` is null; harness/program_run.h).
  std::unique_ptr<Program> program;
  StepPlan step;
  std::optional<TrainingPlan> training;
  double prepare_s = 0;
};

/// Creates the workload's Benchmark for the context's spec (prepares its
/// data) and applies the roofline floor from the context's device peaks.
PreparedBenchmark prepare_benchmark(const RunContext& ctx, const WorkloadInfo& info);

/// Runs one seed in the spec's mode (to the target, or timed iterations and
/// the gate), writing its MLLOG to `log_path` (rank 0 only). `on_eval` sees
/// the record after each evaluation.
RunRecord run_seed(const RunContext& ctx, PreparedBenchmark& prepared, uint64_t seed,
                   const std::filesystem::path& log_path, const std::string& platform,
                   const std::function<void(const RunRecord&)>& on_eval = {});

/// The score of a set of runs in `mode` (harness/scoring.h).
Score score_records(const std::vector<RunRecord>& runs, RunMode mode);

/// The toggles as they ran: `spec`'s, with cuda_graphs turned off (and the
/// reason) when no run replayed a captured graph.
ToggleSet toggles_as_run(const ToggleSet& spec, const std::vector<RunRecord>& runs);

}  // namespace perflab
