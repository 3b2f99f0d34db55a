// nccl-tests' table for collectives results, so a script that parses
// nccl-tests' output parses perflab's unchanged: '#' header and footer
// lines; per size: size (B), count (elements), type, redop, root, then
// out-of-place and in-place groups of time (us), algbw (GB/s), busbw
// (GB/s), #wrong; then the algorithm column perflab adds. Footer: "# Out
// of bounds values : N OK|FAILED" and "# Avg bus bandwidth : X".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/result_model.h"
#include "reports/svg_chart.h"

namespace perflab::reports {

/// Whether `result` is a collectives benchmark's (its plan names a collective).
bool is_collectives_result(const Result& result);

/// One placement of one size: time per operation (median over the timed
/// iterations of every run, divided by the operations per iteration).
struct CollectivesMeasure {
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  int64_t wrong = -1;   ///< -1: not checked.
  std::string algorithm;  ///< What ran it ("mpi", NCCL's algorithm/protocol), "-" when unknown.
};

struct CollectivesRow {
  std::string collective, dtype, redop;
  int root = -1;
  size_t size_bytes = 0, count = 0;
  int ranks = 1;
  std::string communicator;
  std::optional<CollectivesMeasure> out_of_place, in_place;
};

/// Rows in (collective, type, redop, size) order, placements paired.
std::vector<CollectivesRow> collectives_rows(const std::vector<Result>& results);

/// The table (collectives results only; others are left out).
std::string render_collectives_table(const std::vector<Result>& results);

/// The same rows for a report's table: header and cells (text).
std::vector<std::string> collectives_header();
std::vector<std::vector<std::string>> collectives_cells(const std::vector<CollectivesRow>& rows);

/// Bus bandwidth against message size, one line per collective, type and
/// placement, both axes logarithmic.
LineChart collectives_chart(const std::vector<CollectivesRow>& rows);

}  // namespace perflab::reports
