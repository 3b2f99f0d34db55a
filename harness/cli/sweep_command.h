// Running a sweep from the CLI (sweep files and comma lists in `perflab run`):
// progress display, the sweep's reports and the summary.
#pragma once

#include "harness/sweep.h"

namespace perflab::cli {

/// Runs `plan` with progress on stderr (live on a terminal, one line per run
/// otherwise), then writes the reports into the sweep folder. Returns the
/// exit code: 0 when every run reached its target, 1 otherwise.
int execute_sweep(const SweepPlan& plan, bool dry_run);

}  // namespace perflab::cli
