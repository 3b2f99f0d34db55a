// Scoring a set of runs (one per seed) by the mode they ran in: the one
// place a score is computed, for the runner, sweeps, reports and RCP.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/run_mode.h"
#include "harness/stats.h"

namespace perflab {

/// What scoring needs of one run.
struct RunOutcome {
  uint64_t seed = 0;
  bool success = false;        ///< Reached the target (time to train) or passed its gate (throughput).
  double time_to_train_s = 0;  ///< run_start .. run_stop.
  double throughput = 0;       ///< Samples per second over the timed iterations.
  std::string reason;          ///< Why it failed, when it did.
};

/// Time to train: MLPerf's olympic mean of the times, failed runs counting
/// as the slowest (olympic_mean). Throughput: the median samples/s, only
/// when every run passed its correctness gate; otherwise no score, with the
/// first failed seed's reason.
Score score_runs(const std::vector<RunOutcome>& runs, RunMode mode);

}  // namespace perflab
