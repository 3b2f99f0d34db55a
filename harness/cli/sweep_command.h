// Running a sweep from the CLI (sweep files and comma lists in `perflab run`):
// progress display, the sweep's reports and the summary.
#pragma once

#include "harness/sweep.h"
#include "harness/sweep_launcher.h"

namespace perflab::cli {

/// Runs `plan` with progress on stderr (live on a terminal, one line per run
/// otherwise), then writes the reports into the sweep folder. Returns the
/// exit code: 0 when every run reached its target, 1 otherwise.
int execute_sweep(const SweepPlan& plan, bool dry_run);

/// `--launcher slurm`: submits a job per run that is neither done nor
/// queued or running; prints the tally. With every run done, writes the
/// sweep's reports. Returns 0.
int submit_sweep_command(const SweepPlan& plan, const SlurmOptions& options);

/// `--status`: one line per run (state, job, key, run) and the tally. Returns 0.
int sweep_status_command(const SweepPlan& plan, int ntasks);

/// `--run-job FILE` (inside a submitted job): the one run FILE describes.
/// Returns 0 when it succeeded, 1 when it did not, 128 + N on signal N.
int run_job_command(const std::string& run_file);

}  // namespace perflab::cli
