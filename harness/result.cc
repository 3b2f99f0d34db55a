// Result JSON serialisation and validation.
#include "harness/result.h"

#include <fstream>

#include <fmt/format.h>

#include "harness/error.h"
#include "harness/utc_time.h"

namespace perflab {
namespace {

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
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
          {"epochs", r.epochs},
          {"throughput_samples_per_s", r.throughput},
          {"iteration_ms", r.iteration_ms.to_json()},
          {"quality_curve", curve},
          {"log", r.log_file}};
}

}  // namespace

nlohmann::json result_to_json(const InvocationRecord& rec, const nlohmann::json& environment) {
  const TrainingPlan& plan = rec.plan;
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : rec.runs) runs.push_back(run_to_json(r));
  return {
      {"schema_version", kResultSchemaVersion},
      {"created", utc_now("%Y-%m-%dT%H:%M:%SZ")},
      {"kind", "time_to_train"},
      {"spec", rec.spec.to_json()},
      {"environment", environment},
      {"toggles", rec.spec.toggles.to_json()},
      {"plan",
       {{"train_samples", plan.train_samples},
        {"eval_samples", plan.eval_samples},
        {"global_batch_size", plan.global_batch_size},
        {"iterations_per_epoch", plan.iterations_per_epoch},
        {"max_epochs", plan.max_epochs},
        {"eval_interval_epochs", plan.eval_interval_epochs},
        {"precision", plan.precision},
        {"hyperparameters", plan.hyperparameters},
        {"data", plan.data}}},
      {"quality",
       {{"metric", plan.quality_metric},
        {"target", plan.quality_target},
        {"ceiling", optional_json(plan.quality_ceiling)}}},
      {"prepare_s", rec.prepare_s},
      {"runs", runs},
      {"score",
       {{"time_to_train_s", optional_json(rec.score.value)},
        {"method", rec.score.method},
        {"reason", rec.score.reason}}},
  };
}

std::string validate_result(const nlohmann::json& result) {
  if (!result.is_object()) return "not a JSON object";
  if (!result.contains("schema_version")) return "no schema_version";
  if (result["schema_version"] != kResultSchemaVersion) {
    return fmt::format("schema_version {} (this perflab reads {})", result["schema_version"].dump(),
                       kResultSchemaVersion);
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
    if (run["status"] != "success" && run["status"] != "aborted") {
      return "a run has status " + run["status"].dump();
    }
  }
  for (const char* key : {"workload", "preset", "params", "backend", "seeds", "toggles_requested"}) {
    if (!result["spec"].contains(key)) return fmt::format("spec is missing '{}'", key);
  }
  return "";
}

nlohmann::json read_result(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("{}: cannot read", path.string()));
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw UsageError(fmt::format("{}: not valid JSON", path.string()));
  std::string problem = validate_result(j);
  if (!problem.empty()) throw UsageError(fmt::format("{}: not a perflab result: {}", path.string(), problem));
  return j;
}

}  // namespace perflab
