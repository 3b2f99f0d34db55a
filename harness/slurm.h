// SLURM as a sweep launcher, the pure parts: what SLURM's job states mean
// for a sweep's run, reading squeue / sacct / sbatch output, checking
// sbatch's time format, and the job script of one run. The commands
// themselves are called by harness/sweep_launcher.cc.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace perflab::slurm {

/// Where one run of a sweep stands, as `perflab sweep FILE --status` says it.
enum class RunState { kNotSubmitted, kQueued, kRunning, kDone, kFailed };

/// "not submitted", "queued", "running", "done", "failed".
const char* run_state_name(RunState state);

/// What a SLURM job state word (squeue's %T, sacct's State) means here.
enum class JobPhase {
  kQueued,    ///< PENDING, CONFIGURING, REQUEUED, held: not started yet.
  kRunning,   ///< RUNNING, COMPLETING, SUSPENDED, STAGE_OUT, ...: started, not ended.
  kFinished,  ///< COMPLETED: the job script exited 0.
  kFailed,    ///< FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, ...
  kUnknown,   ///< A word this table does not know.
};

/// The phase of `state`; sacct's "CANCELLED by 0" counts by its first word.
JobPhase job_phase(const std::string& state);

/// Job id -> state word from lines "ID|STATE" (squeue --format=%i|%T,
/// sacct --parsable2 --format=JobID,State). Blank lines are skipped, and so
/// are job steps ("12.batch", "12.0"): a step's state is not its job's.
/// A line without '|' throws perflab::Error naming it.
std::map<std::string, std::string> parse_job_states(const std::string& text);

/// The job id in `sbatch --parsable` output ("12" or "12;cluster").
/// Anything else throws perflab::Error quoting it.
std::string parse_sbatch_id(const std::string& output);

/// Throws UsageError unless `limit` is one of sbatch's --time formats:
/// M, M:S, H:M:S, D-H, D-H:M, D-H:M:S (digits), or "UNLIMITED"/"INFINITE".
void check_time_limit(const std::string& limit);

/// Everything known about one run when its status is asked.
struct RunEvidence {
  bool result = false;                   ///< runs/<key>/ holds a readable result.
  std::optional<std::string> job_id;     ///< The job last submitted for it.
  std::optional<std::string> job_state;  ///< What squeue or sacct says of that job.
  std::optional<int> exit_status;        ///< What the job script recorded as it ended.
};

/// A run's state and, for a failure, why.
struct RunStatus {
  RunState state = RunState::kNotSubmitted;
  std::string detail;
};

/// A readable result is done whatever SLURM says. Otherwise: no job ->
/// not submitted; a job SLURM has queued or running -> so; a job that ended
/// (by SLURM, or by its recorded exit status once SLURM forgot it) without
/// a result -> failed; a job SLURM no longer knows that recorded nothing ->
/// failed (it was lost: cancelled before it started, or its node died).
RunStatus run_status(const RunEvidence& evidence);

/// `text` as one shell word: in single quotes, with ' written as '\''.
std::string shell_quote(const std::string& text);
/// `text` as is when the shell reads it as one word unchanged (letters,
/// digits and -_./=:,+@%), else shell_quote(text): for commands shown to a reader.
std::string shell_quote_if_needed(const std::string& text);

/// One run's job script.
struct JobScript {
  std::string job_name;
  std::string comment;       ///< One line saying which run this is.
  std::string workdir;       ///< The job starts here (where sbatch was called).
  std::string output;        ///< The job's stdout and stderr.
  int ntasks = 1;            ///< Ranks; more than 1 are started with `launcher`.
  std::string launcher;      ///< E.g. "srun --mpi=pmix"; unused for 1 task.
  std::string partition;     ///< Empty: the cluster's default.
  std::string time_limit;    ///< Empty: the partition's default.
  std::string perflab;       ///< Absolute path of the perflab binary.
  std::string run_file;      ///< The run's spec, handed to `perflab sweep --run-job`.
  std::string exit_file;     ///< The script writes perflab's exit status here, atomically.
  /// An array job instead of one run: the file listing one run file per
  /// line (<key>.json); task i runs line i + 1, writes its output to
  /// <key>.out and its exit status to <key>.exit. Empty: one run.
  std::string run_list;
  int array_size = 0;   ///< Tasks 0 .. array_size - 1 (with run_list).
  int array_limit = 0;  ///< At most this many tasks at once (sbatch's %N); 0: no limit.
};

/// A POSIX sh batch script: perflab on the run (through `launcher` for
/// more than one task), then its exit status written to exit_file (through
/// a temporary and mv), then exit with that status. Every path is quoted.
/// With run_list, the run and both files come from the task's line.
std::string job_script(const JobScript& job);

/// sbatch's arguments for `job` with its script at `script` (--parsable,
/// name, output, chdir, ntasks, partition, time, and --array=0-(size-1)[%limit]
/// for an array job): given as arguments, not
/// #SBATCH lines, so no path or name needs quoting for sbatch's parser.
std::vector<std::string> sbatch_arguments(const JobScript& job, const std::string& script);

}  // namespace perflab::slurm
