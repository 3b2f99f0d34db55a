// The built-in subcommands, each registered on the CLI11 app by its own file.
// Commands that belong to a workload register themselves instead
// (harness/cli/command_registry.h).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace perflab::cli {

/// A registered subcommand and the action to run when it was chosen
/// (called after parsing; returns the exit code).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> action;
};

Command add_list(CLI::App& app);
Command add_run(CLI::App& app);
Command add_env(CLI::App& app);
Command add_sweep(CLI::App& app);
Command add_rerun(CLI::App& app);
Command add_report(CLI::App& app);
Command add_export(CLI::App& app);
Command add_rcp(CLI::App& app);
Command add_compare(CLI::App& app);
Command add_history(CLI::App& app);

}  // namespace perflab::cli
