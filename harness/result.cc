// The runner's record as the result model (see result.h).
#include "harness/result.h"

#include <cmath>

#include "harness/stats.h"
#include "base/utc_time.h"

namespace perflab {
namespace {

ResultExecution execution_of(const ExecutionRecord& e) {
  ResultExecution out;
  out.graphs_used = e.graphs_used;
  out.graphs_captured = e.graphs_captured;
  out.graph_replays = e.graph_replays;
  out.graphs_note = e.graphs_note;
  out.syncs_min = e.syncs_min;
  out.syncs_max = e.syncs_max;
  out.syncs_expected = e.expected_syncs;
  out.kernels_per_iteration = e.kernels_per_iteration;
  out.copies_per_iteration = e.copies_per_iteration;
  out.memsets_per_iteration = e.memsets_per_iteration;
  out.declared_kernels_per_iteration = e.declared_kernels_per_iteration;
  if (e.launches_counted_at >= 0) out.launches_counted_at = e.launches_counted_at;
  out.launches_note = e.launches_note;
  return out;
}

ResultRun run_of(const RunRecord& r) {
  ResultRun out;
  out.seed = r.seed;
  out.status = r.status;
  out.reason = r.reason;
  out.init_s = r.init_s;
  out.time_to_train_s = r.time_to_train_s;
  out.train_s = r.train_s;
  out.eval_s = r.eval_s;
  out.iterations = r.iterations;
  out.samples = r.samples;
  out.epochs = r.epochs;
  out.throughput = r.throughput;
  out.iteration_ms = r.iteration_ms;
  out.host_iteration_ms = r.host_iteration_ms;
  out.iteration_timer = r.device_timed ? "cuda events" : "host clock";
  out.measured_s = r.measured_s;
  if (r.correctness) out.correctness = ResultCorrectness{r.correctness->passed, r.correctness->detail};
  if (r.execution) out.execution = execution_of(*r.execution);
  out.facts = r.facts;
  out.profile = r.profile;
  out.quality_curve = r.quality_curve;
  out.log = r.log_file;
  out.parts = r.parts;
  out.program = r.program;
  out.inference = r.inference;
  return out;
}

/// Achieved rates at the median of the runs' median iteration times, and
/// the roofline floor.
ResultWork work_of(const IterationWork& work, const std::vector<RunRecord>& runs) {
  ResultWork out;
  out.recorded = true;
  out.flops_per_iteration = work.flops;
  out.bytes_per_iteration = work.bytes;
  out.floor_ms = work.floor_ms;
  out.floor_basis = work.floor_basis;
  std::vector<double> p50;
  for (const auto& r : runs) {
    if (r.iteration_ms.n > 0) p50.push_back(r.iteration_ms.p50);
  }
  if (p50.empty()) return out;
  const double ms = percentile(p50, 50);
  out.median_iteration_ms = ms;
  if (ms <= 0) return out;
  if (work.flops > 0) out.achieved_tflops = work.flops / (ms * 1e-3) / 1e12;
  if (work.bytes > 0) out.achieved_gbytes_per_s = work.bytes / (ms * 1e-3) / 1e9;
  if (work.floor_ms && *work.floor_ms > 0) out.times_floor = ms / *work.floor_ms;
  return out;
}

ResultPlan plan_of(const InvocationRecord& rec) {
  ResultPlan plan;
  plan.global_batch_size = rec.step.batch_size;
  plan.precision = rec.step.precision;
  plan.hyperparameters = rec.step.hyperparameters;
  plan.data = rec.step.data;
  plan.sample_unit = rec.step.sample_unit;
  if (rec.training) {
    const TrainingPlan& t = *rec.training;
    plan.train_samples = t.train_samples;
    plan.eval_samples = t.eval_samples;
    if (!rec.spec.workload_file.empty()) {
      // An external program's iterations and epochs are its own, and its
      // sample counts are what its logs state (null when none does).
      if (t.train_samples <= 0) plan.train_samples.reset();
      if (t.eval_samples <= 0) plan.eval_samples.reset();
      return plan;
    }
    plan.iterations_per_epoch = t.iterations_per_epoch;
    plan.max_epochs = t.max_epochs;
    plan.eval_interval_epochs = t.eval_interval_epochs;
  }
  return plan;
}

}  // namespace

Result result_of(const InvocationRecord& rec, const nlohmann::json& environment) {
  const bool throughput = rec.spec.mode == RunMode::kThroughput || rec.spec.mode == RunMode::kInference;
  Result out;
  out.created = utc_now("%Y-%m-%dT%H:%M:%SZ");
  out.kind = rec.spec.mode;
  out.spec = result_spec_of(rec.spec);
  out.environment = environment;
  for (Toggle t : kAllToggles) {
    const ToggleState& s = rec.toggles[t];
    out.toggles.push_back({toggle_key(t), s.requested, s.in_effect, s.reason});
  }
  out.plan = plan_of(rec);
  out.work = work_of(rec.step.work, rec.runs);
  // Time to train: metric, target and ceiling. Throughput runs have no
  // quality target (their gate is the correctness check): target is null.
  if (rec.spec.mode == RunMode::kInference) {
    out.quality.metric = "LoadGen verdict";
  } else if (throughput || !rec.training) {
    out.quality.metric = "correctness gate";
  } else {
    // A NaN target: the workload states none (an external program's
    // run_stop status decides).
    out.quality = {rec.training->quality_metric,
                   std::isnan(rec.training->quality_target) ? std::nullopt
                                                            : std::optional<double>(rec.training->quality_target),
                   rec.training->quality_ceiling};
  }
  out.prepare_s = rec.prepare_s;
  out.interrupted = rec.interrupted;
  for (const RunRecord& r : rec.runs) out.runs.push_back(run_of(r));
  (throughput ? out.score.throughput : out.score.time_to_train_s) = rec.score.value;
  out.score.method = rec.score.method;
  out.score.reason = rec.score.reason;
  return out;
}

nlohmann::json result_to_json(const InvocationRecord& record, const nlohmann::json& environment) {
  return to_json(result_of(record, environment));
}

}  // namespace perflab
