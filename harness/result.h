// The result model: an invocation's record serialised as versioned JSON.
// Reports read this JSON, never the runner's in-memory types.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "harness/runner.h"

namespace perflab {

/// Bumped whenever a field changes meaning or is removed.
inline constexpr int kResultSchemaVersion = 1;

/// The result document: schema version, resolved spec, environment,
/// toggles (requested and in effect), plan, per-run records and the score.
nlohmann::json result_to_json(const InvocationRecord& record, const nlohmann::json& environment);

/// Checks that `result` has the fields of the current schema; returns an
/// empty string when valid, else the first problem found.
std::string validate_result(const nlohmann::json& result);

/// Reads and validates a result file; throws UsageError naming the file and
/// the problem (unreadable, not JSON, other schema version, missing field).
nlohmann::json read_result(const std::filesystem::path& path);

}  // namespace perflab
