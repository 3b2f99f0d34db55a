// Inference reports, rendered from a result whose kind is "inference"
// (--mode inference: an MLPerf Inference scenario run by MLCommons LoadGen):
// per seed LoadGen's verdict and its reason, the scenario's throughput, the
// latency percentiles, the batches the engine saw, and where LoadGen's own
// logs are. Every figure is LoadGen's (harness/loadgen_result.h).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/result_model.h"

namespace perflab::reports {

/// LoadGen's latency at `percentile` in a run's inference record (its
/// percentiles list), in ns; empty when it was not reported.
std::optional<double> loadgen_latency_ns(const nlohmann::json& inference, double percentile);

/// Markdown report: setup, the LoadGen settings, one row per seed.
std::string render_inference_markdown(const Result& result);
/// A few plain lines for the console after a run.
std::string render_inference_summary(const Result& result);

}  // namespace perflab::reports
