// Throughput reports, rendered from a result whose kind is "throughput":
// samples/s, device and host time per iteration, achieved rates against the
// roofline floor, each run's correctness gate, and what a device step did.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/result_model.h"

namespace perflab::reports {

/// Markdown report: setup, toggles, per-seed table, work and floor, gates.
std::string render_throughput_markdown(const Result& result);
/// A few plain lines for the console after a run.
std::string render_throughput_summary(const Result& result);
/// Dispatches on the result's kind (time_to_train, throughput or inference).
std::string render_run_markdown(const Result& result);
std::string render_run_summary(const Result& result);

/// The same from a result document (parsed by the typed reader).
std::string render_throughput_markdown(const nlohmann::json& result);
std::string render_throughput_summary(const nlohmann::json& result);
std::string render_run_markdown(const nlohmann::json& result);
std::string render_run_summary(const nlohmann::json& result);

}  // namespace perflab::reports
