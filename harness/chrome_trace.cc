// Chrome trace-event JSON from activity records (see chrome_trace.h).
#include "harness/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "harness/kernel_profile.h"

namespace perflab {
namespace {

using json = nlohmann::json;

/// The host's phases are process 0; device d is process d + 1.
constexpr int kHostPid = 0;

}  // namespace

json chrome_trace(const ActivityLog& log, const std::string& title) {
  uint64_t origin = UINT64_MAX;
  uint64_t untimed = 0;
  for (const ActivityRecord& r : log.records) {
    if (r.timed()) origin = std::min(origin, r.start_ns);
  }
  json events = json::array();
  std::set<std::pair<int, uint32_t>> tracks;  // (pid, tid) named below
  for (const ActivityRecord& r : log.records) {
    if (!r.timed()) {
      ++untimed;  // no place on the timeline; counted in otherData
      continue;
    }
    const bool range = r.kind == ActivityKind::kRange;
    const int pid = range ? kHostPid : static_cast<int>(r.device) + 1;
    const uint32_t tid = range ? 0 : r.stream;
    tracks.insert({pid, tid});
    json args = json::object();
    if (r.bytes) args["bytes"] = r.bytes;
    if (r.graph) args["graph"] = r.graph;
    if (r.kind == ActivityKind::kKernel && r.name != demangle(r.name)) args["symbol"] = r.name;
    events.push_back({{"name", r.kind == ActivityKind::kKernel ? demangle(r.name) : r.name},
                      {"cat", activity_kind_name(r.kind)},
                      {"ph", "X"},
                      {"ts", static_cast<double>(r.start_ns - origin) / 1e3},
                      {"dur", static_cast<double>(r.duration_ns()) / 1e3},
                      {"pid", pid},
                      {"tid", tid},
                      {"args", args}});
  }
  json meta = json::array();
  std::set<int> pids;
  for (const auto& [pid, tid] : tracks) {
    if (pids.insert(pid).second) {
      meta.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", 0},
                      {"args",
                       {{"name", pid == kHostPid ? std::string("host: perflab phases")
                                                 : fmt::format("GPU {}", pid - 1)}}}});
      meta.push_back({{"name", "process_sort_index"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"sort_index", pid}}}});
    }
    meta.push_back({{"name", "thread_name"},
                    {"ph", "M"},
                    {"pid", pid},
                    {"tid", tid},
                    {"args",
                     {{"name", pid == kHostPid ? std::string("phases (NVTX)")
                                               : fmt::format("stream {}", tid)}}}});
  }
  for (json& e : events) meta.push_back(std::move(e));
  return {{"traceEvents", meta},
          {"displayTimeUnit", "ns"},
          {"otherData",
           {{"producer", "perflab"},
            {"title", title},
            {"dropped_records", log.dropped},
            {"untimed_records", untimed}}}};
}

}  // namespace perflab
