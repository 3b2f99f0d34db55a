// Result JSON serialisation and validation.
#include "harness/result.h"

#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "harness/error.h"
#include "harness/input_file.h"
#include "harness/json_text.h"
#include "harness/json_number.h"
#include "harness/stats.h"
#include "harness/utc_time.h"

namespace perflab {
namespace {

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json optional_count(const std::optional<int64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json execution_to_json(const ExecutionRecord& e) {
  return {{"cuda_graphs",
           {{"used", e.graphs_used}, {"captured", e.graphs_captured}, {"replayed", e.graph_replays},
            {"note", e.graphs_note}}},
          {"host_syncs_per_iteration",
           {{"min", e.syncs_min}, {"max", e.syncs_max}, {"expected", e.expected_syncs}}},
          {"launches_per_iteration",
           {{"kernels", optional_count(e.kernels_per_iteration)},
            {"copies", optional_count(e.copies_per_iteration)},
            {"memsets", optional_count(e.memsets_per_iteration)},
            {"declared_kernels", optional_count(e.declared_kernels_per_iteration)},
            {"counted_at", e.launches_counted_at >= 0 ? nlohmann::json(e.launches_counted_at) : nlohmann::json(nullptr)},
            {"note", e.launches_note}}}};
}

nlohmann::json run_to_json(const RunRecord& r) {
  nlohmann::json curve = nlohmann::json::array();
  for (const auto& q : r.quality_curve) {
    curve.push_back({{"epoch", q.epoch}, {"samples", q.samples}, {"value", q.value},
                     {"train_loss", q.train_loss}, {"elapsed_s", q.elapsed_s}});
  }
  return {{"seed", r.seed},
          {"status", r.status},
          {"reason", r.reason},
          {"init_s", r.init_s},
          {"time_to_train_s", r.time_to_train_s},
          {"train_s", r.train_s},
          {"eval_s", r.eval_s},
          {"iterations", r.iterations},
          {"samples", r.samples},
          {"epochs", r.epochs ? nlohmann::json(*r.epochs) : nlohmann::json(nullptr)},
          {"throughput_samples_per_s", r.throughput},
          {"iteration_ms", r.iteration_ms.to_json()},
          {"host_iteration_ms", r.host_iteration_ms.to_json()},
          {"iteration_timer", r.device_timed ? "cuda events" : "host clock"},
          {"measured_s", r.measured_s},
          {"correctness", r.correctness ? nlohmann::json{{"passed", r.correctness->passed},
                                                         {"detail", r.correctness->detail}}
                                        : nlohmann::json(nullptr)},
          {"execution", r.execution ? execution_to_json(*r.execution) : nlohmann::json(nullptr)},
          {"facts", r.facts},
          {"profile", r.profile ? kernel_profile_to_json(*r.profile) : nlohmann::json(nullptr)},
          {"quality_curve", curve},
          {"log", r.log_file}};
}

/// Achieved rates at the median iteration time and the roofline floor.
nlohmann::json work_to_json(const IterationWork& work, const std::vector<RunRecord>& runs) {
  std::vector<double> p50;
  for (const auto& r : runs) {
    if (r.iteration_ms.n > 0) p50.push_back(r.iteration_ms.p50);
  }
  nlohmann::json out = {{"flops_per_iteration", work.flops},
                        {"bytes_per_iteration", work.bytes},
                        {"floor_ms", optional_json(work.floor_ms)},
                        {"floor_basis", work.floor_basis},
                        {"median_iteration_ms", nullptr},
                        {"achieved_tflops", nullptr},
                        {"achieved_gbytes_per_s", nullptr},
                        {"times_floor", nullptr}};
  if (p50.empty()) return out;
  double ms = percentile(p50, 50);
  out["median_iteration_ms"] = ms;
  if (ms <= 0) return out;
  if (work.flops > 0) out["achieved_tflops"] = work.flops / (ms * 1e-3) / 1e12;
  if (work.bytes > 0) out["achieved_gbytes_per_s"] = work.bytes / (ms * 1e-3) / 1e9;
  if (work.floor_ms && *work.floor_ms > 0) out["times_floor"] = ms / *work.floor_ms;
  return out;
}

/// Time to train: metric, target and ceiling. Throughput runs have no
/// quality target (their gate is the correctness check): target is null.
nlohmann::json quality_json(const InvocationRecord& rec) {
  if (rec.spec.mode == RunMode::kThroughput || !rec.training) {
    return {{"metric", "correctness gate"}, {"target", nullptr}, {"ceiling", nullptr}};
  }
  const TrainingPlan& plan = *rec.training;
  return {{"metric", plan.quality_metric},
          {"target", plan.quality_target},
          {"ceiling", optional_json(plan.quality_ceiling)}};
}

nlohmann::json plan_json(const InvocationRecord& rec) {
  const StepPlan& step = rec.step;
  nlohmann::json plan = {{"global_batch_size", step.batch_size},
                         {"precision", step.precision},
                         {"hyperparameters", step.hyperparameters},
                         {"data", step.data},
                         {"sample_unit", step.sample_unit},
                         {"train_samples", nullptr},
                         {"eval_samples", nullptr},
                         {"iterations_per_epoch", nullptr},
                         {"max_epochs", nullptr},
                         {"eval_interval_epochs", nullptr}};
  if (rec.training) {
    const TrainingPlan& t = *rec.training;
    plan["train_samples"] = t.train_samples;
    plan["eval_samples"] = t.eval_samples;
    plan["iterations_per_epoch"] = t.iterations_per_epoch;
    plan["max_epochs"] = t.max_epochs;
    plan["eval_interval_epochs"] = t.eval_interval_epochs;
  }
  return plan;
}

}  // namespace

nlohmann::json result_to_json(const InvocationRecord& rec, const nlohmann::json& environment) {
  const bool throughput = rec.spec.mode == RunMode::kThroughput;
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : rec.runs) runs.push_back(run_to_json(r));
  return {
      {"schema_version", kResultSchemaVersion},
      {"created", utc_now("%Y-%m-%dT%H:%M:%SZ")},
      {"kind", result_kind(rec.spec.mode)},
      {"spec", rec.spec.to_json()},
      {"environment", environment},
      {"toggles", rec.toggles.to_json()},
      {"plan", plan_json(rec)},
      {"work", work_to_json(rec.step.work, rec.runs)},
      {"quality", quality_json(rec)},
      {"prepare_s", rec.prepare_s},
      {"interrupted", rec.interrupted.empty() ? nlohmann::json(nullptr) : nlohmann::json(rec.interrupted)},
      {"runs", runs},
      {"score",
       {{"time_to_train_s", throughput ? nlohmann::json(nullptr) : optional_json(rec.score.value)},
        {"throughput_samples_per_s", throughput ? optional_json(rec.score.value) : nlohmann::json(nullptr)},
        {"method", rec.score.method},
        {"reason", rec.score.reason}}},
  };
}

std::string validate_result(const nlohmann::json& result) {
  if (!result.is_object()) return "not a JSON object";
  if (!result.contains("schema_version")) return "no schema_version";
  // Read as int64 with its range checked: 4294967298 must not pass as version 2.
  const std::optional<int64_t> version =
      result["schema_version"].is_number_integer() ? json_number<int64_t>(result["schema_version"]) : std::nullopt;
  if (!version || !result_schema_readable(*version)) {
    return fmt::format("schema_version {} (this perflab reads {} to {})", result["schema_version"].dump(),
                       kOldestReadableResultSchemaVersion, kResultSchemaVersion);
  }
  for (const char* key : {"spec", "environment", "toggles", "plan", "quality", "runs", "score"}) {
    if (!result.contains(key)) return fmt::format("missing '{}'", key);
  }
  if (!result["runs"].is_array() || result["runs"].empty()) return "'runs' is empty";
  for (const auto& run : result["runs"]) {
    for (const char* key : {"seed", "status", "time_to_train_s", "throughput_samples_per_s",
                            "iteration_ms", "quality_curve", "log"}) {
      if (!run.contains(key)) return fmt::format("a run is missing '{}'", key);
    }
    if (!run["time_to_train_s"].is_number() || !run["throughput_samples_per_s"].is_number()) {
      return "a run has a non-numeric time or throughput";
    }
    if (run["status"] != "success" && run["status"] != "aborted") {
      return "a run has status " + run["status"].dump();
    }
  }
  if (result.contains("kind") && result["kind"] != "time_to_train" && result["kind"] != "throughput") {
    return "kind " + result["kind"].dump() + " (expected time_to_train or throughput)";
  }
  const nlohmann::json& spec = result["spec"];
  if (!spec.is_object()) return "spec is not an object";
  for (const char* key : {"workload", "preset", "params", "backend", "seeds", "toggles_requested"}) {
    if (!spec.contains(key)) return fmt::format("spec is missing '{}'", key);
  }
  if (!spec["params"].is_object()) return fmt::format("spec.params is {}, not an object", spec["params"].type_name());
  // Counts a rerun would use: non-negative integers or absent.
  for (const char* key : {"iterations", "warmup_iterations", "threads"}) {
    if (spec.contains(key) && !json_number<uint32_t>(spec[key])) {
      return fmt::format("spec.{} is {}, not a count", key, spec[key].dump());
    }
  }
  return "";
}

nlohmann::json read_result(const std::filesystem::path& path) {
  const std::string text = read_document(path);
  std::string problem;
  nlohmann::json j = parse_json_text(text, &problem);
  if (j.is_discarded()) throw UsageError(fmt::format("{}: {}", path.string(), problem));
  problem = validate_result(j);
  if (!problem.empty()) throw UsageError(fmt::format("{}: not a perflab result: {}", path.string(), problem));
  return j;
}

}  // namespace perflab
