// `perflab run WORKLOAD`: parse the request and hand it to the invocation
// pipeline (harness/invocation.h), which writes the logs, result.json and
// report.md into a fresh invocation folder under --out, atomically; comma
// lists make a sweep (harness/sweep.h).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <thread>
#include <iostream>

#include <fmt/format.h>

#include "harness/registry.h"

#include "harness/cli/commands.h"
#include "harness/cli/run_command.h"
#include "harness/cli/progress.h"
#include "harness/cli/sweep_command.h"
#include "base/error.h"
#include "harness/interrupt.h"
#include "harness/invocation.h"
#include "harness/run_spec.h"
#include "harness/sweep.h"
#include "base/text.h"
#include "reports/workload_sections.h"
#include "harness/result_model.h"
#include "reports/throughput_report.h"

namespace perflab::cli {
namespace {

/// The most threads `--threads` asks for on this machine: 8 per core, 64 at
/// least (4096 made libgomp fail to create threads and abort where memory
/// or limits ran out). A rerun keeps the threads its result recorded.
int thread_limit() {
  const auto cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  return std::min(kMaxThreads, std::max(64, 8 * cores));
}

/// The text of an integer in [0, 2^64 - 1], decimal digits only: CLI11 reads
/// "-1" and "18446744073709551616" into a uint64_t as 2^64 - 1 silently.
CLI::Validator unsigned_64_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        const std::string max = "18446744073709551615";
        const std::string trimmed = digits ? text.substr(std::min(text.find_first_not_of('0'), text.size() - 1)) : "";
        if (!digits || trimmed.size() > max.size() || (trimmed.size() == max.size() && trimmed > max)) {
          return fmt::format("'{}' is not an integer in [0, 2^64 - 1]", text);
        }
        return std::string();
      },
      "UINT64");
}

std::map<std::string, std::string> parse_sets(const std::vector<std::string>& sets) {
  std::map<std::string, std::string> out;
  for (const auto& s : sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError(fmt::format("--set {}: expected key=value", s));
    }
    out[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return out;
}

}  // namespace

int run_command(const RunRequest& request, const std::optional<RanksToMatch>& ranks) {
  Session session;
  if (ranks && ranks->ranks != session.comm().size()) {
    throw UsageError(fmt::format("{} ran on {} rank(s), this process has {}: rerun it under mpirun -np {} (or srun -n "
                                 "{} --mpi=pmix)",
                                 ranks->result, ranks->ranks, session.comm().size(), ranks->ranks, ranks->ranks));
  }
  RunSpec spec = session.resolve(request);

  // Said once the workload has accepted its parameters (data prepared), so
  // an invalid request gets its one error line and nothing else.
  std::vector<std::string> header = {
      fmt::format("{} preset {} on {} ({}), {} seed(s), {} thread(s)", spec.workload,
                  spec.preset_label(), backend_name(spec.backend),
                  spec.backend_reason.empty() ? "requested" : spec.backend_reason,
                  spec.seeds.size(), spec.threads)};
  for (const auto& line : split(spec.toggles.describe_differences(), '\n')) {
    if (!line.empty()) header.push_back(line);
  }
  if (spec.check_launches) {
    header.push_back("--check-launches: waiting for the device after every kernel launch (times not comparable)");
  }
  // Only rank 0 speaks (and writes); the other ranks run silently.
  const bool writer = session.comm().rank() == 0;
  std::optional<Progress> progress;
  if (writer) progress.emplace(std::cerr, isatty(STDERR_FILENO) != 0, std::move(header));

  PointHooks hooks;
  if (writer) hooks.progress = [&](const ProgressEvent& e) { progress->update(e); };
  hooks.render = [](const nlohmann::json& result) {
    return RenderedFiles{{"report.md", reports::render_run_markdown(result)}};
  };
  InterruptGuard guard;
  PointOutcome done = run_invocation(session, spec, hooks);
  if (!writer) {
    if (!done.record.interrupted.empty()) return 128 + interrupt_signal();
    return done.record.score.value ? 0 : 1;
  }
  if (done.dir.empty()) {
    std::cerr << fmt::format("perflab: interrupted by {} before the first run; nothing written\n",
                             done.record.interrupted);
    return 128 + interrupt_signal();
  }
  std::cout << reports::render_run_summary(done.result);
  std::cout << reports::render_workload_terminal({parse_result(done.result)});
  const bool inference = done.result.value("kind", std::string()) == "inference";
  std::cout << fmt::format(inference ? "result: {}\nreport: {}\nlogs:   {}/run_*_loadgen/ (LoadGen's)\n"
                                     : "result: {}\nreport: {}\nlogs:   {}/run_*.log\n",
                           (done.dir / "result.json").string(), (done.dir / "report.md").string(),
                           done.dir.string());
  if (!done.record.interrupted.empty()) {
    std::cerr << fmt::format("perflab: interrupted by {}: {} of {} run(s) kept, ended as aborted; no score\n",
                             done.record.interrupted, done.record.runs.size(), spec.seeds.size());
    return 128 + interrupt_signal();
  }
  return done.record.score.value ? 0 : 1;
}


