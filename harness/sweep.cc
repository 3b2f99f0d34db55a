// Sweep expansion, run keys and the resumable sweep runner.
#include "harness/sweep.h"

#include "harness/program.h"

#include <cmath>

#include <optional>

#include <fmt/format.h>

#include "harness/atomic_file.h"
#include "harness/interrupt.h"
#include "harness/invocation.h"
#include "base/error.h"
#include "harness/registry.h"
#include "harness/result.h"
#include "harness/runner.h"

namespace perflab {
namespace {

namespace fs = std::filesystem;

/// 64-bit FNV-1a: a stable, portable hash for run keys (not for security).
uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

/// Calls `f` with every combination of one value per axis.
template <typename Value>
void for_each_combination(const std::vector<std::pair<std::string, std::vector<Value>>>& axes,
                          const std::function<void(const std::map<std::string, Value>&)>& f) {
  std::map<std::string, Value> chosen;
  std::function<void(size_t)> rec = [&](size_t i) {
    if (i == axes.size()) return f(chosen);
    for (const auto& v : axes[i].second) {
      chosen[axes[i].first] = v;
      rec(i + 1);
    }
  };
  rec(0);
}

/// Sets the learning rate (and warm-up) of `r` from its batch size, through
/// the parameters the workload declares as its batch size, learning rate
/// and warm-up.
void apply_lr_rule(const LrRule& rule, const WorkloadInfo& info, RunRequest& r) {
  if (info.batch_param.empty() || info.learning_rate_param.empty()) {
    throw UsageError(fmt::format("lr_rule: {} declares no batch-size and learning-rate parameters", info.name));
  }
  auto batch = r.overrides.find(info.batch_param);
  if (batch == r.overrides.end()) {
    throw UsageError(fmt::format("lr_rule needs a {} list to follow", info.batch_param));
  }
  r.overrides[info.learning_rate_param] =
      fmt::format("{:.6g}", rule.learning_rate(std::stoll(batch->second)));
  if (rule.warmup_steps) {
    if (info.warmup_param.empty()) {
      throw UsageError(fmt::format("lr_rule.warmup_steps: {} declares no warm-up parameter", info.name));
    }
    r.overrides[info.warmup_param] = std::to_string(*rule.warmup_steps);
  }
}

}  // namespace

bool finished_run(const fs::path& dir) {
  const fs::path result = dir / "result.json";
  if (!fs::exists(result)) return false;
  try {
    // An interrupted run did not finish: run it again.
    return read_result(result).finished();
  } catch (const UsageError&) {
    return false;  // unreadable or outdated: run it again
  }
}

std::string run_label(const RunSpec& spec, uint64_t seed) {
  std::string label = spec.workload + " " + spec.preset;
  for (const auto& [k, v] : spec.overrides) label += " " + k + "=" + v;
  for (Toggle t : kAllToggles) {
    if (spec.toggles[t].requested) label += fmt::format(" --{}", toggle_flag(t));
  }
  return label + fmt::format(" seed {}", seed);
}

double LrRule::learning_rate(int64_t batch_size) const {
  double ratio = static_cast<double>(batch_size) / static_cast<double>(base_batch_size);
  if (rule == "linear") return base_learning_rate * ratio;
  if (rule == "sqrt") return base_learning_rate * std::sqrt(ratio);
  return base_learning_rate;
}

std::vector<RunRequest> expand_sweep(const RunRequest& base, const SweepAxes& axes) {
  std::vector<std::string> workloads = axes.workloads;
  if (workloads.empty()) workloads.push_back(base.workload);
  std::vector<std::string> presets = axes.presets;
  if (presets.empty()) presets.push_back(base.preset);
  std::vector<std::pair<std::string, std::vector<std::string>>> params(axes.params.begin(),
                                                                       axes.params.end());
  std::vector<std::pair<std::string, std::vector<bool>>> toggles;
  for (const auto& [t, values] : axes.toggles) toggles.emplace_back(toggle_key(t), values);
  for (const auto& [name, values] : params) {
    if (values.empty()) throw UsageError(fmt::format("params.{} has no values: the sweep is empty", name));
  }

  // Count before expanding: a product of a few long lists is astronomically
  // large, and expanding it first would exhaust memory instead of refusing.
  // (In double, which cannot overflow into a wrong small count.)
  double points = static_cast<double>(workloads.size()) * static_cast<double>(presets.size());
  for (const auto& [name, values] : params) points *= static_cast<double>(values.size());
  for (const auto& [name, values] : toggles) points *= static_cast<double>(values.size());
  const std::vector<double> targets = axes.target_qps.empty() ? std::vector<double>{base.inference.target_qps}
                                                              : axes.target_qps;
  points *= static_cast<double>(targets.size());
  if (points > static_cast<double>(kMaxSweepPoints)) {
    throw UsageError(fmt::format("the sweep has {} points, more than {}: split it into smaller sweeps",
                                 points < 1e15 ? fmt::format("{:.0f}", points) : fmt::format("{:.3g}", points),
                                 kMaxSweepPoints));
  }

  std::vector<RunRequest> out;
  for (const auto& workload : workloads) {
    for (const auto& preset : presets) {
      for_each_combination<std::string>(params, [&](const std::map<std::string, std::string>& p) {
        for_each_combination<bool>(toggles, [&](const std::map<std::string, bool>& t) {
          RunRequest r = base;
          r.workload = workload;
          r.preset = preset;
          for (const auto& [k, v] : p) r.overrides[k] = v;
          if (axes.lr_rule) apply_lr_rule(*axes.lr_rule, Registry::instance().get(workload), r);
          for (Toggle tg : kAllToggles) {
            auto it = t.find(toggle_key(tg));
            if (it != t.end()) r.toggles[tg] = it->second;
          }
          for (double target : targets) {
            RunRequest at = r;
            at.inference.target_qps = target;
            out.push_back(std::move(at));
          }
        });
      });
    }
  }
  if (out.empty()) throw UsageError("the sweep is empty");
  return out;
}

std::string stable_hash(const std::string& text) { return fmt::format("{:016x}", fnv1a(text)); }

std::string run_key(const RunSpec& spec, uint64_t seed) {
  nlohmann::json toggles = nlohmann::json::object();
  for (Toggle t : kAllToggles) toggles[toggle_key(t)] = spec.toggles[t].requested;
  nlohmann::json identity = {{"workload", spec.workload}, {"preset", spec.preset},
                             {"params", spec.params.json()}, {"backend", backend_name(spec.backend)},
                             {"toggles", toggles}, {"seed", seed},
                             {"threads", spec.threads}, {"warmup", spec.warmup_iterations}};
  // One rank's keys predate ranks and stay as they were; a run on several
  // ranks is another run.
  if (spec.ranks > 1) identity["ranks"] = spec.ranks;
  // Launches checked synchronously are other runs (other times).
  if (spec.check_launches) identity["check_launches"] = true;
  // Time-to-train keys predate run modes and stay as they were.
  if (spec.mode == RunMode::kThroughput) {
    identity["mode"] = run_mode_name(spec.mode);
    identity["iterations"] = spec.iterations;
  }
  // An inference run is its LoadGen test: another scenario or setting is another run.
  if (spec.mode == RunMode::kInference) {
    identity["mode"] = run_mode_name(spec.mode);
    identity["inference"] = inference_settings_to_json(spec.inference);
  }
  return stable_hash(identity.dump());
}

std::vector<RunSpec> resolve_sweep(Session& session, const SweepPlan& plan, bool record, int ranks) {
  // Resolve every point first: an invalid one stops the sweep before any run.
  std::vector<RunSpec> specs;
  for (const auto& request : plan.points) {
    specs.push_back(session.resolve(request));
    // An external program's ranks are its own (its command starts them):
    // perflab runs once per run, and the ntasks a job has are its allocation.
    if (ranks > 0 && specs.back().workload_file.empty()) specs.back().ranks = ranks;
  }
  if (!record) return specs;
  const fs::path dir = plan.out_dir / plan.name;
  if (session.comm().rank() == 0) {
    ensure_writable_directory(dir / "runs");
    nlohmann::json points = nlohmann::json::array();
    for (const auto& s : specs) points.push_back(s.to_json());
    write_file_atomically(dir / "sweep.json",
                          nlohmann::json{{"name", plan.name}, {"definition", plan.definition},
                                         {"points", points}}
                                  .dump(2) + "\n");
  }
  session.comm().barrier();
  return specs;
}

SweepOutcome run_sweep(Session& session, const SweepPlan& plan, const SweepObserver& observer) {
  bool builtin = false;  // external programs start their own ranks: ntasks is theirs
  for (const RunRequest& r : plan.points) builtin |= !is_workload_file_name(r.workload);
  if (builtin && plan.ntasks && *plan.ntasks != session.comm().size()) {
    throw UsageError(fmt::format("sweep {}: its runs take {} rank(s) (ntasks: {}), this process has {}: start it with "
                                 "mpirun -np {} or srun -n {} --mpi=pmix, or submit it with --launcher slurm",
                                 plan.name, *plan.ntasks, *plan.ntasks, session.comm().size(), *plan.ntasks,
                                 *plan.ntasks));
  }
  const std::vector<RunSpec> specs = resolve_sweep(session, plan);
  SweepOutcome outcome;
  outcome.dir = plan.out_dir / plan.name;
  // Only rank 0 writes; it also decides what is already done, and tells the
  // other ranks, so every rank runs the same points in the same order.
  collectives::Communicator& comm = session.comm();
  const bool writer = comm.rank() == 0;

  for (const auto& s : specs) outcome.total += s.seeds.size();
  auto notify = [&](SweepEvent::Kind kind, const std::string& label, const RunRecord* run) {
    if (observer) observer({kind, outcome.reused + outcome.ran, outcome.total, label, run});
  };
  if (writer) remove_stale_partials(outcome.dir / "runs");
  for (const RunSpec& spec : specs) {
    if (interrupted()) break;
    std::vector<uint64_t> pending;
    for (uint64_t seed : spec.seeds) {
      char done = writer && finished_run(outcome.dir / "runs" / run_key(spec, seed)) ? 1 : 0;
      comm.broadcast_host(&done, 1, 0);
      if (done) {
        ++outcome.reused;
        notify(SweepEvent::Kind::kRunSkipped, run_label(spec, seed), nullptr);
      } else {
        pending.push_back(seed);
      }
    }
    if (pending.empty()) continue;
    PreparedBenchmark prepared = prepare_point(session, spec);
    for (uint64_t seed : pending) {
      if (interrupted()) break;
      const std::string label = run_label(spec, seed);
      const fs::path dir = outcome.dir / "runs" / run_key(spec, seed);
      // Sweeps of one file running at once never run a key twice: a run key
      // is run by the process holding its lock; one that waited for the
      // lock finds the run finished and reuses it (the sweeps mostly take
      // turns rather than splitting the keys).
      std::optional<FileLock> lock;
      char finished = 0;
      if (writer) {
        fs::create_directories(outcome.dir / "runs");
        lock.emplace(outcome.dir / "runs" / fmt::format(".{}.lock", run_key(spec, seed)));
        finished = finished_run(dir) ? 1 : 0;
      }
      // Asked to stop while waiting for the lock: run_point starts no run
      // and the loop ends below.
      comm.broadcast_host(&finished, 1, 0);
      if (finished) {
        ++outcome.reused;
        notify(SweepEvent::Kind::kRunSkipped, label, nullptr);
        continue;
      }
      notify(SweepEvent::Kind::kRunStarted, label, nullptr);
      PointOutcome done = run_point(session, spec, prepared, {seed}, dir, {});
      if (done.record.runs.empty()) break;  // interrupted before the run started
      ++outcome.ran;
      if (!done.record.runs.back().success) ++outcome.aborted;
      notify(SweepEvent::Kind::kRunFinished, label, &done.record.runs.back());
    }
  }
  if (interrupted()) outcome.interrupted = signal_name(interrupt_signal());
  return outcome;
}

}  // namespace perflab
