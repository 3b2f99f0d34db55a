// Chrome's trace-event JSON (the format chrome://tracing and Perfetto open)
// from a profiled window's activity (harness/activity.h): each device's
// kernels, copies and memsets as complete events on one track per stream,
// and the harness's phase ranges (run, iteration, forward, backward, ...)
// on a host track above them, on the same clock.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/activity.h"

namespace perflab {

/// {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}:
/// process and thread names as metadata events ("ph": "M"), every record a
/// complete event ("ph": "X", "ts"/"dur" in microseconds from the first
/// record), kernels' names demangled, bytes in "args". `title` goes into
/// otherData (the run it came from).
nlohmann::json chrome_trace(const ActivityLog& log, const std::string& title);

}  // namespace perflab
