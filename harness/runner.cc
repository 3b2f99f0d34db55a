// One seed's run. MLLOG calls sit at the fixed points MLPerf references use:
// cache_clear and init_start first, the submission and hyperparameter keys
// once, init_stop, run_start, block/epoch start and stop,
// eval_start/eval_accuracy/eval_stop, run_stop with its status. Only rank 0
// writes the log.
#include "harness/runner.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/interrupt.h"
#include "harness/mllog.h"
#include "harness/mllog_keys.h"
#include "harness/part_timer.h"
#include "harness/program_run.h"
#include "harness/registry.h"
#include "harness/run_phases.h"

namespace perflab {
namespace detail {

std::vector<ResultPart> SeedStep::time_parts(collectives::Communicator& comm, int64_t warmup) {
  // The parts are timed by collectives: every rank or none, so ranks agree
  // first on whether a signal stopped any of them.
  double stop = interrupted() ? 1.0 : 0.0;
  comm.all_reduce_host(&stop, 1, collectives::ReduceOp::kMax);
  if (stop > 0) return {};
  PartTimer timer(comm, ops_.get(), PartTimer::kRepetitions, warmup);
  step_.time_parts(timer);
  return timer.parts();
}

SeedStep::SeedStep(TimedStep& step, const RunContext& ctx) : step_(step) {
  if (DeviceStep* device = step.device_step()) {
    ops_ = ctx.device_ops();
    driver_ = std::make_unique<StepDriver>(*device, *ops_, ctx.spec.toggles[Toggle::kCudaGraphs].in_effect);
    // The launches are counted over the last warm-up iteration: recording
    // has a cost, which must not land in a timed iteration.
    const RunSpec& spec = ctx.spec;
    if (spec.mode != RunMode::kThroughput) {
      driver_->count_launches_at(-1, "not counted in time-to-train runs, whose every iteration is timed; "
                                     "--mode throughput counts them in its warm-up");
    } else if (spec.warmup_iterations < 1) {
      driver_->count_launches_at(-1, "not counted: no warm-up iteration to count them in (--warmup 0)");
    } else {
      driver_->count_launches_at(spec.warmup_iterations - 1);
    }
  }
}

SeedStep::~SeedStep() {
  if (!phases_) return;
  phases_.reset();
  try {
    ops_->stop_activity();
  } catch (...) {  // already failing: the first error is the one reported
  }
}

void SeedStep::start_profile() {
  if (!driver_) throw Error("internal: a profiled window needs a device step");
  ops_->start_activity();
  DeviceOps* ops = ops_.get();
  phases_ = std::make_unique<PhaseRecording>([ops] { return ops->activity_clock_ns(); });
  driver_->start_declaring();
}

std::pair<ActivityLog, LaunchPlan> SeedStep::stop_profile() {
  if (!driver_ || !phases_) throw Error("internal: no profiled window to stop");
  ActivityLog log = ops_->stop_activity();
  for (ActivityRecord& r : phases_->take()) log.records.push_back(std::move(r));
  phases_.reset();
  return {std::move(log), driver_->stop_declaring()};
}

int64_t profiled_iterations(const RunSpec& spec) {
  return spec.profile != ProfileMode::kOff && spec.mode == RunMode::kThroughput ? spec.iterations : 0;
}

void SeedStep::iterate(int64_t iteration) {
  if (driver_) {
    driver_->iterate(iteration);
  } else {
    step_.run_iteration(iteration);
  }
}

void SeedStep::synchronize() {
  if (driver_) driver_->synchronize();
}

DeviceIterationTimer* SeedStep::timer() { return driver_ ? driver_->timer() : nullptr; }

std::optional<ExecutionRecord> SeedStep::execution() const {
  if (!driver_) return std::nullopt;
  return driver_->record();
}

double IterationTimes::time(int64_t iteration) {
  DeviceIterationTimer* device = step_.timer();
  ScopedPhase phase("iteration");
  auto t0 = Clock::now();
  if (device) device->start();
  step_.iterate(iteration);
  if (device) {
    device->stop();
    ++device_pending_;
  }
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (iteration >= warmup_) host_ms_.push_back(s * 1e3);
  return s;
}

void IterationTimes::collect() {
  DeviceIterationTimer* device = step_.timer();
  if (!device || device_pending_ == 0) return;
  std::vector<double> ms = device->collect_ms();
  if (static_cast<int64_t>(ms.size()) != device_pending_) {
    throw Error(fmt::format("internal: device timer returned {} times for {} iterations", ms.size(),
                            device_pending_));
  }
  device_ms_.insert(device_ms_.end(), ms.begin(), ms.end());
  device_pending_ = 0;
}

void IterationTimes::combine_across_ranks(std::vector<double>& ms) {
  if (comm_.size() == 1) return;
  switch (rank_times_) {
    case RankTimes::kMax: comm_.all_reduce_host(ms.data(), ms.size(), collectives::ReduceOp::kMax); return;
    case RankTimes::kMin: comm_.all_reduce_host(ms.data(), ms.size(), collectives::ReduceOp::kMin); return;
    case RankTimes::kMean:
      comm_.all_reduce_host(ms.data(), ms.size(), collectives::ReduceOp::kSum);
      for (double& x : ms) x /= comm_.size();
      return;
    case RankTimes::kRank0: comm_.broadcast_host(ms.data(), ms.size() * sizeof(double), 0); return;
  }
}

void IterationTimes::summarize_into(RunRecord& rec) {
  collect();
  // Every rank ran the same iterations: each iteration took as long as its
  // slowest rank, unless the plan combines the ranks' times otherwise.
  combine_across_ranks(host_ms_);
  combine_across_ranks(device_ms_);
  rec.host_iteration_ms = summarize(host_ms_);
  rec.device_timed = step_.timer() != nullptr;
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

void add_execution_to_gate(const std::optional<ExecutionRecord>& execution, CorrectnessReport& gate) {
  if (!execution) return;
  gate.detail += "; " + execution->describe();
  if (!execution->syncs_as_expected()) gate.passed = false;
}

}  // namespace detail

namespace {

using detail::Clock;
using detail::seconds_since;
using detail::logged_seconds;

/// Iterations between evaluations: the plan's interval, at least one
/// iteration, never more than an epoch.
int64_t eval_every(const TrainingPlan& plan) {
  double iters = plan.eval_interval_epochs * static_cast<double>(plan.iterations_per_epoch);
  auto n = static_cast<int64_t>(std::llround(iters));
  return std::clamp<int64_t>(n, 1, plan.iterations_per_epoch);
}

void log_init_keys(MllogWriter& log, const RunSpec& spec, const PreparedBenchmark& prepared,
                   const std::string& platform, uint64_t seed) {
  namespace k = mllog;
  const StepPlan& step = prepared.step;
  PERFLAB_MLLOG(log, k::kSubmissionBenchmark, spec.workload);
  PERFLAB_MLLOG(log, k::kSubmissionOrg, "perflab");
  PERFLAB_MLLOG(log, k::kSubmissionDivision, "open");
  PERFLAB_MLLOG(log, k::kSubmissionPlatform, platform);
  PERFLAB_MLLOG(log, k::kSubmissionStatus, "onprem");
  PERFLAB_MLLOG(log, k::kPerflabPreset, spec.preset_label());
  PERFLAB_MLLOG(log, k::kPerflabMode, run_mode_name(spec.mode));
  PERFLAB_MLLOG(log, k::kSeed, seed);
  PERFLAB_MLLOG(log, k::kGlobalBatchSize, step.batch_size);
  if (prepared.training) {
    PERFLAB_MLLOG(log, k::kTrainSamples, prepared.training->train_samples);
    PERFLAB_MLLOG(log, k::kEvalSamples, prepared.training->eval_samples);
  } else {
    // A timed step trains on nothing: the samples it processes, no eval.
    PERFLAB_MLLOG(log, k::kTrainSamples,
                  (spec.warmup_iterations + detail::profiled_iterations(spec) + spec.iterations) * step.batch_size);
    PERFLAB_MLLOG(log, k::kEvalSamples, 0);
  }
  for (const auto& [key, value] : step.hyperparameters.items()) {
    PERFLAB_MLLOG(log, key, value);
  }
  const std::string precision = mllog::mlperf_precision(step.precision);
  if (!precision.empty()) {
    PERFLAB_MLLOG(log, step.precision_is_communication ? k::kLowestNumericalPrecisionInComm
                                                       : k::kLowestNumericalPrecisionInLinear,
                  precision);
  }
}

/// Trains one seed to the target (or until the stop rule says abort).
class TrainToTarget {
 public:
  TrainToTarget(const RunContext& ctx, const TrainingPlan& plan, int64_t batch, MllogWriter& log)
      : ctx_(ctx), plan_(plan), batch_(batch), log_(log) {}

