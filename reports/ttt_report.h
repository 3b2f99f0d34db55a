// Time-to-train reports, rendered from a result (result.json).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/result_model.h"

namespace perflab::reports {

/// A short Markdown report: setup, toggles, per-seed table, olympic mean,
/// throughput and quality curves.
std::string render_ttt_markdown(const Result& result);
/// A few plain lines for the console after a run.
std::string render_ttt_summary(const Result& result);

/// The same from a result document (parsed by the typed reader).
std::string render_ttt_markdown(const nlohmann::json& result);
std::string render_ttt_summary(const nlohmann::json& result);

}  // namespace perflab::reports
