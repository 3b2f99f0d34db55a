// Sweeps: the cartesian product of workloads x parameters x toggles x seeds,
// from a sweep file (YAML) or from comma lists on the command line. Every run
// (one point, one seed) is keyed by a hash of its resolved spec and stored in
// its own folder, so an interrupted sweep resumes where it stopped and never
// reruns a finished run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/invocation.h"
#include "harness/run_spec.h"
#include "harness/runner.h"

namespace perflab {

/// How the learning rate follows the batch size in a batch-size sweep.
struct LrRule {
  std::string rule = "fixed";  ///< linear | sqrt | fixed
  int64_t base_batch_size = 0;
  double base_learning_rate = 0;
  std::optional<int64_t> warmup_steps;  ///< Applied to every point when given.
  /// The learning rate for `batch_size`: base * (b / base_b), base * sqrt(b / base_b), or base.
  double learning_rate(int64_t batch_size) const;
};

/// Values to sweep: each parameter and toggle maps to the list of its values.
struct SweepAxes {
  std::vector<std::string> workloads;
  std::vector<std::string> presets;  ///< Empty: each workload's default.
  std::map<std::string, std::vector<std::string>> params;
  std::map<Toggle, std::vector<bool>> toggles;
  std::optional<LrRule> lr_rule;
  /// --mode inference: LoadGen target rates to sweep (a sweep file's
  /// `inference: {target_qps: [..]}`); empty: base's one. A Server point's
  /// peak is the highest target that stays VALID.
  std::vector<double> target_qps;
};

/// A sweep, expanded: the points to run and where their results go.
struct SweepPlan {
  std::string name;                   ///< Folder under out_dir.
  std::filesystem::path out_dir;
  std::vector<RunRequest> points;     ///< One per combination; each carries the seeds.
  nlohmann::json definition;          ///< What the user asked for, recorded in sweep.json.
  /// `ntasks:` ranks every run takes: a local sweep must be started on that
  /// many (mpirun -np N, srun -n N), a SLURM sweep submits jobs of that many.
  std::optional<int> ntasks;
};

/// The cartesian product of `axes` applied to `base` (seeds, backend,
/// threads come from base). An lr_rule sets each point's learning rate
/// through the parameters its workload declares (WorkloadInfo::batch_param,
/// learning_rate_param, warmup_param). Throws UsageError for an empty
/// product, one of more than kMaxSweepPoints points (before expanding it),
/// or an lr_rule its workload cannot follow.
std::vector<RunRequest> expand_sweep(const RunRequest& base, const SweepAxes& axes);

/// The most points (combinations, before seeds) one sweep may have: more is
/// almost always a typo, and every point is resolved before anything runs.
inline constexpr size_t kMaxSweepPoints = 10000;
/// The most ranks a sweep's runs may take (`ntasks:`, --ntasks).
inline constexpr int kMaxRanks = 4096;

/// Reads a sweep file. Unknown keys, wrong types, invalid parameter or
/// toggle values, counts out of range, an empty product and one of more than
/// kMaxSweepPoints points throw UsageError "file:line: reason".
SweepPlan read_sweep_file(const std::filesystem::path& path);

/// The same for sweep-file text; `path` names it in errors and its stem is
/// the default sweep name.
SweepPlan parse_sweep_text(const std::string& yaml, const std::filesystem::path& path);

/// The key of one run: a hash of the resolved spec with a single seed, as
/// 16 hex digits. Equal specs give equal keys on any machine.
std::string run_key(const RunSpec& spec, uint64_t seed);

/// 16 hex digits of a stable 64-bit hash (FNV-1a) of `text`.
std::string stable_hash(const std::string& text);

/// How a run is named in progress lines and statuses, e.g.
/// "dlrm tiny batch_size=512 --cuda-graphs seed 3".
std::string run_label(const RunSpec& spec, uint64_t seed);

/// Whether `dir` holds a readable result that was not interrupted: a
/// finished run, which a sweep never runs again.
bool finished_run(const std::filesystem::path& dir);

/// Resolves every point of `plan` (an invalid one throws before anything
/// runs) and, when `record`, creates DIR/runs and records the plan in
/// DIR/sweep.json (rank 0). Returns the specs, one per point. `ranks` > 0:
/// the runs take that many ranks (a SLURM sweep's jobs), not the session's.
std::vector<RunSpec> resolve_sweep(Session& session, const SweepPlan& plan, bool record = true, int ranks = 0);

/// What the sweep runner tells its observer.
struct SweepEvent {
  enum class Kind { kRunStarted, kRunFinished, kRunSkipped } kind;
  size_t done = 0;    ///< Runs finished or found finished so far.
  size_t total = 0;   ///< Runs in the sweep.
  std::string label;  ///< The point, e.g. "dlrm tiny batch_size=512 seed 3".
  const RunRecord* run = nullptr;  ///< For kRunFinished.
};
using SweepObserver = std::function<void(const SweepEvent&)>;

struct SweepOutcome {
  size_t total = 0;      ///< Runs in the sweep.
  size_t reused = 0;     ///< Found finished from an earlier invocation.
  size_t ran = 0;        ///< Run now.
  size_t aborted = 0;    ///< Of those run now, how many missed their target.
  std::string interrupted;  ///< "SIGINT"/"SIGTERM" when a signal stopped the sweep.
  std::filesystem::path dir;  ///< out_dir/name.
};

/// Runs every run of `plan` that has no result yet. Every point is resolved
/// (validated) before anything runs. Results go to
/// DIR/runs/<key>/{result.json,run_0.log}; DIR/sweep.json records the plan.
/// Each run goes through the invocation pipeline (harness/invocation.h).
SweepOutcome run_sweep(Session& session, const SweepPlan& plan, const SweepObserver& observer = {});

}  // namespace perflab
