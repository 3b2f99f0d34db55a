// The built-in subcommands, each registered on the CLI11 app by its own file.
// Commands that belong to a workload register themselves instead
// (harness/command_registry.h, which defines Command).
#pragma once

#include <CLI/CLI.hpp>

#include "harness/command_registry.h"

namespace perflab::cli {

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
Command add_model(CLI::App& app);

}  // namespace perflab::cli
