// Private to kernel_profile.cc: the profile's figures from the records'
// timeline (one clock, CUPTI's), apart from the per-kernel table.
#pragma once

#include <cstdint>
#include <string>

#include "harness/activity.h"
#include "harness/kernel_profile.h"

namespace perflab {

/// The row a record belongs to: a kernel by its demangled name, copies by
/// direction, memsets together.
inline std::string row_name(const ActivityRecord& r) {
  return r.kind == ActivityKind::kKernel ? demangle(r.name) : r.name;
}

/// busy_share and concurrency from the timed device records: their
/// intervals merged (the union is the busy time) against their span, first
/// start to last end. One clock (CUPTI's) for both, this rank's own
/// records: not the iterations' CUDA-event times, which leave out what runs
/// between iterations (the next batch's copy) and across ranks are the
/// slowest rank's. Then the idle gaps between busy stretches, each named by
/// the record that ended its stretch last and the one that started the
/// next, and the last-arrival path's busy waits, each summed per names over
/// the window's `iterations`; stalls (gaps longer than an iteration) apart.
void timeline(const ActivityLog& log, int64_t iterations, KernelProfile& p);

}  // namespace perflab
