// The result document of an invocation: the runner's record as the result
// model (harness/result_model.h), which writes and reads it.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/result_model.h"
#include "harness/runner.h"

namespace perflab {

/// The invocation's record as a Result: resolved spec, environment, toggles
/// (requested and in effect), plan, work at the median iteration, per-run
/// records and the score. `created` is now, in UTC.
Result result_of(const InvocationRecord& record, const nlohmann::json& environment);

/// The document written as result.json: to_json(result_of(...)).
nlohmann::json result_to_json(const InvocationRecord& record, const nlohmann::json& environment);

}  // namespace perflab
