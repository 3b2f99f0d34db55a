// `perflab sweep FILE`: run every point of a sweep file, resuming where an
// earlier invocation stopped, then write the sweep's reports.
#include "harness/cli/commands.h"
#include "harness/cli/sweep_command.h"
#include "harness/sweep.h"

namespace perflab::cli {

Command add_sweep(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "sweep", "Run a sweep file: workloads x params x toggles x seeds, resumable");
  auto file = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto dry_run = std::make_shared<bool>(false);
  sub->add_option("file", *file, "Sweep file (YAML); see README 'Sweeps'")->required();
  sub->add_option("--out,-o", *out, "Results folder (overrides the file's out:)");
  sub->add_flag("--dry-run", *dry_run, "List the points without running them");
  sub->footer(
      "Every run (point x seed) is stored under OUT/NAME/runs/<key>/, keyed by a hash of its\n"
      "resolved spec: running the same sweep again skips finished runs. Reports (Markdown,\n"
      "CSV, JSON, HTML) are written to OUT/NAME/ at the end.");
  return {sub, [file, out, dry_run] {
            SweepPlan plan = read_sweep_file(*file);
            if (!out->empty()) plan.out_dir = *out;
            return execute_sweep(plan, *dry_run);
          }};
}

}  // namespace perflab::cli
