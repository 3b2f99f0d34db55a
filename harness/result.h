// The result model: an invocation's record serialised as versioned JSON.
// Reports read this JSON, never the runner's in-memory types.
#pragma once

#include <cstdint>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "harness/runner.h"

namespace perflab {

/// Bumped whenever a field changes meaning or is removed. Version 2: plan's
/// training fields are null for workloads that do not train, spec names the
/// batch-size and learning-rate parameters, runs record their execution
/// (graphs, host syncs) and may have null epochs.
inline constexpr int kResultSchemaVersion = 2;
/// The oldest version readers still accept (results from earlier perflabs).
inline constexpr int kOldestReadableResultSchemaVersion = 1;

/// Whether this perflab reads results of schema `version`: the one place
/// that decides, for the harness and every report.
inline bool result_schema_readable(int64_t version) {
  return version >= kOldestReadableResultSchemaVersion && version <= kResultSchemaVersion;
}

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
