#include "reports/report_sections.h"

#include <fmt/format.h>

namespace perflab::reports {

std::string render_setup_markdown(const ResultView& result) {
  const SpecView& spec = result.spec;
  std::string md;
  md += fmt::format("# perflab: {} (preset {}) on {}\n\n", spec.workload, spec.preset, spec.backend);
  md += fmt::format("- created: {}\n", result.created);
  const std::string version = result.environment_text("/perflab_version");
  const std::string git = result.environment_text("/git_revision");
  const std::string cpu = result.environment_text("/cpu_model");
  md += fmt::format("- perflab: {} (git {})\n", version.empty() ? "?" : version, git.empty() ? "?" : git);
  md += fmt::format("- host: {}, {} threads\n", cpu.empty() ? "?" : cpu, spec.threads.value_or(0));
  if (spec.backend == "cuda" && !result.environment_text("/cuda/devices/0").empty()) {
    const std::string device = result.environment_text("/cuda/devices/0/name");
    md += fmt::format("- device: {}\n", device.empty() ? "?" : device);
  }
  if (!spec.overrides.empty()) md += fmt::format("- overrides: `{}`\n", nlohmann::json(spec.overrides).dump());
  if (!result.interrupted.empty()) {
    md += fmt::format("- **interrupted by {}**: the runs so far are kept, the last ended as aborted; no score\n",
                      result.interrupted);
  }
  return md;
}

std::string render_toggles_markdown(const ResultView& result) {
  std::string md = "## Toggles\n\n| toggle | requested | in effect | reason |\n|---|---|---|---|\n";
  for (const ToggleView& t : result.toggles) {
    md += fmt::format("| {} | {} | {} | {} |\n", t.name, t.requested ? "on" : "off", t.in_effect ? "on" : "off",
                      t.reason);
  }
  return md;
}

std::string render_execution_markdown(const ResultView& result) {
  bool any = false;
  for (const RunView& r : result.runs) any |= r.execution.has_value();
  if (!any) return "";
  std::string md =
      "\n## Device execution\n\n| # | seed | cuda graphs | captured | replayed | host syncs per iteration | "
      "declared |\n|---|---|---|---|---|---|---|\n";
  int i = 0;
  for (const RunView& r : result.runs) {
    const int index = i++;
    if (!r.execution) continue;
    const ExecutionView& e = *r.execution;
    const std::string syncs =
        e.syncs_min == e.syncs_max ? fmt::format("{}", e.syncs_max) : fmt::format("{} to {}", e.syncs_min, e.syncs_max);
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", index, r.seed, e.graphs_note, e.graphs_captured,
                      e.graph_replays, syncs, e.syncs_expected ? fmt::format("{}", *e.syncs_expected) : "-");
  }
  return md;
}

}  // namespace perflab::reports
