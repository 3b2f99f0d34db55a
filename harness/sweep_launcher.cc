// Sweeps through SLURM: submit one job per pending run, ask where each run
// stands, and run one run inside a job.
#include "harness/sweep_launcher.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/atomic_file.h"
#include "base/error.h"
#include "harness/input_file.h"
#include "harness/json_text.h"
#include "harness/subprocess.h"
#include "base/text.h"
#include "base/utc_time.h"

namespace perflab {
namespace {

namespace fs = std::filesystem;

/// Tasks per array job: SLURM's default MaxArraySize (1001) allows indices 0..1000.
constexpr size_t kMaxArrayTasks = 1000;

fs::path slurm_dir(const fs::path& sweep_dir) { return sweep_dir / "slurm"; }
fs::path jobs_file(const fs::path& sweep_dir) { return slurm_dir(sweep_dir) / "jobs.json"; }


/// jobs.json: key -> {job_id, label, submitted}. Absent: nothing submitted.
nlohmann::json read_jobs(const fs::path& sweep_dir) {
  const fs::path path = jobs_file(sweep_dir);
  if (!fs::exists(path)) return nlohmann::json::object();
  nlohmann::json doc = parse_json_text(read_document(path));
  if (!doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_object()) {
    throw Error(fmt::format("{}: not a perflab job record (remove it to forget the submitted jobs)",
                            path.string()));
  }
  return doc["jobs"];
}

/// The exit status a job's script recorded, if it got that far.
std::optional<int> recorded_exit(const fs::path& sweep_dir, const std::string& key) {
  std::ifstream in(slurm_dir(sweep_dir) / (key + ".exit"));
  int status = 0;
  if (in >> status) return status;
  return std::nullopt;
}

/// The first line of what a failed command printed, for an error line.
std::string first_line(const ProgramOutput& out) {
  const std::string& text = out.err.empty() ? out.out : out.err;
  return text.substr(0, text.find('\n'));
}

/// What SLURM says of `ids`: squeue for the jobs it still holds, then sacct
/// (where accounting is on) for the ones it has forgotten.
std::map<std::string, std::string> ask_slurm(const std::vector<std::string>& ids) {
  std::map<std::string, std::string> states;
  if (ids.empty()) return states;
  if (!find_program("squeue")) {
    throw Error(fmt::format("squeue not found on PATH: cannot ask SLURM about the {} submitted job(s) "
                            "(Debian: slurm-client)",
                            ids.size()));
  }
  const ProgramOutput q =
      run_program({"squeue", "--noheader", "--array", "--states=all", "--format=%i|%T", "--jobs=" + join(ids, ",")});
  if (q.exit_status == 0) {
    states = slurm::parse_job_states(q.out);
  } else if (q.err.find("Invalid job id") == std::string::npos) {  // that one: none of them is known
    throw Error(fmt::format("squeue failed (exit status {}): {}", q.exit_status, first_line(q)));
  }
  std::vector<std::string> forgotten;
  for (const std::string& id : ids) {
    if (!states.count(id)) forgotten.push_back(id);
  }
  if (!forgotten.empty() && find_program("sacct")) {
    const ProgramOutput a = run_program({"sacct", "--noheader", "--parsable2", "--allocations",
                                         "--format=JobID,State", "--jobs=" + join(forgotten, ",")});
    // Without accounting sacct fails; the jobs' own exit records decide then.
    if (a.exit_status == 0) states.merge(slurm::parse_job_states(a.out));
  }
  return states;
}

/// Where `srun` or `mpirun` starts several ranks inside a job: srun with
/// PMIx when SLURM has it (Open MPI then needs no daemons of its own),
/// otherwise Open MPI's mpirun, which uses the job's allocation.
std::string rank_launcher() {
  if (find_program("srun")) {
    const ProgramOutput list = run_program({"srun", "--mpi=list"});
    if (list.exit_status == 0 && (list.out + list.err).find("pmix") != std::string::npos) {
      return "srun --mpi=pmix";
    }
  }
  return "mpirun";
}

}  // namespace

std::vector<SweepRunStatus> sweep_status(const std::vector<RunSpec>& specs, const fs::path& sweep_dir) {
  const nlohmann::json jobs = read_jobs(sweep_dir);
  std::vector<SweepRunStatus> runs;
  for (const RunSpec& spec : specs) {
    for (uint64_t seed : spec.seeds) {
      SweepRunStatus run;
      run.key = run_key(spec, seed);
      run.label = run_label(spec, seed);
      if (jobs.contains(run.key)) run.job_id = jobs[run.key].value("job_id", std::string());
      runs.push_back(std::move(run));
    }
  }
  // SLURM first, results after: a job that ends in between is then seen
  // with its result, never as a finished job without one.
  std::vector<std::string> ids;
  for (const SweepRunStatus& run : runs) {
    if (!run.job_id.empty() && !finished_run(sweep_dir / "runs" / run.key)) ids.push_back(run.job_id);
  }
  const std::map<std::string, std::string> states = ask_slurm(ids);
  for (SweepRunStatus& run : runs) {
    slurm::RunEvidence evidence;
    evidence.result = finished_run(sweep_dir / "runs" / run.key);
    if (!run.job_id.empty()) {
      evidence.job_id = run.job_id;
      auto state = states.find(run.job_id);
      if (state != states.end()) evidence.job_state = state->second;
      evidence.exit_status = recorded_exit(sweep_dir, run.key);
    }
    run.status = slurm::run_status(evidence);
  }
  return runs;
}

void check_sbatch() {
  if (!find_program("sbatch")) {
    throw Error("sbatch not found on PATH: --launcher slurm submits each run with SLURM's sbatch "
                "(Debian: slurm-client)");
  }
}

SubmitOutcome submit_sweep(const std::vector<RunSpec>& specs, const fs::path& sweep_dir,
                           const SlurmOptions& options) {
  check_sbatch();
  const fs::path dir = fs::absolute(sweep_dir);
  ensure_writable_directory(slurm_dir(dir));
  SubmitOutcome outcome;
  outcome.runs = sweep_status(specs, dir);
  nlohmann::json jobs = read_jobs(dir);
  slurm::JobScript common;
  common.job_name = "perflab-" + dir.filename().string();
  common.workdir = fs::current_path().string();
  common.ntasks = options.ntasks;
  // An external program starts its own ranks inside the job's allocation
  // (its command runs srun or mpirun): perflab runs once per job.
  size_t programs = 0;
  for (const RunSpec& spec : specs) programs += spec.workload_file.empty() ? 0 : 1;
  if (options.ntasks > 1 && programs > 0 && programs < specs.size()) {
    throw UsageError("--ntasks above 1: a sweep cannot mix external workloads (perflab runs them once per job and "
                     "their command starts the ranks) with built-in ones (perflab runs on every rank); sweep them "
                     "separately");
  }
  common.launcher = options.ntasks > 1 && programs == 0 ? rank_launcher() : "";
  common.partition = options.partition;
  common.time_limit = options.time_limit;
  common.perflab = this_executable();

  // Every run to submit, its run file written: neither done nor in SLURM's hands.
  std::vector<size_t> pending;
  size_t index = 0;
  for (const RunSpec& spec : specs) {
    for (uint64_t seed : spec.seeds) {
      const SweepRunStatus& run = outcome.runs[index];
      const slurm::RunState state = run.status.state;
      if (state != slurm::RunState::kDone && state != slurm::RunState::kQueued &&
          state != slurm::RunState::kRunning) {
        RunSpec one = spec;
        one.seeds = {seed};
        write_file_atomically(slurm_dir(dir) / (run.key + ".json"), nlohmann::json{{"sweep_dir", dir.string()},
                                                                                   {"key", run.key},
                                                                                   {"seed", seed},
                                                                                   {"spec", one.to_json()}}
                                                                        .dump(2) + "\n");
        std::error_code ignored;
        fs::remove(slurm_dir(dir) / (run.key + ".exit"), ignored);  // an earlier job's ending is not this one's
        pending.push_back(index);
      }
      ++index;
    }
  }
  const auto submit = [&](const slurm::JobScript& job, const fs::path& script, const std::string& what) {
    write_file_atomically(script, slurm::job_script(job));
    const ProgramOutput out = run_program(slurm::sbatch_arguments(job, script.string()));
    if (out.exit_status != 0) throw Error(fmt::format("sbatch refused {}: {}", what, first_line(out)));
    return slurm::parse_sbatch_id(out.out);
  };
  const auto record = [&](SweepRunStatus& run, const std::string& job_id) {
    run.job_id = job_id;
    run.status = {slurm::RunState::kQueued, ""};
    jobs[run.key] = {{"job_id", job_id}, {"label", run.label}, {"submitted", utc_now("%Y-%m-%dT%H:%M:%SZ")}};
  };
  if (pending.empty()) return outcome;

  if (options.array) {
    // One list of run files, one script, one sbatch per array: task i runs
    // line i + 1. Arrays of at most kMaxArrayTasks (SLURM's default
    // MaxArraySize is 1001: indices 0..1000).
    for (size_t chunk = 0; chunk < pending.size(); chunk += kMaxArrayTasks) {
      const size_t n = std::min(kMaxArrayTasks, pending.size() - chunk);
      std::string list;
      for (size_t task = 0; task < n; ++task) {
        const std::string run_file = (slurm_dir(dir) / (outcome.runs[pending[chunk + task]].key + ".json")).string();
        if (run_file.find('\n') != std::string::npos) {
          throw UsageError(fmt::format("--array: the sweep folder's path holds a line break: {}", dir.string()));
        }
        list += run_file + "\n";
      }
      // Unique per submission: time, process and chunk (a job reads its list until it ends).
      const fs::path base = slurm_dir(dir) / fmt::format("array-{}-{}-{}", utc_now("%Y%m%dT%H%M%SZ"),
                                                          static_cast<long>(getpid()), chunk / kMaxArrayTasks);
      write_file_atomically(fs::path(base).concat(".list"), list);
      slurm::JobScript job = common;
      job.comment = fmt::format("perflab sweep {}: {} runs as one array job", dir.filename().string(), n);
      job.output = (slurm_dir(dir) / "array-%A_%a.out").string();
      job.run_list = fs::path(base).concat(".list").string();
      job.array_size = static_cast<int>(n);
      job.array_limit = options.array_limit;
      const std::string id = submit(job, fs::path(base).concat(".sh"), fmt::format("an array job of {} runs", n));
      for (size_t task = 0; task < n; ++task) {
        record(outcome.runs[pending[chunk + task]], fmt::format("{}_{}", id, task));
      }
      write_file_atomically(jobs_file(dir), nlohmann::json{{"jobs", jobs}}.dump(2) + "\n");
      outcome.submitted += n;
    }
    return outcome;
  }

  for (size_t i : pending) {
    SweepRunStatus& run = outcome.runs[i];
    const fs::path base = slurm_dir(dir) / run.key;
    slurm::JobScript job = common;
    job.comment = fmt::format("perflab sweep {}, run {}: {}", dir.filename().string(), run.key, run.label);
    job.output = fs::path(base).concat(".out").string();
    job.run_file = fs::path(base).concat(".json").string();
    job.exit_file = fs::path(base).concat(".exit").string();
    record(run, submit(job, fs::path(base).concat(".sh"), fmt::format("run {} ({})", run.key, run.label)));
    write_file_atomically(jobs_file(dir), nlohmann::json{{"jobs", jobs}}.dump(2) + "\n");
    ++outcome.submitted;
  }
  return outcome;
}

int run_sweep_job(Session& session, const fs::path& run_file) {
  const nlohmann::json doc = parse_json_text(read_document(run_file));
  if (!doc.is_object() || !doc.contains("sweep_dir") || !doc.contains("key") || !doc.contains("seed") ||
      !doc.contains("spec") || !doc["sweep_dir"].is_string() || !doc["key"].is_string() ||
      !doc["seed"].is_number_unsigned()) {
    throw UsageError(fmt::format("{}: not a run written by perflab sweep --launcher slurm", run_file.string()));
  }
  const fs::path sweep_dir = doc["sweep_dir"].get<std::string>();
  const std::string key = doc["key"].get<std::string>();
  const auto seed = doc["seed"].get<uint64_t>();
  RunRequest request;
  try {
    request = request_from_json(doc["spec"]);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", run_file.string(), e.what()));
  }
  const RunSpec spec = session.resolve(request);
  if (spec.seeds.size() != 1 || spec.seeds[0] != seed || run_key(spec, seed) != key) {
    throw UsageError(fmt::format("{}: run {} resolves to another run on this machine (threads {}, backend {}, {} "
                                 "rank(s)): submit from a machine like the compute nodes, with the ranks the job "
                                 "has",
                                 run_file.string(), key, spec.threads, backend_name(spec.backend), spec.ranks));
  }
  const fs::path dir = sweep_dir / "runs" / key;
  // The run key's lock, as a local sweep of the same file takes it: rank 0
  // only (it is the one that writes; a second rank would wait on rank 0's
  // lock while rank 0 waits for it in the run).
  std::optional<FileLock> lock;
  if (session.comm().rank() == 0) {
    fs::create_directories(sweep_dir / "runs");
    lock.emplace(sweep_dir / "runs" / fmt::format(".{}.lock", key));
  }
  if (finished_run(dir)) return 0;
  PreparedBenchmark prepared = prepare_point(session, spec);
  PointOutcome done = run_point(session, spec, prepared, {seed}, dir, {});
  return !done.record.runs.empty() && done.record.runs.back().success ? 0 : 1;
}

}  // namespace perflab
