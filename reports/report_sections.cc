#include "reports/report_sections.h"

#include <fmt/format.h>

namespace perflab::reports {

using nlohmann::json;

std::string render_setup_markdown(const json& result) {
  const json& spec = result["spec"];
  const json& env = result["environment"];
  std::string md;
  md += fmt::format("# perflab: {} (preset {}) on {}\n\n", spec["workload"].get<std::string>(),
                    spec["preset"].get<std::string>(), spec["backend"].get<std::string>());
  md += fmt::format("- created: {}\n", result["created"].get<std::string>());
  md += fmt::format("- perflab: {} (git {})\n", env.value("perflab_version", "?"),
                    env.value("git_revision", "?"));
  md += fmt::format("- host: {}, {} threads\n", env.value("cpu_model", std::string("?")),
                    spec["threads"].get<int>());
  const json devices = env.value("/cuda/devices"_json_pointer, json::array());
  if (spec["backend"] == "cuda" && !devices.empty()) {
    md += fmt::format("- device: {}\n", devices[0].value("name", std::string("?")));
  }
  if (!spec["overrides"].empty())
    md += fmt::format("- overrides: `{}`\n", spec["overrides"].dump());
  return md;
}

std::string render_toggles_markdown(const json& result) {
  std::string md = "## Toggles\n\n| toggle | requested | in effect | reason |\n|---|---|---|---|\n";
  for (const auto& [name, t] : result["toggles"].items()) {
    md += fmt::format("| {} | {} | {} | {} |\n", name, t["requested"].get<bool>() ? "on" : "off",
                      t["in_effect"].get<bool>() ? "on" : "off", t.value("reason", ""));
  }
  return md;
}

}  // namespace perflab::reports