  /// Trains from run_start (logged at `run_start_ms`) to run_stop.
  void run(TrainableModel& model, detail::SeedStep& step, int64_t run_start_ms, RunRecord& rec,
           const std::function<void()>& on_eval) {
    namespace k = mllog;
    run_start_ms_ = run_start_ms;
    detail::IterationTimes times(step, ctx_.spec.warmup_iterations, ctx_.comm);
    const int64_t per_epoch = plan_.iterations_per_epoch;
    const int64_t every = eval_every(plan_);
    int64_t iteration = 0;
    bool stop = false;
    for (int epoch = 1; epoch <= plan_.max_epochs && !stop; ++epoch) {
      int64_t samples_before = iteration * batch_;
      PERFLAB_MLLOG(log_, k::kBlockStart, nullptr,
                    {{"first_epoch_num", epoch}, {"epoch_count", 1}, {"samples_count", samples_before}});
      PERFLAB_MLLOG(log_, k::kEpochStart, nullptr, {{"epoch_num", epoch}});
      for (int64_t i = 0; i < per_epoch && !stop; ++i, ++iteration) {
        if (interrupted()) {
          rec.status = "aborted";
          rec.reason = fmt::format("interrupted by {} after {} iterations", signal_name(interrupt_signal()),
                                   iteration);
          stop = true;
          break;
        }
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
                    {{"first_epoch_num", epoch}, {"samples_count", iteration * batch_}});
    }
    if (!stop) {
      rec.status = "aborted";
      double best = -1;
      for (const auto& q : rec.quality_curve) best = std::max(best, q.value);
      rec.reason = fmt::format("target {} {:.4f} not reached in {} epochs (best {:.4f})",
                               plan_.quality_metric, plan_.quality_target, plan_.max_epochs, best);
    }
    nlohmann::ordered_json meta = {{"status", rec.status}};
    if (!rec.success) meta["reason"] = rec.reason;
    rec.time_to_train_s = logged_seconds(run_start_ms_, PERFLAB_MLLOG(log_, k::kRunStop, nullptr, meta));

    rec.iterations = iteration;
    rec.samples = iteration * batch_;
    rec.epochs = static_cast<double>(iteration) / static_cast<double>(per_epoch);
    times.summarize_into(rec);
    rec.execution = step.execution();
    // What the model found as it ran (every rank is here: the facts may be
    // collective, as the sharded DLRM's exposed communication is).
    rec.toggle_outcomes = model.toggle_outcomes();
    rec.facts = model.run_facts();
    rec.parts = step.time_parts(ctx_.comm, ctx_.spec.warmup_iterations);
    // On a device, host time in the iteration call is launch time; the
    // device's own times are what training took.
    if (rec.device_timed) rec.train_s = times.device_seconds();
    rec.throughput = rec.train_s > 0 ? static_cast<double>(rec.samples) / rec.train_s : 0;
  }

