// The per-kernel table (see kernel_profile.h) and the activity log's JSON.
#include "harness/kernel_profile.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/json_number.h"
#include "harness/kernel_profile_timeline.h"

namespace perflab {
namespace {

using json = nlohmann::json;

/// A field of `j` read through `read`, or a UsageError naming `where.key`.
template <typename T>
T need(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    throw UsageError(fmt::format("{}: '{}' is missing", where, key));
  const json& v = j.at(key);
  if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) throw UsageError(fmt::format("{}.{}: not a string", where, key));
    return v.get<std::string>();
  } else {
    std::optional<T> n = json_number<T>(v);
    if (!n) throw UsageError(fmt::format("{}.{}: not a number of the expected range", where, key));
    return *n;
  }
}

std::optional<double> maybe(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return need<double>(j, key, where);
}

json optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

/// Each declared kernel string with the launches and work declared for it.
struct Declared {
  int launches = 0;
  kernels::KernelCost cost;
};

}  // namespace

const char* activity_kind_name(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kKernel:
      return "kernel";
    case ActivityKind::kMemcpy:
      return "memcpy";
    case ActivityKind::kMemset:
      return "memset";
    case ActivityKind::kRange:
      return "range";
  }
  return "?";
}

json activity_to_json(const ActivityLog& log) {
  json records = json::array();
  for (const ActivityRecord& r : log.records) {
    json j = {{"kind", activity_kind_name(r.kind)},
              {"name", r.name},
              {"start_ns", r.start_ns},
              {"end_ns", r.end_ns},
              {"device", r.device},
              {"stream", r.stream}};
    if (r.bytes) j["bytes"] = r.bytes;
    if (r.graph) j["graph"] = r.graph;
    if (r.kind == ActivityKind::kRange) j["depth"] = r.depth;
    records.push_back(std::move(j));
  }
  return {{"records", records}, {"dropped", log.dropped}};
}

ActivityLog activity_from_json(const json& j) {
  ActivityLog log;
  if (!j.is_object() || !j.contains("records") || !j.at("records").is_array()) {
    throw UsageError("activity: 'records' is missing or not an array");
  }
  log.dropped = j.contains("dropped") ? need<uint64_t>(j, "dropped", "activity") : 0;
  size_t i = 0;
  for (const json& r : j.at("records")) {
    const std::string where = fmt::format("activity.records[{}]", i++);
    ActivityRecord a;
    const std::string kind = need<std::string>(r, "kind", where);
    if (kind == "kernel") {
      a.kind = ActivityKind::kKernel;
    } else if (kind == "memcpy") {
      a.kind = ActivityKind::kMemcpy;
    } else if (kind == "memset") {
      a.kind = ActivityKind::kMemset;
    } else if (kind == "range") {
      a.kind = ActivityKind::kRange;
    } else {
      throw UsageError(
          fmt::format("{}.kind: '{}' is not kernel, memcpy, memset or range", where, kind));
    }
    a.name = need<std::string>(r, "name", where);
    a.start_ns = need<uint64_t>(r, "start_ns", where);
    a.end_ns = need<uint64_t>(r, "end_ns", where);
    if (a.end_ns < a.start_ns) throw UsageError(fmt::format("{}: ends before it starts", where));
    a.device = r.contains("device") ? need<uint32_t>(r, "device", where) : 0;
    a.stream = r.contains("stream") ? need<uint32_t>(r, "stream", where) : 0;
    a.bytes = r.contains("bytes") ? need<uint64_t>(r, "bytes", where) : 0;
    a.graph = r.contains("graph") ? need<uint32_t>(r, "graph", where) : 0;
    a.depth = r.contains("depth") ? need<int>(r, "depth", where) : 0;
    log.records.push_back(std::move(a));
  }
  return log;
}

std::vector<std::pair<std::string, int>> launches_per_phase(const LaunchPlan& plan) {
  std::vector<std::pair<std::string, int>> out;
  for (const DeclaredKernel& k : plan) {
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == k.phase; });
    if (it == out.end()) {
      out.emplace_back(k.phase, 1);
    } else {
      ++it->second;
    }
  }
  return out;
}

