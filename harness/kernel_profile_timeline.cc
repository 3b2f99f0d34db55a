// The profile's timeline figures (kernel_profile_timeline.h): busy share,
// concurrency, idle gaps and busy waits from the timed device records.
#include "harness/kernel_profile_timeline.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace perflab {
namespace {

/// The last-arrival path's busy waits (BusyWait) over `spans`, the timed
/// device records sorted by start; a wait longer than `max_wait_ns` (a
/// stall) is left out.
void busy_waits(const std::vector<const ActivityRecord*>& spans, int64_t iterations, double max_wait_ns,
                KernelProfile& p) {
  std::vector<const ActivityRecord*> by_end = spans;
  std::stable_sort(by_end.begin(), by_end.end(),
                   [](const ActivityRecord* a, const ActivityRecord* b) { return a->end_ns < b->end_ns; });
  uint64_t longest = 0;
  for (const ActivityRecord* r : spans) longest = std::max(longest, r->duration_ns());
  struct Wait {
    double ns = 0;
    int64_t count = 0;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Wait> waits;
  std::vector<std::pair<uint64_t, uint64_t>> busy;  // a wait's overlapping intervals
  const ActivityRecord* cur = by_end.back();
  for (;;) {
    // The record that ended last at or before cur's start (ends strictly
    // fall along the path: each record at most once).
    const auto at = std::upper_bound(by_end.begin(), by_end.end(), cur->start_ns,
                                     [](uint64_t t, const ActivityRecord* r) { return t < r->end_ns; });
    if (at == by_end.begin()) break;
    const ActivityRecord* before = *(at - 1);
    const uint64_t from = before->end_ns, to = cur->start_ns;
    if (to > from && static_cast<double>(to - from) <= max_wait_ns) {
      // Records running in (from, to): none ends inside it, so each started
      // before `to` and ends at or after it; at most `longest` before `from`.
      const auto first = std::lower_bound(spans.begin(), spans.end(), from > longest ? from - longest : 0,
                                          [](const ActivityRecord* r, uint64_t t) { return r->start_ns < t; });
      const ActivityRecord* beside = nullptr;
      uint64_t most = 0;
      busy.clear();
      for (auto it = first; it != spans.end() && (*it)->start_ns < to; ++it) {
        const ActivityRecord* r = *it;
        if (r->end_ns <= from) continue;
        const uint64_t lo = std::max(r->start_ns, from), hi = std::min(r->end_ns, to);
        if (hi <= lo) continue;
        busy.emplace_back(lo, hi);
        if (hi - lo > most) {
          most = hi - lo;
          beside = r;
        }
      }
      if (beside != nullptr) {
        std::sort(busy.begin(), busy.end());
        uint64_t busy_ns = 0, reach = from;
        for (const auto& [lo, hi] : busy) {
          if (hi > reach) {
            busy_ns += hi - std::max(lo, reach);
            reach = hi;
          }
        }
        Wait& w = waits[{row_name(*before), row_name(*cur), row_name(*beside)}];
        w.ns += static_cast<double>(busy_ns);
        ++w.count;
      }
    }
    cur = before;
  }
  const auto n = static_cast<double>(iterations);
  for (const auto& [names, w] : waits) {
    p.busy_waits.push_back({std::get<0>(names), std::get<1>(names), std::get<2>(names), w.ns / 1e3 / n,
                            static_cast<double>(w.count) / n});
  }
  std::stable_sort(p.busy_waits.begin(), p.busy_waits.end(), [](const BusyWait& a, const BusyWait& b) {
    return a.us_per_iteration > b.us_per_iteration;
  });
  if (p.busy_waits.size() > kBusyWaitsKept) p.busy_waits.resize(kBusyWaitsKept);
}

}  // namespace

void timeline(const ActivityLog& log, int64_t iterations, KernelProfile& p) {
  std::vector<const ActivityRecord*> spans;
  double summed_ns = 0;
  for (const ActivityRecord& r : log.records) {
    if (r.kind == ActivityKind::kRange || !r.timed() || r.duration_ns() == 0) continue;
    spans.push_back(&r);
    summed_ns += static_cast<double>(r.duration_ns());
  }
  if (spans.empty()) return;
  std::stable_sort(spans.begin(), spans.end(),
                   [](const ActivityRecord* a, const ActivityRecord* b) { return a->start_ns < b->start_ns; });
  struct Idle {
    double ns = 0;
    int64_t count = 0;
  };
  struct Gap {
    const ActivityRecord* before;
    const ActivityRecord* after;
    uint64_t ns;
  };
  std::vector<Gap> gaps;
  uint64_t to = spans.front()->end_ns;           // the busy stretch's end so far
  const ActivityRecord* ended = spans.front();  // the stretch's record that ends last
  double idle_ns = 0;
  for (const ActivityRecord* r : spans) {
    if (r->start_ns > to) {
      gaps.push_back({ended, r, r->start_ns - to});
      idle_ns += static_cast<double>(r->start_ns - to);
    }
    if (r->end_ns > to) {
      to = r->end_ns;
      ended = r;
    }
  }
  // A gap longer than a whole iteration (the span over the iterations) is
  // a stall outside the step's own structure, such as the first launch
  // under the profiler (3.9 ms in an H200 trace of 0.2 ms steps): counted
  // apart and left out of the busy share and the idle gaps.
  const double span_ns = static_cast<double>(to - spans.front()->start_ns);
  const double busy_ns = span_ns - idle_ns;
  const double per_iteration_ns = span_ns / static_cast<double>(iterations);
  std::map<std::pair<std::string, std::string>, Idle> idle;
  double stall_ns = 0;
  for (const Gap& g : gaps) {
    if (static_cast<double>(g.ns) > per_iteration_ns) {
      ++p.stalls;
      stall_ns += static_cast<double>(g.ns);
      continue;
    }
    Idle& gap = idle[{row_name(*g.before), row_name(*g.after)}];
    gap.ns += static_cast<double>(g.ns);
    ++gap.count;
  }
  p.stall_us = stall_ns / 1e3;
  p.concurrency = summed_ns / busy_ns;
  p.busy_share = busy_ns / (span_ns - stall_ns);
  const auto n = static_cast<double>(iterations);
  for (const auto& [names, gap] : idle) {
    p.idle_gaps.push_back({names.first, names.second, gap.ns / 1e3 / n, static_cast<double>(gap.count) / n});
  }
  std::stable_sort(p.idle_gaps.begin(), p.idle_gaps.end(), [](const IdleGap& a, const IdleGap& b) {
    return a.us_per_iteration > b.us_per_iteration;
  });
  if (p.idle_gaps.size() > kIdleGapsKept) p.idle_gaps.resize(kIdleGapsKept);
  busy_waits(spans, iterations, per_iteration_ns, p);
}


}  // namespace perflab
