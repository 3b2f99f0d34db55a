// The one typed reader of result documents (result.json, schema versions 1
// and 2): every report, RCP, the MLPerf export and the coming compare and
// history read results through ResultView, never through string-keyed JSON
// lookups of their own. Which versions are readable is decided once, by
// harness/result.h (result_schema_readable); the differences between them
// are absorbed here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/kernel_profile.h"
#include "harness/run_mode.h"
#include "harness/stats.h"

namespace perflab::reports {

/// A toggle as the result recorded it: requested, and in effect as it ran.
struct ToggleView {
  std::string name;  ///< "cuda_graphs", "sharp", "sync_free", "fused".
  bool requested = false;
  bool in_effect = false;
  std::string reason;
};

struct SpecView {
  std::string workload;
  std::string preset;
  std::map<std::string, std::string> overrides;
  nlohmann::json params = nlohmann::json::object();  ///< Name -> value, as resolved.
  std::string backend_requested;
  std::string backend;
  std::string backend_reason;
  std::vector<std::pair<std::string, bool>> toggles_requested;  ///< In the document's order.
  std::vector<uint64_t> seeds;
  std::optional<int> threads;
  int warmup_iterations = 0;
  RunMode mode = RunMode::kTimeToTrain;
  int iterations = 0;
  std::string batch_param;          ///< Empty when the workload has none (v1: "batch_size" when present).
  std::string learning_rate_param;  ///< Likewise ("learning_rate" in v1).
  nlohmann::json json;              ///< The spec as written (for rerun and identity).

  /// A parameter as a number, when present and numeric.
  std::optional<double> param_number(const std::string& name) const;
};

struct PlanView {
  int64_t global_batch_size = 0;
  std::string precision;
  std::string sample_unit = "samples";
  nlohmann::json hyperparameters = nlohmann::json::object();
  nlohmann::json data = nlohmann::json::object();
  // Training fields: absent for workloads that do not train.
  std::optional<int64_t> train_samples;
  std::optional<int64_t> eval_samples;
  std::optional<int64_t> iterations_per_epoch;
  std::optional<int64_t> max_epochs;
  std::optional<double> eval_interval_epochs;
};

struct WorkView {
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

struct QualityView {
  std::string metric;
  std::optional<double> target;
  std::optional<double> ceiling;
};

struct QualityPointView {
  double epoch = 0;
  int64_t samples = 0;
  double value = 0;
  double train_loss = 0;
  double elapsed_s = 0;
};

struct CorrectnessView {
  bool passed = false;
  std::string detail;
};

/// What a device step did (schema 2; absent for host iterations and v1).
struct ExecutionView {
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
  std::string launches_note;
};

struct RunView {
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
  std::string iteration_timer;  ///< "host clock" or "cuda events" ("-" in files from before it was recorded).
  double measured_s = 0;
  std::optional<CorrectnessView> correctness;
  std::optional<ExecutionView> execution;
  /// What the step learned as it ran (free-form by nature: NCCL's algorithm
  /// and protocol for a collective); an empty object when none.
  nlohmann::json facts = nlohmann::json::object();
  std::vector<QualityPointView> quality_curve;
  std::string log;  ///< File name, relative to the result's folder.
  /// --profile: the per-kernel table of the profiled window (the same type
  /// the harness wrote, read by its own from-JSON: harness/kernel_profile.h).
  std::optional<KernelProfile> profile;

  bool success() const { return status == "success"; }
};

struct ScoreView {
  std::optional<double> time_to_train_s;
  std::optional<double> throughput;
  std::string method;
  std::string reason;
};

struct ResultView {
  std::filesystem::path path;  ///< Where it was read from (empty when parsed from memory).
  int schema_version = 0;
  std::string created;
  RunMode kind = RunMode::kTimeToTrain;
  SpecView spec;
  nlohmann::json environment = nlohmann::json::object();  ///< Free-form machine facts.
  std::vector<ToggleView> toggles;  ///< In the document's order.
  PlanView plan;
  WorkView work;
  QualityView quality;
  double prepare_s = 0;
  std::string interrupted;  ///< The signal that stopped it (schema 2), empty otherwise.
  std::vector<RunView> runs;
  ScoreView score;

  bool throughput() const { return kind == RunMode::kThroughput; }
  /// The score in its unit: seconds (time to train) or samples/s.
  std::optional<double> score_value() const { return throughput() ? score.throughput : score.time_to_train_s; }
  /// An environment field as text ("" when absent); `pointer` like "/cuda/devices/0/name".
  std::string environment_text(const std::string& pointer) const;
};

/// Parses a result document; throws UsageError "<source>: not a perflab
/// result: <problem>" (the first problem: an unreadable schema version, a
/// missing field, a field of the wrong type).
ResultView parse_result(const nlohmann::json& doc, const std::filesystem::path& source = {});

/// Reads and parses a result file; UsageError "<path>: cannot read" / "not
/// valid JSON" / "not a perflab result: ...".
ResultView read_result_view(const std::filesystem::path& path);

}  // namespace perflab::reports
