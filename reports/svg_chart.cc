// Inline-SVG line and bar charts with fixed formatting.
#include "reports/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/text.h"

namespace perflab::reports {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                    "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
constexpr const char* kAccent = "#2ca02c";
constexpr const char* kBarColor = "#1f77b4";
constexpr double kCharWidth = 6.5;  // Approximate width of a 12px sans-serif character.

const char* color(size_t i) { return kPalette[i % kPaletteSize]; }

/// A power-of-two tick as a size: 2^t bytes as "512", "4K", "256M", "8G".
std::string format_size_tick(double log2_value) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T", "P"};
  const int e = static_cast<int>(std::lround(log2_value));
  if (e < 0 || e > 59) return format_tick(std::exp2(log2_value), 1);
  const int unit = std::min(e / 10, 5);
  return fmt::format("{}{}", static_cast<uint64_t>(1) << (e - 10 * unit), kUnits[unit]);
}

/// A coordinate with one decimal.
std::string c(double v) { return fmt::format("{:.1f}", v); }

std::string text(double x, double y, const std::string& s, const char* anchor,
                 const std::string& extra = "") {
  return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\"{}>{}</text>\n", c(x), c(y), anchor,
                     extra, xml_escape(s));
}

std::string line(double x1, double y1, double x2, double y2, const std::string& style) {
  return fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>\n", c(x1), c(y1), c(x2),
                     c(y2), style);
}

std::string svg_open(int width, int height, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"{2}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<title>{2}</title>\n<rect width=\"{0}\" height=\"{1}\" fill=\"#fff\"/>\n"
      "<text x=\"{3}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" "
      "font-weight=\"bold\">{2}</text>\n",
      width, height, xml_escape(title), c(width / 2.0));
}

/// The range a set of values spans, padded when it is a single value.
struct Range {
  double lo = 0, hi = 1;
};

Range span(const std::vector<double>& values) {
  if (values.empty()) return {};
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return {*lo, *hi};
}

/// One legend entry laid out in rows under the title.
struct LegendEntry {
  std::string label;
  std::string color;
  bool dashed = false;
  double x = 0, y = 0;
};

/// Places entries left to right, wrapping at `right`; returns the height used.
double layout_legend(std::vector<LegendEntry>& entries, double left, double right, double top) {
  double x = left, y = top;
  for (LegendEntry& e : entries) {
    double w = 28 + kCharWidth * static_cast<double>(e.label.size()) + 14;
    if (x > left && x + w > right) {
      x = left;
      y += 16;
    }
    e.x = x;
    e.y = y;
    x += w;
  }
  return entries.empty() ? 0 : y - top + 18;
}

std::string draw_legend(const std::vector<LegendEntry>& entries) {
  std::string out;
  for (const LegendEntry& e : entries) {
    out += line(e.x, e.y - 4, e.x + 22, e.y - 4,
                fmt::format("stroke=\"{}\" stroke-width=\"2\"{}", e.color,
                            e.dashed ? " stroke-dasharray=\"5,3\"" : ""));
    out += text(e.x + 28, e.y, e.label, "start");
  }
  return out;
}

}  // namespace

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1};
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  double raw = (hi - lo) / std::max(target, 1);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double r = raw / mag;
  double step = (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
  double start = std::floor(lo / step + 1e-9) * step;
  std::vector<double> ticks;
  for (int i = 0;; ++i) {
    double v = start + i * step;
    if (std::fabs(v) < step * 1e-9) v = 0;
    ticks.push_back(v);
    if (v >= hi - step * 1e-9) break;
  }
  return ticks;
}

