// Running one invocation (all seeds of one point) from the CLI.
#pragma once

#include <optional>
#include <string>

#include "harness/run_spec.h"

namespace perflab::cli {

/// The rank count a rerun must reproduce, and the result it comes from.
struct RanksToMatch {
  int ranks = 1;
  std::string result;  ///< For the error line.
};

/// Resolves `request`, runs every seed and writes the invocation folder
/// (logs, result.json, report.md). Returns 0 when the runs give a score.
/// With `ranks`, a process started on another rank count is refused with
/// one line first.
int run_command(const RunRequest& request, const std::optional<RanksToMatch>& ranks = std::nullopt);

}  // namespace perflab::cli
