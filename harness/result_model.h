// The result model: the one set of types for a result document
// (result.json), with its to-JSON and from-JSON beside them. The runner's
// record becomes a Result (harness/result.h's result_of) and is written by
// to_json; every reader (reports, compare, history, export, rerun, sweeps)
// reads a Result through parse_result/read_result and never looks fields up
// by name itself. Which schema versions are readable is decided once
// (result_schema_readable); the differences between them are absorbed by
// the reader. docs/result.schema.json describes what to_json writes, and a
// test checks the two against each other.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/kernel_profile.h"
#include "harness/run_mode.h"
#include "harness/stats.h"

namespace perflab {

/// Bumped whenever a field changes meaning or is removed. Version 2: plan's
/// training fields are null for workloads that do not train, spec names the
/// batch-size and learning-rate parameters, runs record their execution
/// (graphs, host syncs) and may have null epochs.
inline constexpr int kResultSchemaVersion = 2;
/// The oldest version readers still accept (results from earlier perflabs).
inline constexpr int kOldestReadableResultSchemaVersion = 1;

/// Whether this perflab reads results of schema `version`: the one place
/// that decides, for the harness and every report.
inline bool result_schema_readable(int64_t version) {
  return version >= kOldestReadableResultSchemaVersion && version <= kResultSchemaVersion;
}

/// A toggle as the result recorded it: requested, and in effect as it ran.
struct ResultToggle {
  std::string name;  ///< "cuda_graphs", "sharp", "sync_free", "fused".
  bool requested = false;
  bool in_effect = false;
  std::string reason;  ///< Why in effect differs from requested (or what happened instead).
};

/// The resolved spec: what `perflab rerun` runs again.
struct ResultSpec {
  std::string workload;
  std::string preset;
  std::map<std::string, std::string> overrides;  ///< --set key=value, as given.
  nlohmann::json params = nlohmann::json::object();  ///< Name -> value, as resolved (typed by the workload).
  std::string backend_requested;
  std::string backend;
  std::string backend_reason;
  std::vector<std::pair<std::string, bool>> toggles_requested;  ///< In the document's order.
  std::vector<uint64_t> seeds;
  std::optional<int> threads;
  std::optional<int> ranks;  ///< Absent in results from before ranks were recorded.
  int warmup_iterations = 0;
  RunMode mode = RunMode::kTimeToTrain;
  int iterations = 0;
  std::string batch_param;          ///< Empty when the workload has none (v1: "batch_size" when present).
  std::string learning_rate_param;  ///< Likewise ("learning_rate" in v1).
  std::string profile = "off";      ///< --profile: off, kernels or trace.
  /// An external workload's file (absolute; harness/program.h), which
  /// `perflab rerun` and SLURM jobs load again; empty for a built-in one.
  std::string workload_file;
  bool check_launches = false;  ///< --check-launches (written only when on).
  /// --mode inference: LoadGen's settings (inference_settings_to_json);
  /// null otherwise, and then not written.
  nlohmann::json inference;

