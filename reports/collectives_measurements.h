// Measured collectives for `perflab model --calibrate` (collectives/model_fit.h):
// the one place that turns files into MeasuredPoints.
//
// Read today: a CSV whose header names the columns op, nranks, nnodes, bytes,
// time_us, algorithm (any order; other columns ignored; '#' lines are
// comments), or a JSON document {"points": [{"op": "all_reduce", "nranks": 16,
// "nnodes": 2, "bytes": 1048576, "time_us": 45.2, "algorithm": "ring"}, ...]}.
// Also the collectives benchmark's result.json files (NCCL runs: one point
// per size and placement, nccl-tests' size, the time per operation and the
// algorithm NCCL logged), or a run or sweep folder holding them.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/model_fit.h"

namespace perflab::reports {

/// The points in one file; UsageError (one line naming file:line) for a file
/// that cannot be read or a row that is not a measurement.
std::vector<collectives::MeasuredPoint> load_measurements(const std::filesystem::path& path);

/// The CSV form; `name` is used in messages.
std::vector<collectives::MeasuredPoint> parse_measurements_csv(std::string_view text, const std::string& name);

/// The JSON form.
std::vector<collectives::MeasuredPoint> parse_measurements_json(std::string_view text, const std::string& name);

}  // namespace perflab::reports
