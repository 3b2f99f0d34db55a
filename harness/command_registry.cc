// The registry of commands that workloads contribute.
#include "harness/command_registry.h"

#include <algorithm>
#include <utility>

namespace perflab::cli {
namespace {

std::vector<RegisteredCommand>& registry() {
  static std::vector<RegisteredCommand> commands;
  return commands;
}

}  // namespace

std::vector<RegisteredCommand> registered_commands() {
  std::vector<RegisteredCommand> out = registry();
  std::stable_sort(
      out.begin(), out.end(),
      [](const RegisteredCommand& a, const RegisteredCommand& b) { return a.name < b.name; });
  return out;
}

detail::CommandRegistrar::CommandRegistrar(std::string name, AddCommand add) {
  registry().push_back({std::move(name), add});
}

}  // namespace perflab::cli
