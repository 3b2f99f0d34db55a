// The per-kernel profile of a run (harness/kernel_profile.h) as people read
// it: a Markdown section for report.md and the few lines the terminal
// summary shows.
#pragma once

#include <string>

#include "harness/result_model.h"

namespace perflab::reports {

/// "## Kernels" with each profiled run's table (the first `max_rows` rows,
/// most time first), its declared groups, declarations no kernel matched,
/// kernels per iteration measured and declared, and the profiler's cost;
/// "" when no run was profiled.
std::string render_profile_markdown(const Result& result, size_t max_rows = 25);

/// The terminal's view: per profiled run, kernels per iteration, the
/// profiler's cost and the top `top` kernels (share, time, x floor), and
/// where the trace is; "" when no run was profiled.
std::string render_profile_summary(const Result& result, size_t top = 5);

/// A kernel's name cut to `width` characters for a table: templates'
/// argument lists and the parameter list dropped first, then the middle.
std::string short_kernel_name(const std::string& name, size_t width = 60);

}  // namespace perflab::reports
