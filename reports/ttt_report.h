// Time-to-train reports, rendered from a result document (result.json).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace perflab::reports {

/// A short Markdown report: setup, toggles, per-seed table, olympic mean,
/// throughput and quality curves.
std::string render_ttt_markdown(const nlohmann::json& result);

/// A few plain lines for the console after a run.
std::string render_ttt_summary(const nlohmann::json& result);

}  // namespace perflab::reports