Command add_run(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "run", "Run a workload once per seed: to its quality target, or for timed iterations (--mode throughput)");
  auto request = std::make_shared<RunRequest>();
  auto sets = std::make_shared<std::vector<std::string>>();
  auto toggles = std::make_shared<std::map<Toggle, std::string>>();

  sub->add_option("workload", request->workload, "Workload to run (see perflab list), or a workload file NAME.workload.yaml (docs/external-workloads.md)")->required();
  sub->add_option("--preset,-p", request->preset, "Named parameter set (default: the workload's)");
  sub->add_option("--set,-s", *sets, "Override a parameter: key=value (repeatable); key=v1,v2,... sweeps");
  sub->add_option("--backend,-b", request->backend, "auto | cpu | cuda")->capture_default_str();
  sub->add_option("--seeds,-n", request->seeds, "Number of runs (consecutive seeds)")
      ->capture_default_str();
  sub->add_option("--seed", request->first_seed, "First seed")
      ->capture_default_str()
      ->check(unsigned_64_text());
  sub->add_option("--threads,-t", request->threads,
                  fmt::format("CPU threads, at most {} here: 8 per core, 64 at least (default: OMP_NUM_THREADS, "
                              "else all cores)",
                              thread_limit()))
      ->check(CLI::Range(0, thread_limit()));
  sub->add_option("--warmup", request->warmup_iterations,
                  "Iterations left out of the per-iteration timing statistics")
      ->capture_default_str();
  sub->add_option("--mode,-m", request->mode,
                  "time-to-train (train to the quality target) | throughput (timed iterations, "
                  "then a correctness gate) | inference (an MLPerf Inference scenario through MLCommons "
                  "LoadGen); default: the workload's first mode (perflab list)");
  sub->add_option("--iterations,-i", request->iterations,
                  "Throughput mode: timed iterations after the --warmup ones")
      ->capture_default_str();
  sub->add_option("--out,-o", request->out_dir, "Folder for results (one subfolder per invocation)")
      ->capture_default_str();
  InferenceSettings& inf = request->inference;
  sub->add_option("--scenario", inf.scenario,
                  "Inference mode: the MLPerf Inference scenario LoadGen runs: offline | server | singlestream")
      ->capture_default_str();
  sub->add_option("--loadgen-mode", inf.mode, "Inference mode: performance | accuracy (LoadGen logs every response)")
      ->capture_default_str();
  sub->add_option("--target-qps", inf.target_qps,
                  "Inference mode: offline's expected samples/s, server's target queries/s")
      ->capture_default_str();
  sub->add_option("--latency-bound-ms", inf.latency_bound_ms,
                  "Inference mode: server's 99th-percentile latency bound; singlestream's expected latency")
      ->capture_default_str();
  sub->add_option("--min-duration-ms", inf.min_duration_ms, "Inference mode: LoadGen's minimum test duration")
      ->capture_default_str();
  sub->add_option("--min-queries", inf.min_query_count, "Inference mode: LoadGen's minimum query count")
      ->capture_default_str();
  sub->add_option("--max-batch", inf.max_batch, "Inference mode: the largest batch the engine is given")
      ->capture_default_str();
  sub->add_option("--max-wait-ms", inf.max_wait_ms,
                  "Inference mode: how long the oldest queued sample may wait for a fuller batch (server)")
      ->capture_default_str();
  sub->add_flag("--loadgen-trace", inf.trace,
                "Inference mode: keep LoadGen's per-sample trace, mlperf_log_trace.json (Chrome trace JSON for "
                "a timeline; about 300 bytes a sample)");
  sub->add_flag("--check-launches", request->check_launches,
                "GPU debugging: wait for the device after every kernel launch, so a fault names the kernel that "
                "made it (CUDA graphs off; times not comparable)");
  sub->add_option("--profile", request->profile,
                  "off | kernels | trace: a GPU throughput run also times --iterations under CUPTI and "
                  "records the per-kernel table (launches, time, share, x its floor); trace adds a Chrome "
                  "trace (docs/profiling.md)")
      ->capture_default_str();
  for (Toggle t : kAllToggles) {
    sub->add_option(fmt::format("--{}", toggle_flag(t)), (*toggles)[t],
                    fmt::format("on | off (any case; bare: on) | on,off (sweep): {}", toggle_help(t)))
        ->expected(0, 1)
        ->default_str("on")  // what the bare flag gives; not a default (absent: the workload's)
        ->option_text("[on|off]");
  }
  sub->footer(
      "Exit status: 0 when the runs give a score, 1 when they do not (too many\n"
      "runs missed the target, or a throughput run failed its correctness gate)\n"
      "or the run failed, 2 for invalid usage, 130/143 when interrupted by\n"
      "SIGINT/SIGTERM (the run in flight ends as aborted and the result is\n"
      "written, marked interrupted; a second Ctrl-C stops at once).");

  return {sub, [sub, request, sets, toggles] {
            // Comma lists (--set batch_size=256,512 --cuda-graphs on,off) make a sweep.
            RunRequest r = *request;
            SweepAxes axes;
            bool sweep = false;
            for (const auto& [key, text] : parse_sets(*sets)) {
              auto values = split(text, ',');
              if (values.size() > 1) {
                axes.params[key] = values;
                sweep = true;
              } else {
                r.overrides[key] = text;
              }
            }
            for (Toggle t : kAllToggles) {
              if (sub->count(fmt::format("--{}", toggle_flag(t))) == 0) continue;
              // The bare flag gives "on" (its default_str); an explicit '' is refused.
              const std::string& text = (*toggles)[t];
              auto values = split(text, ',');
              for (const auto& v : values) axes.toggles[t].push_back(parse_on_off(toggle_flag(t), v));
              r.toggles[t] = axes.toggles[t].front();
              if (values.size() > 1) {
                sweep = true;
              } else {
                axes.toggles.erase(t);
              }
            }
            if (!sweep) return run_command(r);
            SweepPlan plan;
            plan.points = expand_sweep(r, axes);
            plan.out_dir = r.out_dir;
            nlohmann::json definition = {{"command_line", true}, {"workload", r.workload},
                                         {"preset", r.preset}, {"sets", *sets},
                                         {"seeds", r.seeds}, {"first_seed", r.first_seed},
                                         {"backend", r.backend}, {"threads", r.threads},
                                         {"mode", r.mode}, {"iterations", r.iterations}};
            for (const auto& [t, text] : *toggles) {
              if (sub->count(fmt::format("--{}", toggle_flag(t)))) definition["toggles"][toggle_key(t)] = text;
            }
            // Only when on: the name of an unprofiled sweep stays what it was.
            if (r.profile != "off") definition["profile"] = r.profile;
            if (r.check_launches) definition["check_launches"] = true;
            plan.definition = definition;
            // A workload file's sweep is named by its workload's name, not its path.
            plan.name = fmt::format("{}-sweep-{}", Registry::instance().get(r.workload).name,
                                    stable_hash(definition.dump()).substr(0, 8));
            return execute_sweep(plan, false);
          }};
}

}  // namespace perflab::cli
