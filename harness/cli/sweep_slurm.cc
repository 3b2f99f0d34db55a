// `perflab sweep FILE --launcher slurm | --status`, and the hidden
// `--run-job` a submitted job runs: the CLI over harness/sweep_launcher.h.
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "harness/cli/reporting.h"
#include "harness/cli/sweep_command.h"
#include "harness/interrupt.h"
#include "harness/sweep_launcher.h"

namespace perflab::cli {
namespace {

/// --status: no run failed or unsubmitted, but some are queued or running.
constexpr int kSweepPending = 3;
/// --status: no run failed, but some were never submitted.
constexpr int kSweepUnsubmitted = 4;

/// "4 run(s): 2 done, 1 running, 1 queued, 0 failed, 0 not submitted".
std::string tally(const std::vector<SweepRunStatus>& runs) {
  std::map<slurm::RunState, size_t> count;
  for (const SweepRunStatus& run : runs) ++count[run.status.state];
  using S = slurm::RunState;
  return fmt::format("{} run(s): {} done, {} running, {} queued, {} failed, {} not submitted", runs.size(),
                     count[S::kDone], count[S::kRunning], count[S::kQueued], count[S::kFailed],
                     count[S::kNotSubmitted]);
}

bool all_done(const std::vector<SweepRunStatus>& runs) {
  for (const SweepRunStatus& run : runs) {
    if (run.status.state != slurm::RunState::kDone) return false;
  }
  return true;
}

/// With every run done, the sweep's reports, as a local sweep writes them at its end.
void report_when_done(const SweepPlan& plan, const std::vector<SweepRunStatus>& runs) {
  if (!all_done(runs)) return;
  const std::filesystem::path dir = plan.out_dir / plan.name;
  write_reports({dir / "runs"}, dir, "perflab sweep " + plan.name);
  std::cout << fmt::format("results: {}/runs/*/result.json\nreport:  {}/report.html (also .md, .csv, .json)\n",
                           dir.string(), dir.string());
}

}  // namespace

int sweep_status_command(const SweepPlan& plan, int ntasks) {
  Session session;
  const std::vector<RunSpec> specs = resolve_sweep(session, plan, /*record=*/false, ntasks);
  const std::vector<SweepRunStatus> runs = sweep_status(specs, plan.out_dir / plan.name);
  std::cout << fmt::format("{:<14} {:<10} {:<16}  {}\n", "STATE", "JOB", "KEY", "RUN");
  for (const SweepRunStatus& run : runs) {
    std::string line = fmt::format("{:<14} {:<10} {:<16}  {}", slurm::run_state_name(run.status.state),
                                   run.job_id.empty() ? "-" : run.job_id, run.key, run.label);
    if (!run.status.detail.empty()) line += " (" + run.status.detail + ")";
    std::cout << line << "\n";
  }
  std::cout << fmt::format("sweep {}: {}\n", plan.name, tally(runs));
  // A script waiting on the sweep reads the exit status: 0 every run done,
  // 1 some run failed, 4 some never submitted (waiting will not finish
  // them), 3 the rest queued or running.
  bool failed = false, unsubmitted = false;
  for (const SweepRunStatus& run : runs) {
    failed |= run.status.state == slurm::RunState::kFailed;
    unsubmitted |= run.status.state == slurm::RunState::kNotSubmitted;
  }
  if (failed) return 1;
  if (unsubmitted) return kSweepUnsubmitted;
  return all_done(runs) ? 0 : kSweepPending;
}

int submit_sweep_command(const SweepPlan& plan, const SlurmOptions& options) {
  if (!options.time_limit.empty()) slurm::check_time_limit(options.time_limit);
  check_sbatch();  // before anything is written
  Session session;
  const std::vector<RunSpec> specs = resolve_sweep(session, plan, /*record=*/true, options.ntasks);
  const std::filesystem::path dir = plan.out_dir / plan.name;
  const SubmitOutcome outcome = submit_sweep(specs, dir, options);
  std::cout << fmt::format("sweep {}: {}; {} job(s) submitted now; perflab sweep FILE --status shows them\n",
                           plan.name, tally(outcome.runs), outcome.submitted);
  report_when_done(plan, outcome.runs);
  return 0;
}

int run_job_command(const std::string& run_file) {
  Session session;
  InterruptGuard guard;
  const int status = run_sweep_job(session, run_file);
  if (session.comm().rank() == 0) {
    std::cout << fmt::format("perflab: run {}: {}\n", run_file, status == 0 ? "succeeded" : "did not succeed");
  }
  if (interrupted()) return 128 + interrupt_signal();
  return status;
}

}  // namespace perflab::cli
