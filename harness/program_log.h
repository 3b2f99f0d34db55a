// What an external program's MLLOG says (harness/program.h), and the run
// record perflab makes of it: pure functions of the log's events and of how
// the process ended, so every verdict is testable without running anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/mllog_reader.h"
#include "harness/program.h"
#include "harness/result_model.h"
#include "harness/subprocess.h"

namespace perflab {

/// The facts of one program log.
struct ProgramLogFacts {
  /// The program was to write a log file and wrote none (`events` is 0).
  bool file_missing = false;
  size_t events = 0;
  size_t bad_lines = 0;
  std::string first_problem;  ///< "line N: what", for the first bad line.
  std::optional<double> init_start_ms, init_stop_ms, run_start_ms, run_stop_ms;
  int run_stops = 0;
  std::string run_stop_status;  ///< run_stop's metadata status ("" when none or not text).
  /// Every value of the quality key, in log order; `elapsed_s` counts from run_start.
  std::vector<ResultQualityPoint> curve;
  /// Samples per second the log states (`throughput`, or tracked_stats'
  /// throughput; the median when it states several).
  std::optional<double> stated_throughput;
  std::optional<int64_t> global_batch_size, train_samples, eval_samples;
  std::optional<int64_t> samples;  ///< The largest samples_count the log states.
  std::optional<double> epochs;    ///< The largest epoch_num the log states.
  /// The submission_* keys (benchmark, org, platform, division, status,
  /// poc_name, ...) with their first values: what the program says it is.
  nlohmann::json submission = nlohmann::json::object();
  std::string precision;  ///< lowest_numerical_precision_in_linear, when stated.
};

/// Reads the facts from a parsed log; `quality_key` names the metric.
ProgramLogFacts program_log_facts(const MllogFile& log, const std::string& quality_key);

/// How the compliance checker judged the log.
struct ComplianceOutcome {
  std::string status;  ///< "passed", "failed" or "not checked".
  std::string detail;  ///< The checker's first finding, or why it did not run.
};

/// The run one seed's program made, judged: status, reason, times and
/// counts from the log (time to train is run_start .. run_stop as the log
/// states it; without both, the process's wall time and the run failed).
/// The first failure found is the reason, in this order: the process was
/// stopped or timed out, it failed (non-zero exit or a signal), the log has
/// no event, no run_start, no or several run_stop, bad lines (a truncated
/// log), a run_stop status other than success, the target not reached, the
/// compliance check failed.
struct ProgramVerdict {
  bool success = false;
  std::string status;  ///< "success" or "aborted".
  std::string reason;
  double time_to_train_s = 0;
  double init_s = 0;
  int64_t samples = 0;
  std::optional<double> epochs;
  double throughput = 0;
  std::string throughput_source;  ///< "log: throughput", "samples over run time", or "none".
};

ProgramVerdict judge_program_run(const ProgramLogFacts& log, const ProcessOutcome& process,
                                 const ProgramQuality& quality, const ComplianceOutcome& compliance);

}  // namespace perflab
