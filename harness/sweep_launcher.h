// A sweep through SLURM: every pending (point, seed) becomes one batch job
// that runs perflab on exactly that run, into the same OUT/NAME/runs/<key>/
// a local sweep uses. What was submitted is recorded in OUT/NAME/slurm/
// (jobs.json, and per run <key>.json, <key>.sh, <key>.out, <key>.exit), so
// the sweep's status can be asked later and submitting again sends only
// the runs that are neither done nor queued or running.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/invocation.h"
#include "harness/slurm.h"
#include "harness/sweep.h"

namespace perflab {

/// How runs are submitted.
struct SlurmOptions {
  std::string partition;   ///< sbatch --partition; empty: the default.
  std::string time_limit;  ///< sbatch --time; empty: the partition's default.
  int ntasks = 1;          ///< Ranks per run.
  bool array = false;      ///< One array job (a task per run) instead of a job per run.
  int array_limit = 0;     ///< Array: at most this many tasks at once; 0: no limit.
};

/// One run of a sweep and where it stands.
struct SweepRunStatus {
  std::string key;
  std::string label;
  std::string job_id;  ///< Empty: never submitted.
  slurm::RunStatus status;
};

/// Every (point, seed) of `specs` (resolve_sweep's), in order, with its
/// state: a readable result is done; otherwise what SLURM (squeue, then
/// sacct where accounting is on) says of its recorded job, or what the job
/// recorded as it ended. Throws Error when jobs are recorded but squeue
/// cannot be run.
std::vector<SweepRunStatus> sweep_status(const std::vector<RunSpec>& specs,
                                         const std::filesystem::path& sweep_dir);

/// What a submission did.
struct SubmitOutcome {
  std::vector<SweepRunStatus> runs;  ///< Every run, as it stands after submitting.
  size_t submitted = 0;              ///< Jobs submitted now.
};

/// Throws Error (one line) when sbatch is not on PATH.
void check_sbatch();

/// Submits one job per run that is neither done nor queued or running (or,
/// with options.array, one array job whose task i is the i-th of them),
/// recording each job id ("123", or "123_4" for an array task; jobs.json,
/// rewritten atomically after every submission). Throws Error when sbatch is missing or refuses a job (runs
/// submitted before stay recorded).
SubmitOutcome submit_sweep(const std::vector<RunSpec>& specs, const std::filesystem::path& sweep_dir,
                           const SlurmOptions& options);

/// Inside a job: runs the one run that `run_file` (a <key>.json written
/// by submit_sweep) describes into its sweep's runs/<key>/. A run already
/// done is not run again. Throws UsageError when this machine resolves the
/// run to another key (another thread count or backend than where it was
/// submitted). Returns the exit status: 0 when the run succeeded.
int run_sweep_job(Session& session, const std::filesystem::path& run_file);

}  // namespace perflab