std::string format_tick(double value, double step) {
  int decimals = 0;
  if (step > 0 && step < 1)
    decimals = std::min(9, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
  std::string s = fmt::format("{:.{}f}", value, decimals);
  return s == "-0" ? "0" : s;
}

std::string render_line_chart(const LineChart& chart) {
  const double width = chart.width, height = chart.height;
  auto tx = [&](double x) { return chart.log2_x ? std::log2(x) : x; };
  // The left axis may be log10: values become their logarithms, ticks powers of ten.
  auto ty = [&](const Series& s, double y) { return chart.log10_y && !s.right_axis ? std::log10(y) : y; };
  auto usable_in = [&](const Series& s, double x, double y) {
    return std::isfinite(x) && std::isfinite(y) && (!chart.log2_x || x > 0) &&
           (!chart.log10_y || s.right_axis || y > 0);
  };
  std::vector<double> xs, left_ys, right_ys;
  for (const Series& s : chart.series) {
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!usable_in(s, s.x[i], s.y[i])) continue;
      xs.push_back(tx(s.x[i]));
      (s.right_axis ? right_ys : left_ys).push_back(ty(s, s.y[i]));
    }
  }
  const double reference_y =
      chart.reference_y ? (chart.log10_y ? std::log10(*chart.reference_y) : *chart.reference_y) : 0;
  if (chart.reference_y) left_ys.push_back(reference_y);
  const bool has_right = !right_ys.empty();

  const double left = 72, right = width - (has_right ? 72 : 24);
  std::vector<LegendEntry> legend;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    std::string label = chart.series[i].name;
    if (has_right) label += chart.series[i].right_axis ? " (right)" : " (left)";
    legend.push_back({label, color(i), chart.series[i].dashed});
  }
  if (chart.reference_y) legend.push_back({chart.reference_label, "#555", true});
  const double top = 34 + layout_legend(legend, left, right, 40) + 6;
  const double bottom = height - 48;

  // Axis domains.
  std::vector<double> xticks;
  Range xr = span(xs);
  if (chart.log2_x) {
    double lo = std::floor(xr.lo), hi = std::ceil(xr.hi);
    if (hi == lo) hi = lo + 1;
    double every = std::ceil((hi - lo) / 10);
    for (double v = lo; v <= hi; v += every) xticks.push_back(v);
    // The last tick must reach the data: 2^10 .. 2^33 every 3 ends at 2^31
    // otherwise, and the points past it would be drawn outside the frame.
    if (xticks.back() < hi) xticks.push_back(xticks.back() + every);
  } else {
    xticks = nice_ticks(xr.lo, xr.hi);
  }
  Range ly = span(left_ys), ry = span(right_ys);
  std::vector<double> lticks = nice_ticks(ly.lo, ly.hi), rticks = nice_ticks(ry.lo, ry.hi);
  if (chart.log10_y) {
    lticks.clear();
    double lo = std::floor(ly.lo), hi = std::ceil(ly.hi);
    if (hi == lo) hi = lo + 1;
    for (double v = lo; v <= hi; ++v) lticks.push_back(v);
  }
  const double x0 = xticks.front(), x1 = xticks.back();
  auto px = [&](double x) { return left + (tx(x) - x0) / (x1 - x0) * (right - left); };
  auto py_axis = [&](const std::vector<double>& t, double y) {
    return bottom - (y - t.front()) / (t.back() - t.front()) * (bottom - top);
  };

  std::string out = svg_open(chart.width, chart.height, chart.title);
  out += draw_legend(legend);
  const double lstep = lticks.size() > 1 ? lticks[1] - lticks[0] : 1;
  for (double t : lticks) {
    double y = py_axis(lticks, t);
    out += line(left, y, right, y, "stroke=\"#e0e0e0\"");
    const std::string label = chart.log10_y ? format_tick(std::pow(10, t), std::pow(10, t)) : format_tick(t, lstep);
    out += text(left - 6, y + 4, label, "end");
  }
  if (has_right) {
    const double rstep = rticks.size() > 1 ? rticks[1] - rticks[0] : 1;
    for (double t : rticks) {
      out += text(right + 6, py_axis(rticks, t) + 4, format_tick(t, rstep), "start");
    }
  }
  const double xstep = xticks.size() > 1 ? xticks[1] - xticks[0] : 1;
  for (double t : xticks) {
    double x = left + (t - x0) / (x1 - x0) * (right - left);
    out += line(x, bottom, x, bottom + 5, "stroke=\"#333\"");
    std::string label = !chart.log2_x ? format_tick(t, xstep)
                        : chart.x_bytes ? format_size_tick(t)
                                        : format_tick(std::exp2(t), 1);
    out += text(x, bottom + 18, label, "middle");
  }
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n",
      c(left), c(top), c(right - left), c(bottom - top));
  out += text((left + right) / 2, height - 10, chart.x_label, "middle");
  out += text(0, 0, chart.y_label, "middle",
              fmt::format(" transform=\"translate(16,{}) rotate(-90)\"", c((top + bottom) / 2)));
  if (has_right) {
    out += text(0, 0, chart.y_right_label, "middle",
                fmt::format(" transform=\"translate({},{}) rotate(90)\"", c(width - 14),
                            c((top + bottom) / 2)));
  }
  if (chart.reference_y) {
    double y = py_axis(lticks, reference_y);
    out += line(left, y, right, y, "stroke=\"#555\" stroke-dasharray=\"5,3\"");
  }
  for (const auto& [mx, label] : chart.markers) {
    if (xs.empty() || !std::isfinite(mx) || (chart.log2_x && mx <= 0)) continue;
    const double x = px(mx);
    out += "<g class=\"marker\">" + line(x, top, x, bottom, "stroke=\"#c0392b\" stroke-dasharray=\"4,3\"") +
           text(x + 3, top + 12, label, "start") + "<title>" + xml_escape(label) + "</title></g>\n";
  }
  if (xs.empty()) out += text((left + right) / 2, (top + bottom) / 2, "no data", "middle");
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    const std::vector<double>& ticks = s.right_axis ? rticks : lticks;
    std::vector<std::string> pts;
    std::string marks;
    for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
      if (!usable_in(s, s.x[k], s.y[k])) continue;
      double x = px(s.x[k]), y = py_axis(ticks, ty(s, s.y[k]));
      pts.push_back(c(x) + "," + c(y));
      std::string tip =
          k < s.tooltips.size() ? s.tooltips[k] : fmt::format("{}: {}, {}", s.name, s.x[k], s.y[k]);
      marks += fmt::format(
          "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"><title>{}</title></circle>\n", c(x),
          c(y), color(i), xml_escape(tip));
    }
    out +=
        fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n",
                    color(i), s.dashed ? " stroke-dasharray=\"5,3\"" : "", join(pts, " "));
    out += marks;
  }
  out += "</svg>\n";
  return out;
}

