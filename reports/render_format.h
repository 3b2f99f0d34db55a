// Formatting shared by the sweep renderers (internal to reports/render*.cc):
// fixed-precision numbers, "-" for missing values, per-point summaries.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "base/text.h"
#include "reports/result_set.h"
#include "reports/statistics.h"

namespace perflab::reports::detail {

/// Markdown table cells must not contain pipes or line breaks.
inline std::string cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') {
      out += "\\|";
    } else if (ch == '\n') {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out;
}

/// A GitHub-flavoured Markdown table (cells escaped by cell()).
inline std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string md = "|";
  for (const auto& h : header) md += " " + h + " |";
  md += "\n|";
  for (size_t i = 0; i < header.size(); ++i) md += "---|";
  md += "\n";
  for (const auto& row : rows) {
    md += "|";
    for (const auto& c : row) md += " " + cell(c) + " |";
    md += "\n";
  }
  return md;
}

/// `v` with `decimals` decimals, or `missing` when empty or not finite.
inline std::string fixed(std::optional<double> v, int decimals, const char* missing = "-") {
  if (!v || !std::isfinite(*v)) return missing;
  return fmt::format("{:.{}f}", *v, decimals);
}

/// The last value of a run's quality curve, when it has one.
inline std::optional<double> last_quality(const RunEntry& r) {
  if (r.quality_curve.empty()) return std::nullopt;
  return r.quality_curve.back().value;
}

/// "4.10, 4.32, aborted": each run's time to train in seconds.
inline std::string run_times(const Point& p) {
  std::vector<std::string> parts;
  for (const RunEntry& r : p.runs) {
    parts.push_back(r.success ? fmt::format("{:.2f}", r.time_to_train_s) : "aborted");
  }
  return join(parts, ", ");
}

/// "0.7418, 0.7405": each run's last quality value.
inline std::string last_qualities(const Point& p) {
  std::vector<std::string> parts;
  for (const RunEntry& r : p.runs) parts.push_back(fixed(last_quality(r), 4));
  return join(parts, ", ");
}

inline size_t converged(const Point& p) {
  size_t n = 0;
  for (const RunEntry& r : p.runs) n += r.success ? 1 : 0;
  return n;
}

/// "12.30" or "no score (reason)".
inline std::string score_text(const Score& s) {
  return s.value ? fmt::format("{:.2f}", *s.value) : "no score (" + s.reason + ")";
}

/// "[11.9, 12.7]" or "-" when the interval has no width to show (n < 2).
inline std::string ci_text(const MeanCi& ci, int decimals) {
  if (ci.n < 2) return "-";
  return fmt::format("[{:.{}f}, {:.{}f}]", ci.low, decimals, ci.high, decimals);
}

/// "1.25x" or "n/a".
inline std::string speedup_text(std::optional<double> s) {
  return s ? fmt::format("{:.2f}x", *s) : "n/a";
}

/// Mean over a point's runs of their mean timed iteration (ms); none when
/// no run timed any iteration.
inline std::optional<double> mean_iteration_ms(const Point& p) {
  double sum = 0;
  int n = 0;
  for (const RunEntry& r : p.runs) {
    if (r.iteration_ms_n == 0) continue;
    sum += r.iteration_ms_mean;
    ++n;
  }
  return n > 0 ? std::optional<double>(sum / n) : std::nullopt;
}

/// "12.3 ± 0.4" epochs, "-" without converged runs.
inline std::string mean_sd(std::optional<double> mean, std::optional<double> sd, int decimals) {
  if (!mean) return "-";
  if (!sd) return fixed(mean, decimals);
  return fmt::format("{:.{}f} ± {:.{}f}", *mean, decimals, *sd, decimals);
}

}  // namespace perflab::reports::detail
