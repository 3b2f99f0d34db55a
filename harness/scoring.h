// Scoring, in one place: the runner, sweeps, reports, the MLPerf result
// folders and the RCP check all take their scores from here and never
// compute one themselves. A time-to-train score is MLPerf's olympic mean
// (the per-benchmark drop from harness/mlperf_benchmarks.h), a throughput
// score the median of runs that all passed their correctness gate, and an
// MLPerf score is normalised by the RCP factor computed here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/run_mode.h"

namespace perflab {

/// The score of a set of runs, MLPerf style.
struct Score {
  std::optional<double> value;  ///< Empty when there is no score.
  std::string method;           ///< "olympic mean of N", "mean of N", "median of N".
  std::string reason;           ///< Why there is no score, when empty.
};

/// What scoring needs of one run.
struct RunOutcome {
  uint64_t seed = 0;
  bool success = false;        ///< Reached the target (time to train) or passed its gate (throughput).
  double time_to_train_s = 0;  ///< run_start .. run_stop.
  double throughput = 0;       ///< Samples per second over the timed iterations.
  std::string reason;          ///< Why it failed, when it did.
};

/// MLPerf's olympic average (the result summarizer's, and the rcp_checker's
/// means): sort `values` (the successful runs'), drop `dropped_each_end` from
/// the fast end and dropped_each_end - failed from the slow end (failures
/// are the slowest), average the rest. Nullopt when failed >
/// dropped_each_end or nothing is left.
std::optional<double> mlperf_olympic_average(std::vector<double> values, size_t failed,
                                             size_t dropped_each_end);

/// perflab's time-to-train score over per-run times: the olympic average
/// dropping one from each end, a failed run (nullopt) counting as the
/// slowest; more than one failure gives no score. With fewer than 3 runs
/// nothing can be dropped: the plain mean of all runs, when all succeeded.
Score olympic_mean(const std::vector<std::optional<double>>& times);

/// Time to train: olympic_mean of the times, failed runs counting as the
/// slowest. Throughput: the median samples/s, only when every run passed
/// its correctness gate; otherwise no score, with the first failed seed's
/// reason.
Score score_runs(const std::vector<RunOutcome>& runs, RunMode mode);

/// The median samples/s of the runs that passed their gate (reached the
/// target, or passed the correctness check): what a time-to-train point's
/// throughput column shows. Empty when none passed.
std::optional<double> median_passing_throughput(const std::vector<RunOutcome>& runs);

/// MLPerf's RCP normalisation factor for a submission that passed its RCP
/// check: max(1, rcp_mean / submission_mean) (both olympic means of epochs
/// or samples to converge). A submission converging faster than the
/// reference is scaled up to it; a slower one keeps its time.
double rcp_normalization_factor(double rcp_mean, double submission_mean);

/// The published score: the raw olympic mean times the RCP factor.
std::optional<double> normalized_score(const std::optional<double>& raw, double factor);

}  // namespace perflab