 private:
  /// Logs one evaluation; returns true when the run must stop (target
  /// reached or the loss diverged).
  bool evaluate(TrainableModel& model, RunRecord& rec, int64_t iterations_done) {
    namespace k = mllog;
    double epoch = static_cast<double>(iterations_done) / static_cast<double>(plan_.iterations_per_epoch);
    int64_t samples = iterations_done * batch_;
    nlohmann::ordered_json meta = {{"epoch_num", epoch}, {"samples_count", samples}};
    double loss = model.take_loss();
    PERFLAB_MLLOG(log_, k::kTrainLoss, loss, meta);
    if (!std::isfinite(loss)) {
      rec.status = "aborted";
      const std::string where = model.nonfinite_detail();
      rec.reason = fmt::format("training loss diverged ({}) at epoch {:.3f}{}", std::isnan(loss) ? "nan" : "inf",
                               epoch, where.empty() ? "" : "; " + where);
      return true;
    }
    PERFLAB_MLLOG(log_, k::kEvalStart, nullptr, meta);
    auto t0 = Clock::now();
    double value = 0;
    {
      ScopedPhase phase("evaluation");
      value = model.evaluate();
    }
    rec.eval_s += seconds_since(t0);
    const int64_t evaluated_ms = PERFLAB_MLLOG(log_, k::kEvalAccuracy, value, meta);
    PERFLAB_MLLOG(log_, k::kEvalStop, nullptr, meta);
    rec.quality_curve.push_back({epoch, samples, value, loss, logged_seconds(run_start_ms_, evaluated_ms)});
    if (std::isfinite(value) && value >= plan_.quality_target) {
      rec.status = "success";
      rec.success = true;
      rec.reason = fmt::format("{} {:.4f} >= target {:.4f}", plan_.quality_metric, value,
                               plan_.quality_target);
      return true;
    }
    return false;
  }

