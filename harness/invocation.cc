// The invocation pipeline (see invocation.h).
#include "harness/invocation.h"

#include <fmt/format.h>

#include "harness/atomic_file.h"
#include "harness/chrome_trace.h"
#include "harness/environment.h"
#include "base/error.h"
#include "harness/interrupt.h"
#include "harness/program_run.h"
#include "harness/registry.h"
#include "harness/result.h"
#include "base/utc_time.h"

namespace perflab {

namespace fs = std::filesystem;

Session::Session()
    : comm_(collectives::make_world_communicator()),
      device_(probe_device_context()),
      environment_(capture_environment(device_.probe)) {
  record_ranks();
}

void Session::record_ranks() {
  nlohmann::json comm = {{"kind", comm_->kind()}, {"size", comm_->size()}};
  if (!comm_->library_version().empty()) comm["library"] = comm_->library_version();
  environment_["communicator"] = comm;
  if (comm_->size() == 1) return;
  // Every rank's host, devices and library versions, on every rank (rank 0
  // writes them into the result).
  nlohmann::json mine = {{"rank", comm_->rank()}, {"hostname", environment_.value("hostname", "")},
                         {"cpu_model", environment_.value("cpu_model", "")}};
  if (environment_.contains("cuda")) mine["cuda"] = environment_["cuda"];
  if (comm.contains("library")) mine["communicator_library"] = comm["library"];
  nlohmann::json ranks = nlohmann::json::array();
  for (const std::string& text : collectives::all_gather_text(*comm_, mine.dump())) {
    ranks.push_back(nlohmann::json::parse(text));
  }
  environment_["ranks"] = std::move(ranks);
}

RunSpec Session::resolve(const RunRequest& request) const {
  const WorkloadInfo& info = Registry::instance().get(request.workload);
  if (info.kind() == WorkloadKind::kProgram && comm_->size() > 1) {
    throw UsageError(fmt::format("{} is an external program, which perflab starts once per run; start perflab on "
                                 "one rank and put the launcher (mpirun, srun, torchrun) in the workload file's "
                                 "command",
                                 info.name));
  }
  RunSpec spec = resolve_run_spec(request, info, device_.probe);
  if (spec.mode == RunMode::kInference && comm_->size() > 1) {
    throw UsageError("--mode inference runs on one process (LoadGen drives one system under test): run it without "
                     "mpirun or srun");
  }
  spec.ranks = comm_->size();
  return spec;
}

PreparedBenchmark prepare_point(Session& session, const RunSpec& spec) {
  // An external workload is found by its file; a built-in one by its name.
  const std::string& workload = spec.workload_file.empty() ? spec.workload : spec.workload_file;
  return prepare_benchmark(session.context(spec), Registry::instance().get(workload));
}

PointOutcome run_point(Session& session, const RunSpec& spec, PreparedBenchmark& prepared,
                       const std::vector<uint64_t>& seeds, const fs::path& dir,
                       const PointHooks& hooks) {
  const RunContext ctx = session.context(spec);
  const bool writer = ctx.rank() == 0;
  const fs::path work = partial_dir(dir);
  auto notify = [&](ProgressEvent::Kind kind, size_t index, const RunRecord* run) {
    if (hooks.progress) hooks.progress({kind, index, seeds.size(), run});
  };
  if (writer) {
    remove_stale_partials(dir.parent_path());
    make_partial_dir(dir);
  }
  try {
    PointOutcome out;
    InvocationRecord& record = out.record;
    record.spec = spec;
    record.spec.seeds = seeds;
    record.step = prepared.step;
    record.training = prepared.training;
    record.prepare_s = prepared.prepare_s;
    const std::string platform = platform_description(session.environment(), spec);
    for (size_t i = 0; i < seeds.size() && !interrupted(); ++i) {
      RunRecord started;
      started.seed = seeds[i];
      notify(ProgressEvent::Kind::kRunStarted, i, &started);
      record.runs.push_back(run_seed(ctx, prepared, seeds[i], work / fmt::format("run_{}.log", i),
                                     platform, [&](const RunRecord& r) {
                                       notify(ProgressEvent::Kind::kEvaluated, i, &r);
                                     }));
      RunRecord& done = record.runs.back();
      if (done.profile && done.activity) done.profile->trace = fmt::format("trace_{}.json", i);
      notify(ProgressEvent::Kind::kRunFinished, i, &record.runs.back());
    }
    if (record.runs.empty()) {  // interrupted before the first run: nothing to keep
      std::error_code ec;
      if (writer) fs::remove_all(work, ec);
      record.interrupted = signal_name(interrupt_signal());
      return out;
    }
    if (prepared.program) fill_program_plan(record);
    record.score = score_records(record.runs, spec.mode);
    if (interrupted()) {
      record.interrupted = signal_name(interrupt_signal());
      record.score = Score{};
      record.score.reason = fmt::format("interrupted by {} ({} of {} runs started)", record.interrupted,
                                        record.runs.size(), seeds.size());
    }
    record.toggles = toggles_as_run(spec.toggles, record.runs);
    out.result = result_to_json(record, session.environment());
    out.dir = dir;
    if (writer) {
      for (const RunRecord& r : record.runs) {
        if (!r.profile || !r.activity) continue;
        const std::string title = fmt::format("perflab run {} ({}), seed {}", spec.workload, spec.preset_label(), r.seed);
        write_file_atomically(work / r.profile->trace, chrome_trace(*r.activity, title).dump() + "\n");
      }
      write_file_atomically(work / "result.json", out.result.dump(2) + "\n");
      if (hooks.render) {
        for (const auto& [name, content] : hooks.render(out.result)) {
          write_file_atomically(work / name, content);
        }
      }
      if (hooks.fresh_folder) {
        out.dir = publish_new_folder(work, dir);
      } else {
        publish_folder(work, dir);
      }
    }
    return out;
  } catch (...) {
    std::error_code ec;
    if (writer) fs::remove_all(work, ec);
    throw;
  }
}

fs::path invocation_dir(const fs::path& out, const RunSpec& spec) {
  return out / fmt::format("{}-{}-{}", spec.workload, spec.preset, utc_now("%Y%m%d-%H%M%S"));
}

fs::path publish_new_folder(const fs::path& work, const fs::path& dir) {
  std::error_code ec;
  fs::remove(work / kPartialMarker, ec);  // a result folder now, not a work folder
  // rename() onto a folder that has anything in it fails: of several runs
  // that finish under one name (names are per second), each takes the next
  // free one, and none ever replaces another's results.
  for (int i = 1; i <= 100000; ++i) {
    const fs::path target = i == 1 ? dir : dir.parent_path() / fmt::format("{}-{}", dir.filename().string(), i);
    fs::rename(work, target, ec);
    if (!ec) return target;
    if (ec != std::errc::directory_not_empty && ec != std::errc::file_exists && ec != std::errc::not_a_directory) {
      throw Error(fmt::format("{}: cannot publish the run's folder: {}", target.string(), ec.message()));
    }
  }
  throw Error(fmt::format("{}: no free run folder name", dir.parent_path().string()));
}

void publish_folder(const fs::path& work, const fs::path& dir) {
  std::error_code ec;
  fs::remove(work / kPartialMarker, ec);  // a result folder now, not a work folder
  fs::rename(work, dir, ec);              // replaces `dir` when it is an empty folder
  if (!ec) return;
  if (ec != std::errc::directory_not_empty && ec != std::errc::file_exists) {
    throw Error(fmt::format("{}: cannot publish the run's folder: {}", dir.string(), ec.message()));
  }
  // An earlier, unfinished result of the same run key (a sweep re-running an
  // interrupted point under that key's lock): set it aside under a name the
  // stale-folder cleanup knows, put the new one in place, then remove it.
  const fs::path old = partial_dir(dir.parent_path() / (dir.filename().string() + "-replaced"));
  fs::remove_all(old, ec);  // a leftover of an earlier process with this pid
  fs::rename(dir, old);
  mark_partial(old);
  fs::rename(work, dir);
  fs::remove_all(old, ec);
}

PointOutcome run_invocation(Session& session, const RunSpec& spec, const PointHooks& hooks) {
  ensure_writable_directory(spec.out_dir);
  PreparedBenchmark prepared = prepare_point(session, spec);
  if (hooks.progress) hooks.progress({ProgressEvent::Kind::kPrepared, 0, spec.seeds.size(), nullptr});
  // Rank 0 names the folder and tells the others (their clocks may be a
  // second apart); the name is final only when the run is published.
  collectives::Communicator& comm = session.comm();
  const std::string planned = invocation_dir(spec.out_dir, spec).string();
  const fs::path dir = comm.size() == 1 ? fs::path(planned) : fs::path(collectives::all_gather_text(comm, planned)[0]);
  PointHooks fresh = hooks;
  fresh.fresh_folder = true;
  return run_point(session, spec, prepared, spec.seeds, dir, fresh);
}

}  // namespace perflab
