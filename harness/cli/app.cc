// CLI11 application: parse, dispatch, and turn errors into one line and an
// exit code.
#include "harness/cli/app.h"

#include <iostream>
#include <new>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "collectives/communicator.h"
#include "harness/command_registry.h"
#include "harness/cli/commands.h"
#include "base/error.h"
#include "base/exit_hooks.h"
#include "harness/registry.h"
#include "base/text.h"
#include "harness/version.h"

namespace perflab::cli {
namespace {

/// `run WORKLOAD ARGS...` with ARGS translated by the workload's
/// translate_args, when it has one; everything else unchanged.
std::vector<std::string> translate_workload_args(std::vector<std::string> args) {
  if (args.size() < 2 || args[0] != "run") return args;
  for (const WorkloadInfo& w : Registry::instance().all()) {
    if (w.name != args[1] || !w.translate_args) continue;
    std::vector<std::string> rest = w.translate_args({args.begin() + 2, args.end()});
    rest.insert(rest.begin(), {args[0], args[1]});
    return rest;
  }
  return args;
}

/// Prints the error line (with the rank, on several ranks), stops the other
/// ranks and returns `code`.
int fail(const char* kind, const std::string& what, int code) {
  std::cerr << "perflab: " << kind << ": " << collectives::rank_prefix() << one_line(what) << "\n";
  std::cerr.flush();
  collectives::abort_all_ranks(code);
  return code;
}

/// The user's input is the same on every rank, and so is its verdict: rank
/// 0 says it once, and every rank exits 2 without tearing the others down.
int usage_failure(const std::string& what) {
  if (collectives::world_rank() == 0) std::cerr << "perflab: error: " << one_line(what) << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Process-wide resources (NCCL's communicators) are released when main
  // returns, on every path, before static destruction and CUDA's teardown.
  struct ReleaseOnReturn {
    ~ReleaseOnReturn() { run_main_exit_hooks(); }
  } release_on_return;

  CLI::App app{"perflab: an MLPerf-style benchmark harness. Runs timed workloads to a quality\n"
               "target, writes :::MLLOG compliance logs, results (JSON) and reports."};
  app.name("perflab");
  app.set_version_flag("--version", fmt::format("perflab {} ({})", perflab_version(), git_revision()));
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  perflab list\n"
      "  perflab run dlrm --preset tiny --seeds 3\n"
      "  perflab run dlrm --preset small --set batch_size=1024 --out results\n"
      "  perflab run dlrm --set batch_size=256,512,1024 --seeds 3     (a sweep)\n"
      "  perflab sweep workloads/dlrm/sweeps/batch_size.yaml\n"
      "  perflab sweep workloads/dlrm/sweeps/batch_size.yaml --launcher slurm   (then --status)\n"
      "  perflab rerun perflab-results/dlrm-tiny-*/result.json\n"
      "  perflab run my-trainer.workload.yaml --seeds 3   (your own program: docs/external-workloads.md)\n"
      "  perflab compare base-results/ candidate-results/\n"
      "  perflab history record perflab-results/ --db history.sqlite\n"
      "  perflab env");

  std::vector<Command> commands = {add_list(app),   add_run(app),    add_sweep(app), add_rerun(app),
                                   add_report(app), add_export(app), add_rcp(app),   add_compare(app),
                                   add_history(app), add_env(app), add_model(app)};
  // Then the commands workloads register (data, transducer), by name.
  for (const RegisteredCommand& c : registered_commands()) commands.push_back(c.add(app));

  // Arguments reach results, logs and reports, which are JSON: UTF-8 only
  // (a stray byte would otherwise surface as an internal error after a run).
  for (int i = 1; i < argc; ++i) {
    const size_t at = invalid_utf8_at(argv[i]);
    if (at != std::string::npos) {
      std::cerr << fmt::format("perflab: error: argument {} is not valid UTF-8 (byte 0x{:02x} at offset {}); "
                               "perflab reads and writes UTF-8 text only\n",
                               i, static_cast<unsigned char>(argv[i][at]), at);
      return 2;
    }
  }
  // A workload that mirrors another tool's command line (collectives:
  // nccl-tests' -b/-e/-f/-n...) translates it before parsing.
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    args = translate_workload_args(std::move(args));
  } catch (const UsageError& e) {
    std::cerr << "perflab: error: " << one_line(e.what()) << "\n";
    return 2;
  }
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "perflab: error: " << one_line(e.what()) << " (see perflab --help)\n";
    return 2;
  }

  try {
    for (const Command& c : commands) {
      if (c.app->parsed()) return c.action();
    }
    return 2;
  } catch (const UsageError& e) {
    return usage_failure(e.what());
  } catch (const Error& e) {
    return fail("error", e.what(), 1);
  } catch (const std::bad_alloc&) {
    return fail("error", "out of host memory (an allocation failed); reduce the problem size", 1);
  } catch (const std::exception& e) {
    return fail("internal error", e.what(), 1);
  }
}

}  // namespace perflab::cli
