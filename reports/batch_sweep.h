// The batch-size sweep: for points that differ only in batch_size (and the
// learning-rate schedule that follows it), per batch size: iterations per
// epoch, epochs and iterations to converge, iteration time and time to train.
// This is the trade-off MLPerf teams tune: larger batches give faster
// iterations per sample but need more epochs to reach the target.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/scoring.h"
#include "reports/result_set.h"

namespace perflab::reports {

/// Schedule parameters allowed to change together with the batch size inside
/// one sweep (retuned per batch size), besides the batch-size and
/// learning-rate parameters each workload declares (spec.batch_param,
/// spec.learning_rate_param).
inline constexpr std::array<const char*, 6> kBatchCoupledParams = {
    "batch_size", "learning_rate", "lr", "warmup_steps", "decay_start_step", "decay_steps"};

/// One batch size of a sweep (one point).
struct BatchSweepRow {
  std::string point_label;
  int64_t batch_size = 0;
  std::optional<double> learning_rate;  ///< The "learning_rate" parameter, when present.
  int64_t iterations_per_epoch = 0;     ///< From the plan.
  size_t runs = 0;
  size_t converged = 0;                   ///< Runs that reached the target.
  std::optional<double> epochs_mean;      ///< Over converged runs; empty if none.
  std::optional<double> epochs_stddev;    ///< Sample stddev; empty with fewer than 2.
  std::optional<double> iterations_mean;  ///< Over converged runs; empty if none.
  std::optional<double> iteration_ms;     ///< Mean of the runs' iteration_ms.mean.
  Score time_to_train;                    ///< Olympic mean; aborted runs count as slowest.
  bool best = false;                      ///< Lowest time to train of its sweep.
};

/// One sweep: points sharing everything but batch_size and its coupled params.
struct BatchSweep {
  std::string title;                ///< What the rows share.
  std::vector<BatchSweepRow> rows;  ///< By increasing batch size.
  /// Index of the best row, when any row has a score.
  std::optional<size_t> best;
};

/// One sweep per group of points with at least two distinct batch sizes;
/// `points` as group_points returns them.
std::vector<BatchSweep> batch_sweeps(const std::vector<Point>& points);

}  // namespace perflab::reports
