// `perflab sweep FILE`: run every point of a sweep file, resuming where an
// earlier invocation stopped, then write the sweep's reports; or submit
// its runs to SLURM (--launcher slurm) and say where they stand (--status).
#include <optional>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/sweep_command.h"
#include "base/error.h"
#include "harness/sweep.h"

namespace perflab::cli {
namespace {

struct SweepArgs {
  std::string file;
  std::string out;
  bool dry_run = false;
  bool status = false;
  std::string launcher = "local";
  SlurmOptions slurm;
  std::optional<int> ntasks;
  std::string run_job;
};

int sweep(const SweepArgs& a) {
  if (!a.run_job.empty()) return run_job_command(a.run_job);
  if (a.file.empty()) throw UsageError("sweep: a sweep file is required (see perflab sweep --help)");
  const bool slurm = a.launcher == "slurm";
  if (!slurm && (!a.slurm.partition.empty() || !a.slurm.time_limit.empty() || a.slurm.array ||
                 a.slurm.array_limit > 0)) {
    throw UsageError("--partition, --time, --array and --array-limit go with --launcher slurm");
  }
  if (a.slurm.array_limit > 0 && !a.slurm.array) throw UsageError("--array-limit goes with --array");
  if (!slurm && !a.status && a.ntasks) {
    throw UsageError("--ntasks goes with --launcher slurm or --status (a local sweep takes the ranks it is started "
                     "on: mpirun -np N perflab sweep FILE)");
  }
  if (a.dry_run && (a.status || slurm)) throw UsageError("--dry-run runs nothing: leave out --status and --launcher");
  SweepPlan plan = read_sweep_file(a.file);
  if (!a.out.empty()) plan.out_dir = a.out;
  SlurmOptions options = a.slurm;
  // Ranks per run: --ntasks, else the file's ntasks:, else 1; both, they must agree.
  if (a.ntasks && plan.ntasks && *a.ntasks != *plan.ntasks) {
    throw UsageError(fmt::format("--ntasks {} disagrees with the sweep file's ntasks: {}", *a.ntasks, *plan.ntasks));
  }
  options.ntasks = a.ntasks ? *a.ntasks : plan.ntasks.value_or(1);
  if (a.status) return sweep_status_command(plan, options.ntasks);
  if (slurm) return submit_sweep_command(plan, options);
  return execute_sweep(plan, a.dry_run);
}

}  // namespace

Command add_sweep(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "sweep", "Run a sweep file: workloads x params x toggles x seeds, resumable (here or through SLURM)");
  auto a = std::make_shared<SweepArgs>();
  sub->add_option("file", a->file, "Sweep file (YAML); see README 'Sweeps'");
  sub->add_option("--out,-o", a->out, "Results folder (overrides the file's out:)");
  sub->add_flag("--dry-run", a->dry_run, "List the points without running them");
  sub->add_option("--launcher", a->launcher, "local (run here, default) or slurm (one sbatch job per run)")
      ->check(CLI::IsMember({"local", "slurm"}));
  sub->add_option("--partition", a->slurm.partition, "slurm: sbatch --partition");
  sub->add_option("--time", a->slurm.time_limit, "slurm: sbatch --time (e.g. 30, 1:00:00, 1-0)");
  sub->add_option("--ntasks", a->ntasks,
                  "slurm: ranks per run (started with srun --mpi=pmix or mpirun); default: the file's ntasks:, "
                  "else 1. --status needs it too when the file has no ntasks:")
      ->check(CLI::Range(1, kMaxRanks));
  sub->add_flag("--array", a->slurm.array, "slurm: submit the pending runs as one array job (a task per run)");
  sub->add_option("--array-limit", a->slurm.array_limit, "slurm: with --array, at most N tasks at once (sbatch %N)")
      ->check(CLI::Range(1, 100000));
  sub->add_flag("--status", a->status, "Each run's state: done, queued, running, failed, not submitted; exit status 0 all done, 1 some "
                "failed, 4 some not submitted, 3 the rest queued or running");
  sub->add_option("--run-job", a->run_job, "internal: the one run a submitted job runs")->group("");
  sub->footer(
      "Every run (point x seed) is stored under OUT/NAME/runs/<key>/, keyed by a hash of its\n"
      "resolved spec: running the same sweep again skips finished runs. Reports (Markdown,\n"
      "CSV, JSON, HTML) are written to OUT/NAME/ at the end.\n"
      "--launcher slurm submits one batch job per run that is neither done nor queued or\n"
      "running, or with --array one array job of them (job scripts, job ids and the jobs'\n"
      "output in OUT/NAME/slurm/); the same\n"
      "command again submits only what is missing, and writes the reports once every run is\n"
      "done. --status asks squeue (and sacct, where accounting is on) where each run stands.");
  return {sub, [a] { return sweep(*a); }};
}

}  // namespace perflab::cli
