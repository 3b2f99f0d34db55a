// Markdown sections every single-invocation report shares: the setup lines
// and the toggles table.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace perflab::reports {

/// "# perflab: WORKLOAD (preset P) on BACKEND" and the setup bullet lines.
std::string render_setup_markdown(const nlohmann::json& result);

/// "## Toggles" with requested / in effect / reason per toggle.
std::string render_toggles_markdown(const nlohmann::json& result);

}  // namespace perflab::reports
