// `perflab env`: the environment perflab records in every result.
#include <iostream>

#include "harness/cli/commands.h"
#include "harness/environment.h"

namespace perflab::cli {

Command add_env(CLI::App& app) {
  auto* sub = app.add_subcommand("env", "Show the captured environment (CPU, GPU, driver, libraries)");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print as JSON (as recorded in results)");
  return {sub, [json] {
            nlohmann::json env = capture_environment();
            std::cout << (*json ? env.dump(2) + "\n" : format_environment(env));
            return 0;
          }};
}

}  // namespace perflab::cli