bool kernel_matches(const std::string& name, const std::string& pattern) {
  size_t start = 0;
  while (start <= pattern.size()) {
    const size_t bar = pattern.find('|', start);
    const std::string part =
        pattern.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    if (!part.empty() && name.find(part) != std::string::npos) return true;
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return false;
}

std::string demangle(const std::string& symbol) {
  if (symbol.rfind("_Z", 0) != 0) return symbol;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

std::optional<double> KernelProfile::overhead() const {
  if (!profiled_iteration_ms || !unprofiled_iteration_ms || *unprofiled_iteration_ms <= 0)
    return std::nullopt;
  return *profiled_iteration_ms / *unprofiled_iteration_ms;
}

KernelProfile build_kernel_profile(const ActivityLog& log, int64_t iterations, double window_us,
                                   const LaunchPlan& declared, const kernels::DevicePeaks* peaks,
                                   const std::string& peaks_note) {
  if (iterations < 1) throw Error("internal: a kernel profile needs at least one iteration");
  KernelProfile p;
  p.iterations = iterations;
  p.dropped = log.dropped;
  p.peaks = peaks ? peaks->model : peaks_note;
  const auto n = static_cast<double>(iterations);

  // Rows: device records grouped by name, kind kept.
  std::map<std::string, KernelRow> rows;
  uint64_t first = UINT64_MAX, last = 0;
  for (const ActivityRecord& r : log.records) {
    if (r.kind == ActivityKind::kRange) continue;
    KernelRow& row = rows[std::string(activity_kind_name(r.kind)) + "\n" + row_name(r)];
    row.name = row_name(r);
    row.kind = activity_kind_name(r.kind);
    row.launches_per_iteration += 1;
    row.us_per_iteration += static_cast<double>(r.duration_ns()) / 1e3;
    if (r.timed()) {
      first = std::min(first, r.start_ns);
      last = std::max(last, r.end_ns);
    }
    if (r.kind == ActivityKind::kKernel) p.kernels_per_iteration += 1;
    if (r.kind == ActivityKind::kMemcpy) p.copies_per_iteration += 1;
    if (r.kind == ActivityKind::kMemset) p.memsets_per_iteration += 1;
  }
  if (window_us <= 0 && last > first) window_us = static_cast<double>(last - first) / 1e3;
  p.iteration_us = window_us / n;
  timeline(log, iterations, p);
  p.kernels_per_iteration /= n;
  p.copies_per_iteration /= n;
  p.memsets_per_iteration /= n;
  for (auto& [key, row] : rows) {
    row.mean_us = row.us_per_iteration / row.launches_per_iteration;
    row.launches_per_iteration /= n;
    row.us_per_iteration /= n;
    row.share = p.iteration_us > 0 ? row.us_per_iteration / p.iteration_us : 0;
    p.rows.push_back(row);
  }
  std::stable_sort(p.rows.begin(), p.rows.end(), [](const KernelRow& a, const KernelRow& b) {
    return a.us_per_iteration > b.us_per_iteration;
  });

  // Declarations: summed per kernel string, matched to the kernel rows whose
  // demangled name contains it (the longest matching string wins a row).
  std::map<std::string, Declared> decl;
  for (const DeclaredKernel& k : declared) {
    Declared& d = decl[k.kernel];
    ++d.launches;
    d.cost += k.cost;
  }
  if (!declared.empty())
    p.declared_kernels_per_iteration = static_cast<double>(declared.size()) / n;
  std::map<std::string, std::vector<KernelRow*>> matched;
  for (KernelRow& row : p.rows) {
    if (row.kind != "kernel") continue;
    const std::string* best = nullptr;
    for (const auto& [kernel, d] : decl) {
      if (kernel_matches(row.name, kernel) && (!best || kernel.size() > best->size())) {
        best = &kernel;
      }
    }
    if (best) matched[*best].push_back(&row);
  }
  auto floor_us = [&](const kernels::KernelCost& cost) -> std::optional<double> {
    if (!peaks) return std::nullopt;
    const double s = kernels::kernel_floor_seconds(cost, *peaks);
    return s > 0 ? std::optional<double>(s * 1e6) : std::nullopt;
  };
  for (const auto& [kernel, d] : decl) {
    const kernels::KernelCost per{d.cost.bytes / n, d.cost.flops / n, d.cost.precision};
    const double launches = d.launches / n;
    auto it = matched.find(kernel);
    if (it == matched.end()) {
      p.unmatched.push_back(
          fmt::format("{}: declared {:g} per iteration, none ran", kernel, launches));
      continue;
    }
    const std::optional<double> floor = floor_us(per);
    if (it->second.size() == 1) {
      KernelRow& row = *it->second.front();
      row.declared = kernel;
      row.declared_launches = launches;
      row.bytes = per.bytes;
      row.flops = per.flops;
      row.precision = per.precision;
      if (row.us_per_iteration > 0) {
        if (per.bytes > 0) row.achieved_gbs = per.bytes / (row.us_per_iteration * 1e3);
        if (per.flops > 0) row.achieved_tflops = per.flops / (row.us_per_iteration * 1e6);
      }
      row.floor_us = floor;
      if (floor) row.x_floor = row.us_per_iteration / *floor;
      continue;
    }
    KernelGroup g;
    g.declared = kernel;
    g.rows = static_cast<int>(it->second.size());
    g.declared_launches = launches;
    for (const KernelRow* row : it->second) {
      g.launches_per_iteration += row->launches_per_iteration;
      g.us_per_iteration += row->us_per_iteration;
    }
    g.share = p.iteration_us > 0 ? g.us_per_iteration / p.iteration_us : 0;
    g.bytes = per.bytes;
    g.flops = per.flops;
    g.precision = per.precision;
    g.floor_us = floor;
    if (floor) g.x_floor = g.us_per_iteration / *floor;
    p.groups.push_back(g);
  }
  return p;
}

json kernel_profile_to_json(const KernelProfile& p) {
  json rows = json::array();
  for (const KernelRow& r : p.rows) {
    rows.push_back({{"name", r.name},
                    {"kind", r.kind},
                    {"launches_per_iteration", r.launches_per_iteration},
                    {"us_per_iteration", r.us_per_iteration},
                    {"mean_us", r.mean_us},
                    {"share", r.share},
                    {"declared", r.declared},
                    {"declared_launches", optional(r.declared_launches)},
                    {"bytes", optional(r.bytes)},
                    {"flops", optional(r.flops)},
                    {"precision", r.precision},
                    {"achieved_gbs", optional(r.achieved_gbs)},
                    {"achieved_tflops", optional(r.achieved_tflops)},
                    {"floor_us", optional(r.floor_us)},
                    {"x_floor", optional(r.x_floor)}});
  }
  json groups = json::array();
  for (const KernelGroup& g : p.groups) {
    groups.push_back({{"declared", g.declared},
                      {"rows", g.rows},
                      {"declared_launches", g.declared_launches},
                      {"launches_per_iteration", g.launches_per_iteration},
                      {"us_per_iteration", g.us_per_iteration},
                      {"share", g.share},
                      {"bytes", g.bytes},
                      {"flops", g.flops},
                      {"precision", g.precision},
                      {"floor_us", optional(g.floor_us)},
                      {"x_floor", optional(g.x_floor)}});
  }
  json idle_gaps = json::array();
  for (const IdleGap& g : p.idle_gaps) {
    idle_gaps.push_back({{"before", g.before},
                         {"after", g.after},
                         {"us_per_iteration", g.us_per_iteration},
                         {"gaps_per_iteration", g.gaps_per_iteration}});
  }
  json busy_waits = json::array();
  for (const BusyWait& w : p.busy_waits) {
    busy_waits.push_back({{"before", w.before},
                          {"after", w.after},
                          {"beside", w.beside},
                          {"us_per_iteration", w.us_per_iteration},
                          {"waits_per_iteration", w.waits_per_iteration}});
  }
  return {{"version", p.version},
          {"iterations", p.iterations},
          {"iteration_us", p.iteration_us},
          {"kernels_per_iteration", p.kernels_per_iteration},
          {"copies_per_iteration", p.copies_per_iteration},
          {"memsets_per_iteration", p.memsets_per_iteration},
          {"declared_kernels_per_iteration", optional(p.declared_kernels_per_iteration)},
          {"dropped", p.dropped},
          {"peaks", p.peaks},
          {"profiled_iteration_ms", optional(p.profiled_iteration_ms)},
          {"unprofiled_iteration_ms", optional(p.unprofiled_iteration_ms)},
          {"overhead", optional(p.overhead())},
          {"busy_share", optional(p.busy_share)},
          {"concurrency", optional(p.concurrency)},
          {"idle_gaps", idle_gaps},
          {"busy_waits", busy_waits},
          {"stalls", p.stalls},
          {"stall_us", p.stall_us},
          {"rows", rows},
          {"groups", groups},
          {"unmatched", p.unmatched},
          {"trace", p.trace}};
}

KernelProfile kernel_profile_from_json(const json& j) {
  const std::string where = "profile";
  KernelProfile p;
  p.version = need<int>(j, "version", where);
  if (p.version < 1 || p.version > kKernelProfileVersion) {
    throw UsageError(fmt::format("profile: version {} is not one this perflab reads (1 to {})",
                                 p.version, kKernelProfileVersion));
  }
  p.iterations = need<int64_t>(j, "iterations", where);
  p.iteration_us = need<double>(j, "iteration_us", where);
  p.kernels_per_iteration = need<double>(j, "kernels_per_iteration", where);
  p.copies_per_iteration = need<double>(j, "copies_per_iteration", where);
  p.memsets_per_iteration = need<double>(j, "memsets_per_iteration", where);
  p.declared_kernels_per_iteration = maybe(j, "declared_kernels_per_iteration", where);
  p.dropped = need<uint64_t>(j, "dropped", where);
  p.peaks = need<std::string>(j, "peaks", where);
  p.profiled_iteration_ms = maybe(j, "profiled_iteration_ms", where);
  p.unprofiled_iteration_ms = maybe(j, "unprofiled_iteration_ms", where);
  p.busy_share = maybe(j, "busy_share", where);
  p.concurrency = maybe(j, "concurrency", where);
  if (j.contains("stalls") && !j.at("stalls").is_null()) p.stalls = need<int64_t>(j, "stalls", where);
  if (j.contains("stall_us") && !j.at("stall_us").is_null()) p.stall_us = need<double>(j, "stall_us", where);
  if (j.contains("idle_gaps") && !j.at("idle_gaps").is_null()) {
    if (!j.at("idle_gaps").is_array()) throw UsageError("profile: idle_gaps is not an array");
    size_t i = 0;
    for (const json& g : j.at("idle_gaps")) {
      const std::string at = fmt::format("profile.idle_gaps[{}]", i++);
      p.idle_gaps.push_back({need<std::string>(g, "before", at), need<std::string>(g, "after", at),
                             need<double>(g, "us_per_iteration", at), need<double>(g, "gaps_per_iteration", at)});
    }
  }
  if (j.contains("busy_waits") && !j.at("busy_waits").is_null()) {
    if (!j.at("busy_waits").is_array()) throw UsageError("profile: busy_waits is not an array");
    size_t i = 0;
    for (const json& w : j.at("busy_waits")) {
      const std::string at = fmt::format("profile.busy_waits[{}]", i++);
      p.busy_waits.push_back({need<std::string>(w, "before", at), need<std::string>(w, "after", at),
                              need<std::string>(w, "beside", at), need<double>(w, "us_per_iteration", at),
                              need<double>(w, "waits_per_iteration", at)});
    }
  }
  if (j.contains("trace") && j.at("trace").is_string()) p.trace = j.at("trace").get<std::string>();
  if (!j.contains("rows") || !j.at("rows").is_array())
    throw UsageError("profile: 'rows' is missing or not an array");
  size_t i = 0;
  for (const json& r : j.at("rows")) {
    const std::string at = fmt::format("profile.rows[{}]", i++);
    KernelRow row;
    row.name = need<std::string>(r, "name", at);
    row.kind = need<std::string>(r, "kind", at);
    row.launches_per_iteration = need<double>(r, "launches_per_iteration", at);
    row.us_per_iteration = need<double>(r, "us_per_iteration", at);
    row.mean_us = need<double>(r, "mean_us", at);
    row.share = need<double>(r, "share", at);
    row.declared = r.contains("declared") && r.at("declared").is_string()
                       ? r.at("declared").get<std::string>()
                       : "";
    row.declared_launches = maybe(r, "declared_launches", at);
    row.bytes = maybe(r, "bytes", at);
    row.flops = maybe(r, "flops", at);
    row.precision = r.contains("precision") && r.at("precision").is_string()
                        ? r.at("precision").get<std::string>()
                        : "";
    row.achieved_gbs = maybe(r, "achieved_gbs", at);
    row.achieved_tflops = maybe(r, "achieved_tflops", at);
    row.floor_us = maybe(r, "floor_us", at);
    row.x_floor = maybe(r, "x_floor", at);
    p.rows.push_back(std::move(row));
  }
  i = 0;
  if (j.contains("groups") && j.at("groups").is_array()) {
    for (const json& g : j.at("groups")) {
      const std::string at = fmt::format("profile.groups[{}]", i++);
      KernelGroup group;
      group.declared = need<std::string>(g, "declared", at);
      group.rows = need<int>(g, "rows", at);
      group.declared_launches = need<double>(g, "declared_launches", at);
      group.launches_per_iteration = need<double>(g, "launches_per_iteration", at);
      group.us_per_iteration = need<double>(g, "us_per_iteration", at);
      group.share = need<double>(g, "share", at);
      group.bytes = need<double>(g, "bytes", at);
      group.flops = need<double>(g, "flops", at);
      group.precision = g.contains("precision") && g.at("precision").is_string()
                            ? g.at("precision").get<std::string>()
                            : "";
      group.floor_us = maybe(g, "floor_us", at);
      group.x_floor = maybe(g, "x_floor", at);
      p.groups.push_back(std::move(group));
    }
  }
  if (j.contains("unmatched") && j.at("unmatched").is_array()) {
    for (const json& u : j.at("unmatched")) {
      if (u.is_string()) p.unmatched.push_back(u.get<std::string>());
    }
  }
  return p;
}

}  // namespace perflab
