// Throughput mode: warm-up iterations, then a fixed number of timed ones,
// then a correctness gate that fails the run when the workload's output
// disagrees with its reference (or a device step made host syncs it does
// not declare). MLLOG keeps its fixed points (run_start, one block/epoch,
// train_loss when the step has a loss, run_stop); the gate is logged as
// perflab_correctness.
#include <cmath>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/interrupt.h"
#include "harness/kernel_profile.h"
#include "harness/mllog_keys.h"
#include "harness/run_phases.h"

namespace perflab::detail {
namespace {

/// A run stopped by SIGINT/SIGTERM before its last iteration: no gate (its
/// output is of an unfinished run), run_stop aborted with the reason.
void end_interrupted(MllogWriter& log, RunRecord& rec, IterationTimes& times, int64_t done, int64_t total,
                     int64_t batch, int64_t run_start_ms) {
  namespace k = mllog;
  PERFLAB_MLLOG(log, k::kEpochStop, nullptr, {{"epoch_num", 1}});
  PERFLAB_MLLOG(log, k::kBlockStop, nullptr, {{"first_epoch_num", 1}, {"samples_count", done * batch}});
  rec.success = false;
  rec.status = "aborted";
  rec.reason = fmt::format("interrupted by {} after {} of {} iterations", signal_name(interrupt_signal()), done,
                           total);
  rec.time_to_train_s =
      logged_seconds(run_start_ms, PERFLAB_MLLOG(log, k::kRunStop, nullptr, {{"status", rec.status}, {"reason", rec.reason}}));
  times.summarize_into(rec);
  rec.iterations = done;
  rec.samples = done * batch;
}

/// After the timed window: runs `count` iterations from `first` under the profiler (CUPTI activity,
/// the phase ranges, the step's declared launches), timed by their own CUDA
/// events; the per-kernel table goes into rec.profile, the records into
/// rec.activity for a trace. Returns the next iteration.
int64_t profile_window(const RunContext& ctx, SeedStep& step, int64_t first, int64_t count, RankTimes rank_times,
                       RunRecord& rec) {
  if (!step.timer()) {
    throw UsageError(fmt::format("--profile: {} runs its step on the host here; nothing to profile",
                                 ctx.spec.workload));
  }
  IterationTimes times(step, 0, ctx.comm, rank_times);
  int64_t i = first;
  {
    step.start_profile();
    ScopedPhase window("profiled window");
    for (; i < first + count && !interrupted(); ++i) rec.train_s += times.time(i);
  }
  auto [log, declared] = step.stop_profile();
  RunRecord profiled;
  times.summarize_into(profiled);
  const int64_t ran = i - first;
  if (ran < 1) return i;
  const kernels::DevicePeaks peaks = ctx.device.peaks ? ctx.device.peaks->roofline() : kernels::DevicePeaks{};
  rec.profile = build_kernel_profile(log, ran, times.device_seconds() * 1e6, declared,
                                     ctx.device.peaks ? &peaks : nullptr, ctx.device.peaks_missing);
  rec.profile->profiled_iteration_ms = profiled.iteration_ms.p50;
  if (ctx.spec.profile == ProfileMode::kTrace) rec.activity = std::move(log);
  return i;
}

}  // namespace

void run_throughput(const RunContext& ctx, const PreparedBenchmark& prepared, SeedStep& step,
                    MllogWriter& log, int64_t run_start_ms, RunRecord& rec) {
  namespace k = mllog;
  const RunSpec& spec = ctx.spec;
  const int64_t batch = prepared.step.batch_size;
  const int64_t warmup = spec.warmup_iterations;
  const int64_t profiled = profiled_iterations(spec);
  const int64_t total = warmup + profiled + spec.iterations;
  PERFLAB_MLLOG(log, k::kBlockStart, nullptr,
                {{"first_epoch_num", 1}, {"epoch_count", 1}, {"samples_count", 0}});
  PERFLAB_MLLOG(log, k::kEpochStart, nullptr, {{"epoch_num", 1}});
  IterationTimes times(step, warmup, ctx.comm, prepared.step.rank_times);
  int64_t done = 0;
  for (; done < warmup && !interrupted(); ++done) rec.train_s += times.time(done);
  step.synchronize();
  ctx.comm.barrier();
  auto t0 = Clock::now();
  const int64_t timed_end = warmup + spec.iterations;
  for (; done < timed_end && !interrupted(); ++done) rec.train_s += times.time(done);
  step.synchronize();
  rec.measured_s = seconds_since(t0);
  times.collect();  // the timed window's device times, before a profiled window's
  // The profiled window after the timed one: whatever CUPTI costs, the
  // headline numbers were taken before it started.
  if (profiled > 0 && done == timed_end && !interrupted()) {
    ctx.comm.barrier();
    done = profile_window(ctx, step, done, profiled, prepared.step.rank_times, rec);
  }
  if (done < total) {
    end_interrupted(log, rec, times, done, total, batch, run_start_ms);
    return;
  }
  PERFLAB_MLLOG(log, k::kEpochStop, nullptr, {{"epoch_num", 1}});
  PERFLAB_MLLOG(log, k::kBlockStop, nullptr,
                {{"first_epoch_num", 1}, {"samples_count", total * batch}});

  const double loss = step.step().take_loss();
  const bool has_loss = !std::isnan(loss) || prepared.training.has_value();
  if (has_loss) {
    nlohmann::ordered_json meta = {{"epoch_num", 1.0}, {"samples_count", total * batch}};
    PERFLAB_MLLOG(log, k::kTrainLoss, loss, meta);
  }
  CorrectnessReport gate = step.step().check_correctness();
  if (gate.passed && has_loss && !std::isfinite(loss)) {
    gate.passed = false;
    gate.detail = fmt::format("loss is {} ({})", loss, gate.detail);
  }
  rec.execution = step.execution();
  rec.toggle_outcomes = step.step().toggle_outcomes();
  rec.facts = step.step().run_facts();
  rec.parts = step.time_parts(ctx.comm, spec.warmup_iterations);
  add_execution_to_gate(rec.execution, gate);
  PERFLAB_MLLOG(log, k::kPerflabCorrectness, gate.passed,
                {{"detail", gate.detail}, {"iterations", spec.iterations}});
  rec.correctness = gate;
  rec.success = gate.passed;
  rec.status = gate.passed ? "success" : "aborted";
  rec.reason = gate.passed ? "correctness gate passed: " + gate.detail
                           : "correctness gate failed: " + gate.detail;
  nlohmann::ordered_json stop = {{"status", rec.status}};
  if (!rec.success) stop["reason"] = rec.reason;
  rec.time_to_train_s = logged_seconds(run_start_ms, PERFLAB_MLLOG(log, k::kRunStop, nullptr, stop));

  times.summarize_into(rec);
  if (rec.profile) rec.profile->unprofiled_iteration_ms = rec.iteration_ms.p50;
  rec.iterations = total;
  rec.samples = total * batch;
  if (prepared.training) {
    rec.epochs = static_cast<double>(total) / static_cast<double>(prepared.training->iterations_per_epoch);
  }
  const double measured_samples = static_cast<double>(spec.iterations * batch);
  rec.throughput = rec.measured_s > 0 ? measured_samples / rec.measured_s : 0;
}

}  // namespace perflab::detail
