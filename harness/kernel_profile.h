// The per-kernel table of a profiled window: from the activity records
// (harness/activity.h) of N iterations and what the launching code declared
// of each kernel's work (bytes, FLOPs), each kernel's launches and time per
// iteration, its share of the iteration, its achieved rate and how far it
// is from its own roofline floor. One set of types, written into
// result.json (runs[].profile) and read back by reports and compare through
// the same to/from-JSON functions. Pure: no CUDA, tested on fixtures.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/activity.h"
#include "harness/launch_plan.h"
#include "kernels/roofline.h"

namespace perflab {

/// The version of the "profile" object in result.json.
inline constexpr int kKernelProfileVersion = 1;

/// One row: a kernel (by demangled name), or all copies of one direction,
/// or all memsets.
struct KernelRow {
  std::string name;
  std::string kind;  ///< "kernel", "memcpy", "memset".
  double launches_per_iteration = 0;
  double us_per_iteration = 0;  ///< Device time of all its launches, per iteration.
  double mean_us = 0;           ///< Per launch.
  double share = 0;             ///< us_per_iteration over the iteration's device time.
  /// The declaration matched to this row alone (its `kernel`), when one is.
  std::string declared;
  std::optional<double> declared_launches;  ///< Per iteration, as declared.
  std::optional<double> bytes;              ///< Per iteration, declared.
  std::optional<double> flops;              ///< Per iteration, declared.
  std::string precision;
  std::optional<double> achieved_gbs;     ///< bytes / time.
  std::optional<double> achieved_tflops;  ///< flops / time.
  std::optional<double> floor_us;         ///< Roofline floor of the declared work.
  std::optional<double> x_floor;          ///< us_per_iteration / floor_us.
};

/// A declaration whose `kernel` matches several measured rows (a library's
/// GEMMs pick a kernel per shape): their time and work together.
struct KernelGroup {
  std::string declared;
  int rows = 0;
  double declared_launches = 0;
  double launches_per_iteration = 0;
  double us_per_iteration = 0;
  double share = 0;
  double bytes = 0;
  double flops = 0;
  std::string precision;
  std::optional<double> floor_us;
  std::optional<double> x_floor;
};

/// Where the device waited: the idle time between one busy stretch and the
/// next (no kernel, copy or memset running), summed over the window's gaps
/// that fall between the same two records' names: what ended the stretch
/// (the last to end) and what started the next.
struct IdleGap {
  std::string before, after;
  double us_per_iteration = 0;
  double gaps_per_iteration = 0;
};

/// The most idle gap pairs a profile keeps, most time first.
inline constexpr size_t kIdleGapsKept = 8;

/// Where the step's last-arrival path waited while the device was busy.
/// The path runs back from the window's last record to end, at each step
/// to the record that ended last before the current one started: the
/// current one's dependency, or what freed the SMs it waited for (the
/// records do not say which). Where other records ran between the two, the
/// current one waited while the device was busy: with no free SMs, or on a
/// dependency that ended earlier. The busy part of those waits (the idle
/// part is in idle_gaps) is summed per triple of names: the record before,
/// the one that waited, and `beside`, the record that overlapped the wait
/// most. At DLRM's batch 65,536 on an H200 this is the bottom MLP's first
/// GEMM waiting ~300 us beside the embedding update (read by hand from the
/// 1590d6a traces, which predate it).
struct BusyWait {
  std::string before, after, beside;
  double us_per_iteration = 0;
  double waits_per_iteration = 0;
};

/// The most busy-wait triples a profile keeps, most time first.
inline constexpr size_t kBusyWaitsKept = 8;

struct KernelProfile {
  int version = kKernelProfileVersion;
  int64_t iterations = 0;   ///< Iterations in the profiled window.
  double iteration_us = 0;  ///< Device time per iteration in the window.
  double kernels_per_iteration = 0;
  double copies_per_iteration = 0;
  double memsets_per_iteration = 0;
  std::optional<double> declared_kernels_per_iteration;  ///< From the launch plan, when declared.
  uint64_t dropped = 0;                                  ///< Records CUPTI dropped.
  std::string peaks;  ///< The peaks the floors use, or why there are none.
  /// Median iteration time with the profiler on and off (the run's timed
  /// window), both CUDA events on the same GPU in the same run: the
  /// profiler's cost is their ratio.
  std::optional<double> profiled_iteration_ms;
  std::optional<double> unprofiled_iteration_ms;
  /// Of the profiled window's span (the first timed record's start to the
  /// last's end, less the stalls below), the share during which at least one kernel, copy or
  /// memset ran (the rest: the device waiting on launches, dependencies or
  /// the host), and their summed time over that busy time (how many ran at
  /// once, on average). Absent without timed records.
  std::optional<double> busy_share;
  std::optional<double> concurrency;
  /// The idle gaps, grouped by the names on either side, most idle time
  /// first (at most kIdleGapsKept).
  std::vector<IdleGap> idle_gaps;
  /// The last-arrival path's waits while the device was busy (BusyWait),
  /// most time first (at most kBusyWaitsKept); the stalls below left out.
  std::vector<BusyWait> busy_waits;
  /// Gaps longer than a whole iteration (the records' span over the
  /// iterations): stalls outside the step's structure (the profiler's first
  /// launch, a host pause), left out of busy_share and idle_gaps; their
  /// number and time in the window.
  int64_t stalls = 0;
  double stall_us = 0;
  std::vector<KernelRow> rows;  ///< Most time first.
  std::vector<KernelGroup> groups;
  /// Declared kernels no record matched ("declared 2 per iteration, none ran").
  std::vector<std::string> unmatched;
  std::string trace;  ///< The Chrome trace file beside the result, when written.

  /// The profiler's cost: profiled over unprofiled median (1.03 = 3%).
  std::optional<double> overhead() const;
};

/// Whether kernel `name` (demangled) is one `pattern` declares: it contains
/// the pattern, or one of its '|'-separated alternatives.
bool kernel_matches(const std::string& name, const std::string& pattern);

/// Demangles a C++ symbol (CUPTI gives kernels' mangled names); returns the
/// input unchanged when it is not one.
std::string demangle(const std::string& symbol);

/// Builds the table of `iterations` iterations from `log`, whose iterations
/// took `window_us` of device time together (0: the span of the records).
/// `declared` is the sum of the window's iterations' launch plans (empty
/// when the step declares none); `peaks` null when the device's are not
/// known (`peaks_note` says why).
KernelProfile build_kernel_profile(const ActivityLog& log, int64_t iterations, double window_us,
                                   const LaunchPlan& declared, const kernels::DevicePeaks* peaks,
                                   const std::string& peaks_note);

nlohmann::json kernel_profile_to_json(const KernelProfile& profile);
/// Reads kernel_profile_to_json's output; throws UsageError naming the
/// field that is missing or of the wrong type, or a version it cannot read.
KernelProfile kernel_profile_from_json(const nlohmann::json& j);

}  // namespace perflab
