// A set of result documents (result.json, schema v1) read from files and
// folders, and their runs grouped into points: one point per spec without
// its seeds, gathering every seed of that spec across files. Sweep reports
// (toggle matrix, batch-size sweep, renderers) are built on these points.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/run_mode.h"
#include "harness/scoring.h"
#include "harness/stats.h"
#include "harness/result_model.h"

namespace perflab::reports {

/// One valid result, read through the typed reader, and the file it came from.
struct LoadedResult {
  std::filesystem::path path;
  Result view;
};

/// Everything read by load_result_set: the valid results, in path order, and
/// one "path: reason" line per file that could not be used.
struct ResultSet {
  std::vector<LoadedResult> results;
  std::vector<std::string> skipped;
};

/// Reads result documents. Each path is a result file (any name) or a folder
/// searched recursively for files named result.json. A file that cannot be
/// read, is not JSON, has another schema_version or misses fields is not an
/// error: it goes into `skipped`. A path that does not exist throws
/// UsageError (the user's input). Files are read once each, sorted by path.
ResultSet load_result_set(const std::vector<std::filesystem::path>& paths);

/// One point of a quality curve.
struct CurvePoint {
  double epoch = 0;
  double value = 0;
};

/// One run (one seed) of a point, as recorded in a result's "runs" array.
struct RunEntry {
  uint64_t seed = 0;
  bool success = false;  ///< status == "success" (reached the target).
  std::string reason;    ///< Why it was aborted, when it was.
  double time_to_train_s = 0;
  double throughput = 0;  ///< Samples/s over training iterations.
  double epochs = 0;      ///< Epochs trained (to convergence when success).
  int64_t iterations = 0;
  double iteration_ms_mean = 0;
  size_t iteration_ms_n = 0;  ///< Timed iterations behind the mean (0: none).
  Summary iteration_ms;       ///< The run's iteration-time summary (n == 0: none).
  std::vector<CurvePoint> quality_curve;
  /// --mode inference: LoadGen's outcome of the run (ResultRun::inference); null otherwise.
  nlohmann::json inference;
  std::filesystem::path log;     ///< MLLOG file, resolved against the result's folder.
  std::filesystem::path result;  ///< The result file this run came from.
  std::optional<KernelProfile> profile;  ///< --profile's per-kernel table, when profiled.
};

/// A toggle as the results recorded it: requested, in effect, and why not.
using ToggleStatus = ResultToggle;

/// Every run of one spec (workload, preset, params, backend, threads,
/// toggles requested), across all result files of a set.
struct Point {
  /// The spec, typed, of the point's first result (its key fields are every
  /// result's of the point).
  ResultSpec spec;
  /// The identifying spec as a key (compared, ordered, and written as the
  /// point's id): {workload, preset, params, backend, threads,
  /// toggles_requested}; seeds, overrides and backend_requested left out.
  nlohmann::json key() const;
  /// What tells this point apart from the others in its set, e.g.
  /// "batch_size=512 cuda_graphs=on"; "workload preset" when nothing does.
  std::string label;
  /// The label's parts as (key, "key=value"); keys are "workload", "preset",
  /// "backend", "threads", a parameter name or a toggle name.
  std::vector<std::pair<std::string, std::string>> label_parts;
  std::vector<RunEntry> runs;                  ///< In file order, then run order.
  std::vector<ToggleStatus> toggles;           ///< From the first result of the point.
  ResultPlan plan;                               ///< From the first result of the point.
  RunMode kind = RunMode::kTimeToTrain;        ///< How its runs are scored.
  std::string batch_param;                     ///< The workload's batch-size parameter ("" when none).
  std::string learning_rate_param;             ///< Its learning-rate parameter ("" when none).
  std::string metric;                          ///< Quality metric name, e.g. "AUC".
  std::optional<double> target;                ///< Quality target; empty when there is none.
  std::vector<std::filesystem::path> sources;  ///< Result files of this point.

  /// The runs scored by the point's kind (harness/scoring.h): the olympic
  /// mean of the times to train (aborted runs count as slowest), or the
  /// median samples/s when every run passed its gate.
  Score score() const;
  /// The point's median samples/s as scoring rules it (harness/scoring.h):
  /// a throughput point's score (every run passed its gate), else the median
  /// of the runs that reached the target; empty when there is none.
  std::optional<double> median_throughput() const;
  /// A parameter as a double, when the spec has it and it is a number.
  std::optional<double> param_number(const std::string& key) const;
  /// Whether `key` names a toggle in this point's spec.
  bool is_toggle(const std::string& key) const;
  /// The toggles requested on, in the spec's order.
  std::vector<std::string> toggles_on() const;
  /// "workload preset=P" and the label parts whose key is not in `drop`: what
  /// a group of points varying only in `drop` has in common.
  std::string title_without(const std::vector<std::string>& drop) const;
};

/// Groups the runs of a set into points, sorted by workload, preset, params,
/// backend, threads, then toggles requested (all off first).
std::vector<Point> group_points(const ResultSet& set);

/// "on" / "off".
inline const char* on_off(bool b) { return b ? "on" : "off"; }

}  // namespace perflab::reports
