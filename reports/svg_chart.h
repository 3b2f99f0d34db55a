// A small inline-SVG chart writer for HTML reports: line charts (series on a
// left and optionally a right y axis, linear or log2 x axis) and bar charts
// with error bars. No JavaScript: tooltips are SVG <title> elements. Output is
// deterministic (fixed number formatting, no ids or clocks), so it can be
// compared byte for byte in tests; all text is XML-escaped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perflab::reports {

/// One line of a line chart.
struct Series {
  std::string name;          ///< Shown in the legend.
  std::vector<double> x, y;  ///< Same length; points with non-finite values are left out.
  bool right_axis = false;   ///< Plot against the right-hand y axis.
  bool dashed = false;
  /// Per-point tooltip; when absent (or short), "name: x, y".
  std::vector<std::string> tooltips;
};

/// A line chart.
struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;        ///< Left axis.
  std::string y_right_label;  ///< Right axis (drawn only when a series uses it).
  bool log2_x = false;        ///< Log2 x axis, ticks at powers of two; x <= 0 left out.
  bool log10_y = false;       ///< Log10 left axis, ticks at powers of ten; y <= 0 left out.
  bool x_bytes = false;       ///< With log2_x: ticks labelled as sizes ("64", "4K", "256M", "8G").
  std::vector<Series> series;
  std::optional<double> reference_y;  ///< A horizontal dashed line (e.g. the target).
  std::string reference_label;
  /// Vertical dashed lines at these x values, labelled (e.g. change points
  /// and their revisions).
  std::vector<std::pair<double, std::string>> markers;
  int width = 640;
  int height = 360;
};

/// One part of a stacked bar.
struct BarSegment {
  std::string name;  ///< In the legend.
  double value = 0;
};

/// One bar, with an optional error bar from `low` to `high`. A stacked bar
/// gives its parts in `stack` (bottom first; `value` is then their sum) and
/// the chart draws a legend of the parts' names.
struct Bar {
  std::string label;  ///< Under the bar.
  double value = 0;
  std::optional<double> low, high;
  std::string annotation;  ///< Above the bar (e.g. "1.25x").
  std::string tooltip;     ///< Defaults to "label: value".
  bool highlight = false;  ///< Drawn in the accent colour.
  std::vector<BarSegment> stack;
};

/// A vertical bar chart whose y axis starts at 0.
struct BarChart {
  std::string title;
  std::string y_label;
  std::vector<Bar> bars;
  int width = 640;
  int height = 360;
};

/// The <svg> element of a chart.
std::string render_line_chart(const LineChart& chart);
std::string render_bar_chart(const BarChart& chart);

/// Escapes & < > " ' for XML text and attribute values.
std::string xml_escape(std::string_view text);

/// Round tick values (1, 2 or 5 times a power of ten) spanning [lo, hi],
/// about `target` of them; the first is <= lo and the last >= hi.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

/// A tick value with as many decimals as `step` needs ("0.25", "1000").
std::string format_tick(double value, double step);

}  // namespace perflab::reports
