// MLPerf training results as input to compare, history and their scores:
// result folders as MLCommons publishes them
// (results/<system>/<benchmark>/result_*.txt), any folder holding such
// files, and single MLLOG files. Scored as mlperf_logging's result
// summarizer does: a run's time is run_start to run_stop in minutes; a run
// that did not finish with status "success" (or whose log has a bad
// :::MLLOG line) is dropped and counts as the slowest; the benchmark's
// number of dropped scores (4 for unet3d, 1 otherwise) is cut from each
// end (less the failures at the slow end) and the rest averaged; more
// failures than that gives no score. With reference convergence points
// for the benchmark (the mlperf-logging package ships them), the score is
// also normalised as the summarizer's RCP pass does: when the runs pass the
// check but converge faster on average than the reference, times the
// factor RCP mean / submission mean.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/mlperf_benchmarks.h"
#include "reports/metric_samples.h"
#include "harness/mllog_reader.h"
#include "reports/rcp.h"

namespace perflab::reports {

/// One result file.
struct MlperfRun {
  std::filesystem::path file;
  bool ok = false;          ///< Finished with status "success" and every :::MLLOG line parsed.
  std::string problem;      ///< Why not, when not ok.
  double minutes = 0;       ///< run_start to run_stop.
  std::string benchmark;    ///< submission_benchmark (else the folder's name).
  std::optional<int64_t> global_batch_size;
  /// Epochs (or samples, for the benchmarks the rcp_checker counts in
  /// samples) to converge: the last eval_accuracy before run_stop.
  std::optional<double> converged_at;
};

/// One benchmark of one system, scored.
struct MlperfScore {
  std::string system, benchmark;
  std::vector<MlperfRun> runs;
  size_t failed = 0;
  size_t dropped_each_end = 1;             ///< The benchmark's dropped scores.
  std::optional<double> olympic_minutes;   ///< Raw score.
  std::string no_score_reason;
  std::optional<double> normalized_minutes;  ///< With the RCP factor (when RCPs were given).
  double rcp_factor = 1;
  std::string rcp_note;  ///< What the RCP check said, or why it did not run.
};

/// mlperf_logging's dropped scores: 4 for unet3d, 1 for every other benchmark.
size_t mlperf_dropped_scores(const std::string& benchmark);

// The summarizer's olympic average is mlperf_olympic_average
// (harness/scoring.h), with the benchmark's facts (harness/mlperf_benchmarks.h).

/// A run from a parsed log (`benchmark` is used when the log names none).
MlperfRun mlperf_run(const MllogFile& log, const std::filesystem::path& file, const std::string& benchmark);

/// Whether `path` is MLPerf input: a file that is not named *.json, or a
/// folder with result_*.txt files below it and no result.json.
bool is_mlperf_input(const std::filesystem::path& path);

/// Where a benchmark's RCPs come from when no --rcps is given: mlperf_logging's
/// own (rcp_checker/training_<version>/rcps_<benchmark>.json), for the version
/// a component of the results' path names ("training_results_v4.0" -> 4.0.0;
/// none when that version has none for the benchmark, as its summarizer),
/// else (no version named, or one the package lacks) the newest version that
/// has the benchmark. `path` empty with `note`
/// saying why when there are none (mlperf_logging not installed: how to
/// install it; no RCPs for the benchmark).
struct RcpSource {
  std::filesystem::path path;
  std::string note;  ///< "mlperf_logging's training_4.0.0 RCPs (from the path's v4.0)"
};
RcpSource default_rcps(const std::filesystem::path& results, const std::string& benchmark);

/// The same choice in a given rcp_checker folder (testable without the package).
RcpSource default_rcps_in(const std::filesystem::path& rcp_checker, const std::filesystem::path& results,
                          const std::string& benchmark);

/// --rcps's value that turns normalisation off.
inline constexpr const char* kNoRcps = "none";

/// Reads and scores MLPerf input. `rcps` is an RCP file, or a folder with
/// rcps_<benchmark>.json files (the layout of mlperf_logging's
/// rcp_checker/training_<version>/), "none" for no normalisation, or empty
/// for mlperf_logging's own (default_rcps). Throws UsageError for a path that
/// holds no result file.
std::vector<MlperfScore> load_mlperf(const std::filesystem::path& path, const std::filesystem::path& rcps = {});

/// Per system and benchmark: time_to_train_min (a value per successful
/// run), score_min (the olympic average) and, when normalised,
/// normalized_score_min.
std::vector<MetricSamples> mlperf_metric_samples(const std::vector<MlperfScore>& scores);

/// "resnet on sys1: 10 runs, 0 failed; olympic mean 27.310000 min; normalised 28.020060 min (RCP factor
/// 1.026000)"; then what the RCP check said.
std::string mlperf_score_line(const MlperfScore& s);

/// A Markdown page of scores: one row per system and benchmark (runs,
/// failed, raw olympic mean, normalised score, RCP note), then each run.
std::string render_mlperf_scores_markdown(const std::vector<MlperfScore>& scores, const std::string& title);

}  // namespace perflab::reports
