// Machine-readable sweep report (kind "sweep_report", versioned).
#include <cmath>
#include <nlohmann/json.hpp>

#include "reports/render.h"
#include "reports/render_format.h"

namespace perflab::reports {
namespace {

using detail::last_quality;
using nlohmann::json;

json opt(std::optional<double> v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); }

json toggles_json(const std::vector<ToggleStatus>& toggles) {
  json out = json::object();
  for (const ToggleStatus& t : toggles) {
    out[t.name] = {{"requested", t.requested}, {"in_effect", t.in_effect}, {"reason", t.reason}};
  }
  return out;
}

json point_json(const Point& p) {
  json runs = json::array();
  for (const RunEntry& e : p.runs) {
    runs.push_back({{"result", e.result.string()},
                    {"log", e.log.string()},
                    {"seed", e.seed},
                    {"status", e.success ? "success" : "aborted"},
                    {"reason", e.reason},
                    {"time_to_train_s", e.time_to_train_s},
                    {"epochs", e.epochs},
                    {"iterations", e.iterations},
                    {"throughput_samples_per_s", e.throughput},
                    {"iteration_ms_mean", e.iteration_ms_n ? json(e.iteration_ms_mean) : json()},
                    {"last_quality", opt(last_quality(e))}});
  }
  Score s = p.score();
  json sources = json::array();
  for (const auto& f : p.sources) sources.push_back(f.string());
  return {
      {"label", p.label},
      {"spec", p.key()},
      {"toggles", toggles_json(p.toggles)},
      {"metric", p.metric},
      {"target", opt(p.target)},
      {"sources", sources},
      {"score",
       {{"time_to_train_s", opt(p.kind == RunMode::kTimeToTrain ? s.value : std::nullopt)},
        {"throughput_samples_per_s", opt(scored_as_rate(p.kind) ? s.value : std::nullopt)},
        {"method", s.method},
        {"reason", s.reason}}},
      {"median_throughput", opt(p.median_throughput())},
      {"runs", runs}};
}

json ci_json(const MeanCi& ci) {
  if (ci.n == 0) return nullptr;
  return {{"mean", ci.mean}, {"low", ci.low}, {"high", ci.high}, {"n", ci.n}, {"confidence", 0.95}};
}

json matrix_json(const ToggleMatrix& m) {
  json rows = json::array();
  for (const ToggleMatrixRow& r : m.rows) {
    rows.push_back({{"combination", r.combination},
                    {"point", r.point_label},
                    {"baseline", r.baseline},
                    {"toggles", toggles_json(r.toggles)},
                    {"runs", r.runs},
                    {"converged", r.succeeded},
                    {"value", opt(r.value)},
                    {"no_value_reason", r.no_value_reason},
                    {"ci", ci_json(r.ci)},
                    {"speedup", opt(r.speedup)}});
  }
  return {{"title", m.title},
          {"value", m.time_to_train ? "time_to_train_s" : "median_throughput"},
          {"has_baseline", m.has_baseline},
          {"rows", rows}};
}

json sweep_json(const BatchSweep& s) {
  json rows = json::array();
  for (const BatchSweepRow& r : s.rows) {
    rows.push_back({{"point", r.point_label},
                    {"batch_size", r.batch_size},
                    {"learning_rate", opt(r.learning_rate)},
                    {"iterations_per_epoch", r.iterations_per_epoch},
                    {"runs", r.runs},
                    {"converged", r.converged},
                    {"epochs_mean", opt(r.epochs_mean)},
                    {"epochs_stddev", opt(r.epochs_stddev)},
                    {"iterations_mean", opt(r.iterations_mean)},
                    {"iteration_ms", opt(r.iteration_ms)},
                    {"time_to_train_s", opt(r.time_to_train.value)},
                    {"score_reason", r.time_to_train.reason},
                    {"best", r.best}});
  }
  return {{"title", s.title}, {"rows", rows}};
}

}  // namespace

std::string render_sweep_json(const SweepReport& r) {
  json points = json::array(), matrices = json::array(), sweeps = json::array();
  for (const Point& p : r.points) points.push_back(point_json(p));
  for (const ToggleMatrix& m : r.toggle_matrices) matrices.push_back(matrix_json(m));
  for (const BatchSweep& s : r.batch_sweeps) sweeps.push_back(sweep_json(s));
  json doc = {{"schema_version", kSweepReportSchemaVersion},
              {"kind", "sweep_report"},
              {"title", r.title},
              {"summary",
               {{"results", r.results},
                {"runs", r.runs},
                {"points", r.points.size()},
                {"skipped", r.skipped.size()}}},
              {"points", points},
              {"toggle_matrices", matrices},
              {"batch_sweeps", sweeps},
              {"skipped", r.skipped}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace perflab::reports
