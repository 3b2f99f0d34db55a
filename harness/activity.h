// What the device ran, as CUPTI's activity API records it: every kernel,
// copy and memset with its stream and device timestamps, plus the phase
// ranges the harness marks on the host (harness/phase.h) on the same clock.
// Plain data, built and read without CUDA: the CUPTI collector
// (harness/cupti_activity.cc) fills it on a GPU, tests read it from
// recorded fixtures (tests/harness/fixtures/*.activity.json).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace perflab {

enum class ActivityKind { kKernel, kMemcpy, kMemset, kRange };

/// "kernel", "memcpy", "memset", "range".
const char* activity_kind_name(ActivityKind kind);

/// One record. Timestamps are nanoseconds on CUPTI's clock (cuptiGetTimestamp),
/// which the phase ranges share, so host ranges and device work line up.
struct ActivityRecord {
  ActivityKind kind = ActivityKind::kKernel;
  /// Kernel: its name as CUPTI gives it (mangled C++ or a plain symbol);
  /// memcpy: "memcpy HtoD" etc.; memset: "memset"; range: the phase name.
  std::string name;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t device = 0;
  uint32_t stream = 0;  ///< CUPTI's stream id; 0 for ranges.
  uint64_t bytes = 0;   ///< Memcpy and memset: bytes moved or set.
  uint32_t graph = 0;   ///< Kernel launched from a CUDA graph: its graph id (0: eager).
  int depth = 0;        ///< Range: nesting depth (0: outermost).

  uint64_t duration_ns() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
  /// CUPTI may give a record no timestamps (0 and 0) when it could not time
  /// it: it counts as a launch, but has no place on a timeline.
  bool timed() const { return start_ns != 0 || end_ns != 0; }
};

/// Everything collected in one profiled window.
struct ActivityLog {
  std::vector<ActivityRecord> records;
  /// Records CUPTI reported as dropped (buffers full): the table then
  /// undercounts, and says so.
  uint64_t dropped = 0;
};

/// {"records": [...], "dropped": N}: the fixture format, and what a
/// --profile trace run could keep for offline analysis.
nlohmann::json activity_to_json(const ActivityLog& log);
/// Reads activity_to_json's format; throws UsageError naming the first bad field.
ActivityLog activity_from_json(const nlohmann::json& j);

}  // namespace perflab
