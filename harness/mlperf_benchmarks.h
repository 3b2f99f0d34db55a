// MLPerf Training's per-benchmark scoring facts in one table, as
// mlperf_logging keeps them (rcp_checker's submission_runs, the result
// summarizer's and rcp_checker's olympic drop, what counts as convergence):
// every olympic mean, RCP build, RCP check and normalisation reads them from
// here.
#pragma once

#include <cstddef>
#include <string_view>

namespace perflab {

struct MlperfBenchmarkFacts {
  std::string_view name;
  /// Runs a submission needs (the t-test's submission sample count is this
  /// minus 2; an interpolated RCP counts twice this).
  size_t submission_runs = 0;
  /// Scores (and RCP values, and submission epochs) dropped from each end
  /// of the sorted list by the olympic mean: 4 for unet3d, 1 otherwise. As
  /// many runs may fail (they count as the slowest).
  size_t dropped_each_end = 1;
  /// Convergence is counted in samples (eval samples_count), not epochs.
  bool counts_samples = false;
};

/// The facts of `benchmark`; a benchmark MLPerf does not list (a perflab
/// workload) gets submission_runs 0 (the runs given), drop 1, epochs.
MlperfBenchmarkFacts mlperf_benchmark(std::string_view benchmark);

}  // namespace perflab
