// The train-to-target loop. MLLOG calls sit at the fixed points MLPerf
// references use: cache_clear and init_start first, the submission and
// hyperparameter keys once, init_stop, run_start, block/epoch start and
// stop, eval_start/eval_accuracy/eval_stop, run_stop with its status.
#include "harness/runner.h"

#include <omp.h>

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "harness/error.h"
#include "harness/mllog.h"
#include "harness/mllog_keys.h"
#include "harness/registry.h"
#include "harness/run_phases.h"

namespace perflab {
namespace detail {

double IterationTimes::time(int64_t iteration) {
  DeviceIterationTimer* device = run_.device_timer();
  auto t0 = Clock::now();
  if (device) device->start();
  run_.train_iteration(iteration);
  if (device) {
    device->stop();
    ++device_pending_;
  }
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (iteration >= warmup_) host_ms_.push_back(s * 1e3);
  return s;
}

void IterationTimes::collect() {
  DeviceIterationTimer* device = run_.device_timer();
  if (!device || device_pending_ == 0) return;
  std::vector<double> ms = device->collect_ms();
  if (static_cast<int64_t>(ms.size()) != device_pending_) {
    throw Error(fmt::format("internal: device timer returned {} times for {} iterations", ms.size(),
                            device_pending_));
  }
  device_ms_.insert(device_ms_.end(), ms.begin(), ms.end());
  device_pending_ = 0;
}

void IterationTimes::summarize_into(RunRecord& rec) {
  collect();
  rec.host_iteration_ms = summarize(host_ms_);
  rec.device_timed = run_.device_timer() != nullptr;
  if (rec.device_timed) {
    std::vector<double> after_warmup;
    for (size_t i = 0; i < device_ms_.size(); ++i) {
      if (static_cast<int64_t>(i) >= warmup_) after_warmup.push_back(device_ms_[i]);
    }
    rec.iteration_ms = summarize(after_warmup);
  } else {
    rec.iteration_ms = rec.host_iteration_ms;
  }
}

double IterationTimes::device_seconds() const {
  double ms = 0;
  for (double x : device_ms_) ms += x;
  return ms / 1e3;
}

}  // namespace detail

namespace {

using detail::Clock;
using detail::seconds_since;

/// Iterations between evaluations: the plan's interval, at least one
/// iteration, never more than an epoch.
int64_t eval_every(const TrainingPlan& plan) {
  double iters = plan.eval_interval_epochs * static_cast<double>(plan.iterations_per_epoch);
  auto n = static_cast<int64_t>(std::llround(iters));
  return std::clamp<int64_t>(n, 1, plan.iterations_per_epoch);
}

void log_init_keys(MllogWriter& log, const RunSpec& spec, const TrainingPlan& plan,
                   const std::string& platform, uint64_t seed) {
  namespace k = mllog;
  PERFLAB_MLLOG(log, k::kSubmissionBenchmark, spec.workload);
  PERFLAB_MLLOG(log, k::kSubmissionOrg, "perflab");
  PERFLAB_MLLOG(log, k::kSubmissionDivision, "open");
  PERFLAB_MLLOG(log, k::kSubmissionPlatform, platform);
  PERFLAB_MLLOG(log, k::kSubmissionStatus, "onprem");
  PERFLAB_MLLOG(log, k::kPerflabPreset, spec.preset_label());
  PERFLAB_MLLOG(log, k::kPerflabMode, run_mode_name(spec.mode));
  PERFLAB_MLLOG(log, k::kSeed, seed);
  PERFLAB_MLLOG(log, k::kGlobalBatchSize, plan.global_batch_size);
  PERFLAB_MLLOG(log, k::kTrainSamples, plan.train_samples);
  PERFLAB_MLLOG(log, k::kEvalSamples, plan.eval_samples);
  for (const auto& [key, value] : plan.hyperparameters.items()) {
    PERFLAB_MLLOG(log, key, value);
  }
  PERFLAB_MLLOG(log, k::kLowestNumericalPrecisionInLinear, plan.precision);
}

/// Trains one seed to the target (or until the stop rule says abort).
class SeedRun {
 public:
  SeedRun(const RunSpec& spec, const TrainingPlan& plan, Benchmark& bench, MllogWriter& log)
      : spec_(spec), plan_(plan), bench_(bench), log_(log) {}

