// Running one invocation (all seeds of one point) from the CLI.
#pragma once

#include "harness/run_spec.h"

namespace perflab::cli {

/// Resolves `request`, runs every seed and writes the invocation folder
/// (logs, result.json, report.md). Returns 0 when the runs give a score.
int run_command(const RunRequest& request);

}  // namespace perflab::cli
