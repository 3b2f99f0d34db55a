#include "reports/report_sections.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

namespace perflab::reports {
namespace {

/// A number field of a free-form fact, or nothing (any other type or shape).
std::optional<double> number_at(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

/// "rank 0: tables 0, 3, 5 (1234 rows)" per rank of the placement fact
/// (free-form data: anything unexpected is shown as "?").
std::vector<std::string> placement_lines(const nlohmann::json& data) {
  std::vector<std::string> lines;
  const auto placement = data.find("placement");
  if (placement == data.end() || !placement->is_object()) return lines;
  const auto ranks = placement->find("ranks");
  if (ranks == placement->end() || !ranks->is_array()) return lines;
  for (const nlohmann::json& r : *ranks) {
    std::string tables;
    const auto list = r.is_object() ? r.find("tables") : r.end();
    if (r.is_object() && list != r.end() && list->is_array()) {
      for (const nlohmann::json& t : *list) tables += (tables.empty() ? "" : ", ") + t.dump();
    }
    const auto num = [&](const char* key) {
      const std::optional<double> v = number_at(r, key);
      return v ? fmt::format("{:.0f}", *v) : std::string("?");
    };
    lines.push_back(fmt::format("rank {}: tables {} ({} rows)", num("rank"), tables.empty() ? "?" : tables, num("rows")));
  }
  return lines;
}

/// "forward 12.0 KiB, backward 12.0 KiB" from the bytes fact (empty without it).
std::string exchange_text(const nlohmann::json& data) {
  const auto bytes = data.find("all_to_all_bytes_per_iteration");
  if (bytes == data.end()) return "";
  const std::optional<double> forward = number_at(*bytes, "forward"), backward = number_at(*bytes, "backward");
  if (!forward || !backward) return "";
  return fmt::format("forward {:.1f} KiB, backward {:.1f} KiB", *forward / 1024.0, *backward / 1024.0);
}

/// " (hybrid embedding: 72.2% less than model parallel's 416.0 KiB)" when
/// the data facts carry the reduction, else "".
std::string reduction_text(const nlohmann::json& data) {
  const std::optional<double> reduction = number_at(data, "all_to_all_reduction");
  const auto mp = data.find("model_parallel_all_to_all_bytes_per_iteration");
  const std::optional<double> total = mp == data.end() ? std::nullopt : number_at(*mp, "total");
  if (!reduction || !total) return "";
  return fmt::format(" (hybrid embedding: {:.1f}% less than model parallel's {:.1f} KiB)", *reduction * 100.0,
                     *total / 1024.0);
}

}  // namespace

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

std::string render_placement_summary(const ResultView& result) {
  const nlohmann::json& data = result.plan.data;
  const std::vector<std::string> lines = placement_lines(data);
  if (lines.empty()) return "";
  std::string out = fmt::format("{} ranks, placement:", lines.size());
  for (const std::string& line : lines) out += " " + line + ";";
  out.back() = '\n';
  const std::string bytes = exchange_text(data);
  if (!bytes.empty()) out += "all-to-all per iteration (all ranks): " + bytes + reduction_text(data) + "\n";
  return out;
}

std::string render_placement_markdown(const ResultView& result) {
  const nlohmann::json& data = result.plan.data;
  const std::vector<std::string> lines = placement_lines(data);
  if (lines.empty()) return "";
  const nlohmann::json& strategy = data["placement"].contains("strategy") ? data["placement"]["strategy"] : data;
  std::string md = fmt::format("\n## Ranks\n\n{} ranks; placement: {}\n\n", lines.size(),
                               strategy.is_string() ? strategy.get<std::string>() : std::string("?"));
  for (const std::string& line : lines) md += "- " + line + "\n";
  const std::string bytes = exchange_text(data);
  if (!bytes.empty()) md += "\nAll-to-all bytes per iteration, summed over ranks: " + bytes + reduction_text(data) + "\n";
  return md;
}

}  // namespace perflab::reports