namespace {

std::string bar_rect(double x, double y, double w, double h, const char* fill, const std::string& tip) {
  return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n", c(x),
                     c(y), c(w), c(std::max(0.0, h)), fill, xml_escape(tip));
}

}  // namespace

std::string render_bar_chart(const BarChart& chart) {
  const double width = chart.width, height = chart.height;
  size_t lines = 1;
  std::vector<double> tops = {0};
  for (const Bar& b : chart.bars) {
    lines = std::max(lines, split(b.label, '\n').size());
    if (std::isfinite(b.value)) tops.push_back(b.value);
    if (b.high && std::isfinite(*b.high)) tops.push_back(*b.high);
  }
  std::vector<double> ticks = nice_ticks(0, *std::max_element(tops.begin(), tops.end()) * 1.08);
  const double left = 72, right = width - 24, top = 40;
  const double bottom = height - 30 - 14 * static_cast<double>(lines);
  auto py = [&](double y) {
    return bottom - (y - ticks.front()) / (ticks.back() - ticks.front()) * (bottom - top);
  };
  std::string out = svg_open(chart.width, chart.height, chart.title);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double t : ticks) {
    out += line(left, py(t), right, py(t), "stroke=\"#e0e0e0\"");
    out += text(left - 6, py(t) + 4, format_tick(t, step), "end");
  }
  out += text(0, 0, chart.y_label, "middle",
              fmt::format(" transform=\"translate(16,{}) rotate(-90)\"", c((top + bottom) / 2)));
  if (chart.bars.empty()) out += text((left + right) / 2, (top + bottom) / 2, "no data", "middle");
  const double slot = (right - left) / static_cast<double>(std::max<size_t>(chart.bars.size(), 1));
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& b = chart.bars[i];
    const double mid = left + slot * (static_cast<double>(i) + 0.5), w = slot * 0.6;
    const double v = std::isfinite(b.value) ? b.value : 0;
    std::string tip = b.tooltip.empty() ? fmt::format("{}: {}", b.label, b.value) : b.tooltip;
    if (b.stack.empty()) {
      out += bar_rect(mid - w / 2, py(v), w, bottom - py(v), b.highlight ? kAccent : kBarColor, tip);
    }
    double base = 0;
    for (size_t s = 0; s < b.stack.size(); ++s) {
      const double part = std::isfinite(b.stack[s].value) ? std::max(0.0, b.stack[s].value) : 0;
      out += bar_rect(mid - w / 2, py(base + part), w, py(base) - py(base + part), color(s),
                      fmt::format("{}: {} {}", b.label, b.stack[s].name, part));
      base += part;
    }
    double above = py(v);
    if (b.low && b.high) {
      const std::string style = "stroke=\"#222\" stroke-width=\"1.5\"";
      out += line(mid, py(*b.low), mid, py(*b.high), style);
      out += line(mid - 6, py(*b.low), mid + 6, py(*b.low), style);
      out += line(mid - 6, py(*b.high), mid + 6, py(*b.high), style);
      above = std::min(above, py(*b.high));
    }
    if (!b.annotation.empty()) out += text(mid, above - 6, b.annotation, "middle");
    double y = bottom + 16;
    for (const std::string& part : split(b.label, '\n')) {
      out += text(mid, y, part, "middle");
      y += 14;
    }
  }
  // The legend of a stacked chart: its parts' names, right-aligned above the plot.
  const auto stacked = std::find_if(chart.bars.begin(), chart.bars.end(), [](const Bar& b) { return !b.stack.empty(); });
  if (stacked != chart.bars.end()) {
    double x = right;
    for (size_t s = stacked->stack.size(); s-- > 0;) {
      const std::string& name = stacked->stack[s].name;
      x -= 7.0 * static_cast<double>(name.size()) + 24;
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>\n", c(x), c(top - 22),
                         color(s));
      out += text(x + 14, top - 13, name, "start");
    }
  }
  out += line(left, bottom, right, bottom, "stroke=\"#333\"");
  out += line(left, top, left, bottom, "stroke=\"#333\"");
  out += "</svg>\n";
  return out;
}

}  // namespace perflab::reports
