// Self-registering commands: a command that belongs to a workload (DLRM's
// `data convert`, the transducer's `loss`, collectives' `model`) lives in
// that workload's folder and registers itself, the way workloads do, so the
// CLI never reaches into workload code and workloads never link the CLI
// (this registry sits in the harness, below it):
//
//   PERFLAB_REGISTER_COMMAND("data", add_data);
//
// The registering file must be compiled into the workload's OBJECT
// registration library (see workloads/CMakeLists.txt), or the linker may
// drop it. app.cc adds every registered command after the built-in ones.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/registry.h"  // PERFLAB_CONCAT

namespace perflab::cli {

/// A registered subcommand and the action to run when it was chosen
/// (called after parsing; returns the exit code).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> action;
};

/// Adds a subcommand to `app` and returns it with its action.
using AddCommand = Command (*)(CLI::App& app);

/// A registered command: its subcommand name and the function that adds it.
struct RegisteredCommand {
  std::string name;
  AddCommand add = nullptr;
};

/// Every registered command, sorted by name, so the order in --help does not
/// depend on the order in which static initialisers ran.
std::vector<RegisteredCommand> registered_commands();

namespace detail {
struct CommandRegistrar {
  CommandRegistrar(std::string name, AddCommand add);
};
}  // namespace detail

}  // namespace perflab::cli

/// Registers a workload's command at static-initialisation time.
#define PERFLAB_REGISTER_COMMAND(name, add_fn)                                         \
  static const ::perflab::cli::detail::CommandRegistrar PERFLAB_CONCAT(                \
      perflab_command_registrar_, __COUNTER__)(name, add_fn)