  void run(RunRecord& rec, const std::string& platform, const std::function<void()>& on_eval) {
    namespace k = mllog;
    PERFLAB_MLLOG(log_, k::kCacheClear, true);
    PERFLAB_MLLOG(log_, k::kInitStart, nullptr);
    auto init_t0 = Clock::now();
    log_init_keys(log_, spec_, plan_, platform, rec.seed);
    std::unique_ptr<TrainingRun> model = bench_.start_run(rec.seed);
    rec.init_s = seconds_since(init_t0);
    PERFLAB_MLLOG(log_, k::kInitStop, nullptr);

    PERFLAB_MLLOG(log_, k::kRunStart, nullptr);
    if (spec_.mode == RunMode::kThroughput) {
      detail::run_throughput(spec_, plan_, *model, log_, rec);
      return;
    }
    train_to_target(*model, rec, on_eval);
  }

 private:
  void train_to_target(TrainingRun& model, RunRecord& rec, const std::function<void()>& on_eval) {
    namespace k = mllog;
    run_t0_ = Clock::now();
    detail::IterationTimes times(model, spec_.warmup_iterations);
    const int64_t per_epoch = plan_.iterations_per_epoch;
    const int64_t every = eval_every(plan_);
    int64_t iteration = 0;
    bool stop = false;
    for (int epoch = 1; epoch <= plan_.max_epochs && !stop; ++epoch) {
      int64_t samples_before = iteration * plan_.global_batch_size;
      PERFLAB_MLLOG(log_, k::kBlockStart, nullptr,
                    {{"first_epoch_num", epoch}, {"epoch_count", 1}, {"samples_count", samples_before}});
      PERFLAB_MLLOG(log_, k::kEpochStart, nullptr, {{"epoch_num", epoch}});
      for (int64_t i = 0; i < per_epoch && !stop; ++i, ++iteration) {
        rec.train_s += times.time(iteration);
        bool last_of_epoch = i + 1 == per_epoch;
        if ((i + 1) % every == 0 || last_of_epoch) {
          times.collect();  // evaluation synchronises anyway; bounds pending events
          stop = evaluate(model, rec, iteration + 1);
          on_eval();
        }
      }
      PERFLAB_MLLOG(log_, k::kEpochStop, nullptr, {{"epoch_num", epoch}});
      PERFLAB_MLLOG(log_, k::kBlockStop, nullptr,
                    {{"first_epoch_num", epoch}, {"samples_count", iteration * plan_.global_batch_size}});
    }
    if (!stop) {
      rec.status = "aborted";
      double best = -1;
      for (const auto& q : rec.quality_curve) best = std::max(best, q.value);
      rec.reason = fmt::format("target {} {:.4f} not reached in {} epochs (best {:.4f})",
                               plan_.quality_metric, plan_.quality_target, plan_.max_epochs, best);
    }
    rec.time_to_train_s = seconds_since(run_t0_);
    nlohmann::ordered_json meta = {{"status", rec.status}};
    if (!rec.success) meta["reason"] = rec.reason;
    PERFLAB_MLLOG(log_, k::kRunStop, nullptr, meta);

    rec.iterations = iteration;
    rec.samples = iteration * plan_.global_batch_size;
    rec.epochs = static_cast<double>(iteration) / static_cast<double>(per_epoch);
    times.summarize_into(rec);
    // On a device, host time in the iteration call is launch time; the
    // device's own times are what training took.
    if (rec.device_timed) rec.train_s = times.device_seconds();
    rec.throughput = rec.train_s > 0 ? static_cast<double>(rec.samples) / rec.train_s : 0;
  }

  /// Logs one evaluation; returns true when the run must stop (target
  /// reached or the loss diverged).
  bool evaluate(TrainingRun& model, RunRecord& rec, int64_t iterations_done) {
    namespace k = mllog;
    double epoch = static_cast<double>(iterations_done) / static_cast<double>(plan_.iterations_per_epoch);
    int64_t samples = iterations_done * plan_.global_batch_size;
    nlohmann::ordered_json meta = {{"epoch_num", epoch}, {"samples_count", samples}};
    double loss = model.take_training_loss();
    PERFLAB_MLLOG(log_, k::kTrainLoss, loss, meta);
    if (!std::isfinite(loss)) {
      rec.status = "aborted";
      rec.reason = fmt::format("training loss diverged ({}) at epoch {:.3f}",
                               std::isnan(loss) ? "nan" : "inf", epoch);
      return true;
    }
    PERFLAB_MLLOG(log_, k::kEvalStart, nullptr, meta);
    auto t0 = Clock::now();
    double value = model.evaluate();
    rec.eval_s += seconds_since(t0);
    PERFLAB_MLLOG(log_, k::kEvalAccuracy, value, meta);
    PERFLAB_MLLOG(log_, k::kEvalStop, nullptr, meta);
    rec.quality_curve.push_back({epoch, samples, value, loss, seconds_since(run_t0_)});
    if (std::isfinite(value) && value >= plan_.quality_target) {
      rec.status = "success";
      rec.success = true;
      rec.reason = fmt::format("{} {:.4f} >= target {:.4f}", plan_.quality_metric, value,
                               plan_.quality_target);
      return true;
    }
    return false;
  }