  const RunContext& ctx_;
  const TrainingPlan& plan_;
  int64_t batch_;
  MllogWriter& log_;
  int64_t run_start_ms_ = 0;  // the log's run_start
};

}  // namespace

PreparedBenchmark prepare_benchmark(const RunContext& ctx, const WorkloadInfo& info) {
  omp_set_num_threads(ctx.spec.threads);
  PreparedBenchmark out;
  auto t0 = Clock::now();
  if (info.create_program) {
    out.program = info.create_program(ctx);
    out.prepare_s = seconds_since(t0);
    out.step = out.program->step_plan();
    out.training = program_training_plan(*out.program);
    return out;
  }
  // Before the workload launches anything (its setup runs kernels too).
  if (ctx.spec.backend == Backend::kCuda) ctx.device_ops()->set_launch_checks(ctx.spec.check_launches);
  if (info.create_trainable) {
    std::unique_ptr<TrainableBenchmark> trainable = info.create_trainable(ctx);
    out.trainable = trainable.get();
    out.bench = std::move(trainable);
  } else {
    out.bench = info.create_timed_step(ctx);
  }
  out.prepare_s = seconds_since(t0);
  out.step = out.bench->step_plan();
  out.training = out.bench->training_plan();
  apply_roofline_floor(out.step.work, ctx.spec.backend, ctx.device);
  if (ctx.spec.backend == Backend::kCuda) {
    check_device_memory(fmt::format("{} (preset {})", info.name, ctx.spec.preset_label()), out.step.device_bytes,
                        ctx.device, out.step.device_bytes_advice);
  }
  if (out.step.batch_size < 1) {
    throw Error(fmt::format("internal: {} produced an empty step plan", info.name));
  }
  if (out.training && (out.training->iterations_per_epoch < 1 || out.training->max_epochs < 1)) {
    throw Error(fmt::format("internal: {} produced an empty training plan", info.name));
  }
  if (ctx.spec.mode == RunMode::kTimeToTrain && !out.training) {
    throw Error(fmt::format("internal: {} has no training plan for time-to-train", info.name));
  }
  return out;
}

namespace {

/// One seed of --mode inference: the workload's engine for the seed, one
/// LoadGen test of it into LOG_STEM_loadgen/ beside the run's log (LoadGen's
/// own summary, detail and accuracy files; its trace is off), and LoadGen's outcome as
/// the run: its throughput the score, its verdict and latencies the record.
/// No perflab MLLOG: LoadGen's detail log is the inference compliance log.
RunRecord run_inference_seed(const RunContext& ctx, PreparedBenchmark& prepared, uint64_t seed,
                             const std::filesystem::path& log_path) {
  const RunSpec& spec = ctx.spec;
  RunRecord rec;
  rec.seed = seed;
  auto init_t0 = Clock::now();
  std::unique_ptr<InferenceEngine> engine = prepared.bench->start_inference(seed, spec.inference.max_batch);
  if (!engine) throw Error(fmt::format("internal: {} has no inference engine", spec.workload));
  rec.init_s = seconds_since(init_t0);
  InferenceSettings settings = spec.inference;
  settings.seed = seed;
  const std::string folder = log_path.stem().string() + "_loadgen";
  auto t0 = Clock::now();
  const InferenceRunOutcome out = run_inference(*engine, settings, log_path.parent_path() / folder);
  rec.measured_s = seconds_since(t0);
  const LoadgenOutcome& lg = out.loadgen;
  rec.samples = out.batches.samples;
  rec.throughput = lg.samples_per_second.value_or(0);
  rec.success = true;
  rec.status = "success";
  rec.reason = lg.verdict.empty() ? fmt::format("LoadGen {} {}: no performance verdict (accuracy run)", lg.scenario, lg.mode)
                                  : fmt::format("LoadGen {} {}: {}{}", lg.scenario, lg.mode, lg.verdict,
                                                lg.invalid_reason.empty() ? "" : " (" + lg.invalid_reason + ")");
  nlohmann::json j = loadgen_outcome_to_json(lg);
  j["batches"] = {{"batches", out.batches.batches}, {"samples", out.batches.samples}, {"largest", out.batches.largest}};
  j["settings"] = inference_settings_to_json(settings);
  j["loadgen_folder"] = folder;
  if (!out.engine.is_null()) j["engine"] = out.engine;
  rec.inference = std::move(j);
  rec.log_file = folder + "/mlperf_log_detail.txt";
  return rec;
}

}  // namespace

RunRecord run_seed(const RunContext& ctx, PreparedBenchmark& prepared, uint64_t seed,
                   const std::filesystem::path& log_path, const std::string& platform,
                   const std::function<void(const RunRecord&)>& on_eval) {
  namespace k = mllog;
  const RunSpec& spec = ctx.spec;
  if (prepared.program) return run_program_seed(*prepared.program, seed, log_path, on_eval);
  if (spec.mode == RunMode::kInference) return run_inference_seed(ctx, prepared, seed, log_path);
  omp_set_num_threads(spec.threads);
  RunRecord rec;
  rec.seed = seed;
  rec.log_file = log_path.filename().string();
  MllogWriter log(ctx.rank() == 0 ? log_path.string() : std::string());
  PERFLAB_MLLOG(log, k::kCacheClear, true);
  PERFLAB_MLLOG(log, k::kInitStart, nullptr);
  auto init_t0 = Clock::now();
  log_init_keys(log, spec, prepared, platform, seed);
  std::unique_ptr<TimedStep> step;
  TrainableModel* model = nullptr;
  if (spec.mode == RunMode::kTimeToTrain) {
    if (!prepared.trainable) throw Error(fmt::format("internal: {} cannot be trained", spec.workload));
    std::unique_ptr<TrainableModel> m = prepared.trainable->start_model(seed);
    model = m.get();
    step = std::move(m);
  } else {
    step = prepared.bench->start_step(seed);
  }
  detail::SeedStep seed_step(*step, ctx);
  rec.init_s = seconds_since(init_t0);
  PERFLAB_MLLOG(log, k::kInitStop, nullptr);

  const int64_t run_start_ms = PERFLAB_MLLOG(log, k::kRunStart, nullptr);
  if (spec.mode == RunMode::kThroughput) {
    detail::run_throughput(ctx, prepared, seed_step, log, run_start_ms, rec);
  } else {
    TrainToTarget(ctx, *prepared.training, prepared.step.batch_size, log)
        .run(*model, seed_step, run_start_ms, rec, [&] {
          if (on_eval) on_eval(rec);
        });
  }
  step->end_of_run();
  return rec;
}

Score score_records(const std::vector<RunRecord>& runs, RunMode mode) {
  std::vector<RunOutcome> outcomes;
  for (const auto& r : runs) outcomes.push_back(r.outcome());
  return score_runs(outcomes, mode);
}

ToggleSet toggles_as_run(const ToggleSet& spec, const std::vector<RunRecord>& runs) {
  ToggleSet out = spec;
  // A toggle any run could not honour was not in effect.
  for (const auto& r : runs) {
    for (const auto& [toggle, state] : r.toggle_outcomes) {
      if (out[toggle].in_effect && !state.in_effect) {
        out[toggle].in_effect = false;
        out[toggle].reason = state.reason;
      }
    }
  }
  ToggleState& graphs = out[Toggle::kCudaGraphs];
  if (!graphs.in_effect) return out;
  for (const auto& r : runs) {
    if (r.execution && r.execution->graphs_used) return out;
  }
  graphs.in_effect = false;
  graphs.reason = "no iteration replayed a captured graph";
  for (const auto& r : runs) {
    if (r.execution) {
      graphs.reason = "graphs " + r.execution->graphs_note;
      break;
    }
  }
  if (runs.empty()) graphs.reason = "no run";
  return out;
}

}  // namespace perflab