  /// A parameter as a number, when present and numeric.
  std::optional<double> param_number(const std::string& name) const;
};

struct ResultPlan {
  int64_t global_batch_size = 0;
  std::string precision;
  std::string sample_unit = "samples";
  nlohmann::json hyperparameters = nlohmann::json::object();  ///< The workload's, free-form.
  nlohmann::json data = nlohmann::json::object();             ///< Its data's description, free-form.
  // Training fields: absent for workloads that do not train.
  std::optional<int64_t> train_samples;
  std::optional<int64_t> eval_samples;
  std::optional<int64_t> iterations_per_epoch;
  std::optional<int64_t> max_epochs;
  std::optional<double> eval_interval_epochs;
};

/// Achieved rates at the median iteration time, and the roofline floor.
struct ResultWork {
  bool recorded = false;  ///< The result has a work section (the earliest version-1 files do not).
  double flops_per_iteration = 0;
  double bytes_per_iteration = 0;
  std::optional<double> floor_ms;
  std::string floor_basis;
  std::optional<double> median_iteration_ms;
  std::optional<double> achieved_tflops;
  std::optional<double> achieved_gbytes_per_s;
  std::optional<double> times_floor;
};

/// Time to train: metric, target and ceiling. Throughput: the correctness
/// gate, no target.
struct ResultQuality {
  std::string metric;
  std::optional<double> target;
  std::optional<double> ceiling;
};

struct ResultQualityPoint {
  double epoch = 0;       ///< Fractional epochs trained.
  int64_t samples = 0;    ///< Samples trained.
  double value = 0;       ///< Quality metric.
  double train_loss = 0;  ///< Mean training loss since the previous point.
  double elapsed_s = 0;   ///< Since run_start.
};

struct ResultCorrectness {
  bool passed = false;
  std::string detail;
};

/// What a device step did (schema 2; absent for host iterations and v1).
struct ResultExecution {
  bool graphs_used = false;
  int64_t graphs_captured = 0;
  int64_t graph_replays = 0;
  std::string graphs_note;
  int64_t syncs_min = 0;
  int64_t syncs_max = 0;
  std::optional<int64_t> syncs_expected;
  /// Kernels, copies and memsets of one iteration (counted by CUPTI over a
  /// warm-up iteration) and the kernels the step declares; empty when not
  /// counted (launches_note says why) or in files from before.
  std::optional<int64_t> kernels_per_iteration, copies_per_iteration, memsets_per_iteration;
  std::optional<int64_t> declared_kernels_per_iteration;
  std::optional<int64_t> launches_counted_at;  ///< The warm-up iteration counted.
  std::string launches_note;
};

/// A part of the step timed alone by the harness (harness/part_timer.h).
struct ResultPart {
  std::string name;        ///< The workload's name for it ("transfer", "compute", ...).
  double ms = 0;           ///< Median repetition, the slowest rank's.
  int64_t repetitions = 0; ///< Repetitions (or iterations) behind the median.
  std::string clock;       ///< "host clock", "cuda events", or how it was measured.
};

/// How an external program's run went (harness/program.h): what was run,
/// how it ended and what its log says it is.
struct ResultProgram {
  std::vector<std::string> command;  ///< The argument list, placeholders filled in.
  /// The environment the workload file added (perflab's own is the result's environment).
  std::vector<std::pair<std::string, std::string>> env;
  std::optional<int> exit_status;  ///< Absent when a signal ended it.
  std::string signal;              ///< "SIGKILL", ..., empty when it exited.
  bool timed_out = false;
  double wall_s = 0;        ///< Start to end of the process.
  std::string stdout_file;  ///< Relative to the result's folder.
  std::string stderr_file;
  std::string log_source;   ///< "file" (it wrote {mllog}) or "output" (read from its output).
  std::string compliance;   ///< "passed", "failed" or "not checked".
  std::string compliance_detail;
  std::string throughput_source;  ///< "log: throughput", "samples over run time" or "none".
  /// The submission_* keys its log states (what the program says it is and runs on).
  nlohmann::json submission = nlohmann::json::object();
};

struct ResultRun {
  uint64_t seed = 0;
  std::string status;  ///< "success" or "aborted".
  std::string reason;
  double init_s = 0;
  double time_to_train_s = 0;
  double train_s = 0;
  double eval_s = 0;
  int64_t iterations = 0;
  int64_t samples = 0;
  std::optional<double> epochs;
  double throughput = 0;  ///< Samples per second.
  Summary iteration_ms;
  Summary host_iteration_ms;
  std::string iteration_timer = "host clock";  ///< "host clock" or "cuda events" ("-" in files from before it was recorded).
  double measured_s = 0;
  std::optional<ResultCorrectness> correctness;
  std::optional<ResultExecution> execution;
  /// What the step learned as it ran (free-form by nature: NCCL's algorithm
  /// and protocol for a collective); an empty object when none.
  nlohmann::json facts = nlohmann::json::object();
  /// --profile: the per-kernel table of the profiled window (its own
  /// versioned to/from-JSON: harness/kernel_profile.h).
  std::optional<KernelProfile> profile;
  std::vector<ResultQualityPoint> quality_curve;
  std::string log;  ///< File name, relative to the result's folder.
  /// The step's parts timed alone, in the order timed (empty when the
  /// workload names none, and in files from before parts were recorded).
  std::vector<ResultPart> parts;
  /// An external workload's program (absent for built-in workloads).
  std::optional<ResultProgram> program;
  /// --mode inference: LoadGen's outcome (loadgen_outcome_to_json), the
  /// batches the engine saw and the folder of LoadGen's own logs.
  std::optional<nlohmann::json> inference;

  bool success() const { return status == "success"; }
  /// The part called `name`, or null.
  const ResultPart* part(const std::string& name) const;
};

struct ResultScore {
  std::optional<double> time_to_train_s;
  std::optional<double> throughput;
  std::string method;
  std::string reason;
};

struct Result {
  std::filesystem::path path;  ///< Where it was read from (empty when made or parsed from memory).
  int schema_version = kResultSchemaVersion;
  std::string created;  ///< UTC, "%Y-%m-%dT%H:%M:%SZ".
  RunMode kind = RunMode::kTimeToTrain;
  ResultSpec spec;
  nlohmann::json environment = nlohmann::json::object();  ///< Free-form machine facts.
  std::vector<ResultToggle> toggles;  ///< In the document's order.
  ResultPlan plan;
  ResultWork work;
  ResultQuality quality;
  double prepare_s = 0;
  std::string interrupted;  ///< The signal that stopped it (schema 2), empty otherwise.
  std::vector<ResultRun> runs;
  ResultScore score;

  /// Whether the score is a rate (samples/s): throughput and inference.
  bool throughput() const { return kind == RunMode::kThroughput || kind == RunMode::kInference; }
  bool inference() const { return kind == RunMode::kInference; }
  /// The score in its unit: seconds (time to train) or samples/s.
  std::optional<double> score_value() const { return throughput() ? score.throughput : score.time_to_train_s; }
  /// An environment field as text ("" when absent); `pointer` like "/cuda/devices/0/name".
  std::string environment_text(const std::string& pointer) const;
  /// The distinct hosts the ranks ran on (environment ranks[].hostname),
  /// sorted; empty when the environment records no ranks.
  std::vector<std::string> rank_hosts() const;
  /// Whether the invocation ran to its end (a sweep runs an interrupted one again).
  bool finished() const { return interrupted.empty(); }
};

/// The document, in the current schema version.
nlohmann::json to_json(const ResultSpec& spec);
nlohmann::json to_json(const ResultRun& run);
nlohmann::json to_json(const Result& result);

/// Checks that `doc` has the fields of a readable schema version; returns an
/// empty string when valid, else the first problem found.
std::string validate_result(const nlohmann::json& doc);

/// Parses a result document; throws UsageError "<source>: not a perflab
/// result: <problem>" (the first problem: an unreadable schema version, a
/// missing field, a field of the wrong type).
Result parse_result(const nlohmann::json& doc, const std::filesystem::path& source = {});

/// Reads and parses a result file; UsageError "<path>: cannot read" / "not
/// valid JSON" / "not a perflab result: ...".
Result read_result(const std::filesystem::path& path);

}  // namespace perflab