  const RunSpec& spec_;
  const TrainingPlan& plan_;
  Benchmark& bench_;
  MllogWriter& log_;
  Clock::time_point run_t0_;
};

}  // namespace

PreparedBenchmark prepare_benchmark(const RunSpec& spec, const WorkloadInfo& info) {
  omp_set_num_threads(spec.threads);
  PreparedBenchmark out;
  WorkloadConfig config{spec.params, spec.backend, spec.toggles, spec.threads};
  auto t0 = Clock::now();
  out.bench = info.create(config);
  out.prepare_s = seconds_since(t0);
  out.plan = out.bench->plan();
  const TrainingPlan& plan = out.plan;
  if (plan.iterations_per_epoch < 1 || plan.global_batch_size < 1 || plan.max_epochs < 1) {
    throw Error(fmt::format("internal: {} produced an empty training plan", info.name));
  }
  return out;
}

RunRecord run_seed(const RunSpec& spec, PreparedBenchmark& prepared, uint64_t seed,
                   const std::filesystem::path& log_path, const std::string& platform,
                   const std::function<void(const RunRecord&)>& on_eval) {
  omp_set_num_threads(spec.threads);
  RunRecord rec;
  rec.seed = seed;
  rec.log_file = log_path.filename().string();
  MllogWriter log(log_path.string());
  SeedRun(spec, prepared.plan, *prepared.bench, log).run(rec, platform, [&] {
    if (on_eval) on_eval(rec);
  });
  return rec;
}

Score score_runs(const std::vector<RunRecord>& runs, RunMode mode) {
  if (mode == RunMode::kThroughput) {
    Score s;
    std::vector<double> rates;
    for (const auto& r : runs) {
      if (!r.success) {
        s.reason = fmt::format("seed {}: {}", r.seed, r.reason);
        return s;
      }
      rates.push_back(r.throughput);
    }
    if (rates.empty()) {
      s.reason = "no runs";
      return s;
    }
    s.value = percentile(rates, 50);
    s.method = fmt::format("median of {}", rates.size());
    return s;
  }
  std::vector<std::optional<double>> times;
  for (const auto& r : runs) {
    times.push_back(r.success ? std::optional<double>(r.time_to_train_s) : std::nullopt);
  }
  return olympic_mean(times);
}

InvocationRecord run_benchmark(const RunSpec& spec, const WorkloadInfo& info,
                               const std::filesystem::path& dir, const std::string& platform,
                               const ProgressObserver& observer) {
  auto notify = [&](ProgressEvent::Kind kind, size_t index, const RunRecord* run) {
    if (observer) observer({kind, index, spec.seeds.size(), run});
  };
  PreparedBenchmark prepared = prepare_benchmark(spec, info);
  notify(ProgressEvent::Kind::kPrepared, 0, nullptr);

  InvocationRecord out;
  out.spec = spec;
  out.plan = prepared.plan;
  out.prepare_s = prepared.prepare_s;
  for (size_t i = 0; i < spec.seeds.size(); ++i) {
    RunRecord started;
    started.seed = spec.seeds[i];
    notify(ProgressEvent::Kind::kRunStarted, i, &started);
    out.runs.push_back(run_seed(spec, prepared, spec.seeds[i], dir / fmt::format("run_{}.log", i),
                                platform, [&](const RunRecord& r) {
                                  notify(ProgressEvent::Kind::kEvaluated, i, &r);
                                }));
    notify(ProgressEvent::Kind::kRunFinished, i, &out.runs.back());
  }
  out.score = score_runs(out.runs, spec.mode);
  return out;
}

}  // namespace perflab
