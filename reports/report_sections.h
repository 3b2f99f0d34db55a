// Markdown sections every single-invocation report shares: the setup lines,
// the toggles table, and what device steps did.
#pragma once

#include <string>

#include "harness/result_model.h"

namespace perflab::reports {

/// "# perflab: WORKLOAD (preset P) on BACKEND" and the setup bullet lines.
std::string render_setup_markdown(const Result& result);
/// "setup: prepare 1.234 s (data and configuration, once), init 0.012 s per
/// run (median)": the time outside the timed region, so a slow setup is
/// never hidden (the console's last lines and report.md's header).
std::string setup_time_text(const Result& result);
/// "## Toggles" with requested / in effect / reason per toggle.
std::string render_toggles_markdown(const Result& result);
/// "## Device execution": per run, the CUDA graphs captured and replayed
/// (or why none were) and the host syncs per iteration against what the
/// step declares. Empty when no run had a device step.
std::string render_execution_markdown(const Result& result);
/// "## Parts timed alone": per run, each part the step names
/// (runs[].parts: milliseconds, the median of its repetitions on the
/// slowest rank, and the clock). Empty when no run has parts.
std::string render_parts_markdown(const Result& result);
/// "## Program": an external workload's runs (runs[].program): the command
/// each ran, how it ended, where its output is, the compliance check, and
/// what its log says it is (submission_* keys). Says that perflab passes
/// toggles to the program and cannot see whether it honoured them. Empty
/// when no run was an external program's.
std::string render_program_markdown(const Result& result);
/// Where a multi-rank step placed its parameters and what its exchanges
/// moved, from the step plan's data facts "placement" (ranks: rank, tables,
/// rows) and "all_to_all_bytes_per_iteration" (forward, backward): console
/// lines, or "## Ranks" in Markdown. Empty when the plan records no
/// placement (one rank).
std::string render_placement_summary(const Result& result);
std::string render_placement_markdown(const Result& result);
/// A multi-GPU projection of the step's communication, from the data fact
/// "projection" (workloads/dlrm/projection.h; scales with GPUs, batch,
/// bytes, times and algorithms): "## Communication at 8, 64 and 512 GPUs"
/// in Markdown, or one console line (the placement summary ends with it).
/// Empty without the fact.
std::string render_projection_markdown(const Result& result);
std::string render_projection_summary(const Result& result);

}  // namespace perflab::reports
