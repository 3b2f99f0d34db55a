// SVG charts: ticks, determinism, escaping.
#include "reports/svg_chart.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace perflab::reports {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

void expect_ticks(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "tick " << i;
}

TEST(SvgChart, NiceTicks) {
  expect_ticks(nice_ticks(0, 10), {0, 2, 4, 6, 8, 10});
  expect_ticks(nice_ticks(0.71, 0.753), {0.71, 0.72, 0.73, 0.74, 0.75, 0.76});
  expect_ticks(nice_ticks(3, 3), {2.7, 2.8, 2.9, 3.0, 3.1, 3.2, 3.3});  // Padded by 10%.
  expect_ticks(nice_ticks(0, 0), {-1, -0.5, 0, 0.5, 1});
  EXPECT_EQ(nice_ticks(120, 980).front(), 0);
  EXPECT_EQ(nice_ticks(120, 980).back(), 1000);
}

TEST(SvgChart, FormatTick) {
  EXPECT_EQ(format_tick(0.7, 0.01), "0.70");
  EXPECT_EQ(format_tick(2.5, 0.5), "2.5");
  EXPECT_EQ(format_tick(1000, 200), "1000");
  EXPECT_EQ(format_tick(-0.0, 1), "0");
}

TEST(SvgChart, EscapesText) {
  EXPECT_EQ(xml_escape("a<b & c>\"d'"), "a&lt;b &amp; c&gt;&quot;d&#39;");
  LineChart line;
  line.title = "<script>&";
  line.series.push_back({"x<y", {1, 2}, {3, 4}, false, false, {}});
  std::string svg = render_line_chart(line);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;&amp;"), std::string::npos);
  EXPECT_NE(svg.find("x&lt;y"), std::string::npos);
  BarChart bars;
  bars.bars.push_back({"a&b", 1, std::nullopt, std::nullopt, "<1x>", "", false});
  std::string bar_svg = render_bar_chart(bars);
  EXPECT_NE(bar_svg.find("a&amp;b"), std::string::npos);
  EXPECT_NE(bar_svg.find("&lt;1x&gt;"), std::string::npos);
  EXPECT_EQ(bar_svg.find("<1x>"), std::string::npos);
}

TEST(SvgChart, LineChartIsDeterministicWithTwoAxes) {
  LineChart chart;
  chart.title = "sweep";
  chart.log2_x = true;
  chart.y_right_label = "time (s)";
  chart.series.push_back({"epochs", {256, 512, 1024}, {1.5, 2.5, 3.5}, false, false, {}});
  chart.series.push_back({"time", {256, 512, 1024}, {12, 9, 25}, true, true, {}});
  std::string a = render_line_chart(chart), b = render_line_chart(chart);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.rfind("<svg ", 0), 0u);
  EXPECT_EQ(count(a, "<polyline"), 2u);
  EXPECT_EQ(count(a, "<circle"), 6u);
  EXPECT_EQ(count(a, "<title>"), 7u);  // Chart title and one per point.
  EXPECT_NE(a.find(">256</text>"), std::string::npos);
  EXPECT_NE(a.find(">1024</text>"), std::string::npos);
  EXPECT_NE(a.find("time (s)"), std::string::npos);
  EXPECT_NE(a.find("stroke-dasharray"), std::string::npos);
}

TEST(SvgChart, NonFiniteAndNonPositivePointsAreLeftOut) {
  LineChart chart;
  chart.log2_x = true;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  chart.series.push_back({"s", {0, 2, 4, 8}, {1, nan, 2, 3}, false, false, {}});
  std::string svg = render_line_chart(chart);
  EXPECT_EQ(count(svg, "<circle"), 2u);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_NE(render_line_chart(LineChart{}).find("no data"), std::string::npos);
}

TEST(SvgChart, BarChartErrorBarsAndLineBreaks) {
  BarChart chart;
  chart.bars.push_back({"all off", 12, 7.0, 17.0, "1.00x", "", false});
  chart.bars.push_back({"cuda_graphs\nfused", 7, 6.0, 8.0, "1.71x", "", true});
  std::string svg = render_bar_chart(chart);
  EXPECT_EQ(svg, render_bar_chart(chart));
  EXPECT_EQ(count(svg, "<rect"), 3u);  // Background and two bars.
  EXPECT_NE(svg.find(">cuda_graphs</text>"), std::string::npos);
  EXPECT_NE(svg.find(">fused</text>"), std::string::npos);
  EXPECT_NE(svg.find("1.71x"), std::string::npos);
  EXPECT_NE(svg.find("#2ca02c"), std::string::npos);  // Highlighted bar.
}

TEST(SvgChart, StackedBarsDrawEveryPartAndALegend) {
  BarChart chart;
  Bar a;
  a.label = "P=2\nnaive";
  a.value = 10;
  a.stack = {{"compute", 6}, {"exposed transfer", 4}};
  Bar b = a;
  b.label = "P=2\noverlap";
  b.value = 7;
  b.stack = {{"compute", 6.5}, {"exposed transfer", 0.5}};
  chart.bars = {a, b};
  const std::string svg = render_bar_chart(chart);
  // Background, two parts per bar, two legend keys.
  EXPECT_EQ(count(svg, "<rect"), 7u);
  EXPECT_NE(svg.find(">exposed transfer</text>"), std::string::npos);
  EXPECT_NE(svg.find("naive: exposed transfer 4"), std::string::npos) << svg;
  EXPECT_NE(svg.find("overlap: compute 6.5"), std::string::npos) << svg;
  EXPECT_NE(svg.find("#d62728"), std::string::npos);  // the second part's colour
}

TEST(SvgChart, Log2AxisReachesTheLastPointAndLabelsSizes) {
  // 2^10 .. 2^33 with a tick every 3 powers: the axis must end at or past
  // 2^33 (a tick at 2^34), or the last points fall outside the frame.
  LineChart chart;
  chart.log2_x = true;
  chart.x_bytes = true;
  Series s{"busbw", {}, {}, false, false, {}};
  for (int e = 10; e <= 33; ++e) {
    s.x.push_back(std::exp2(e));
    s.y.push_back(e);
  }
  chart.series.push_back(s);
  std::string svg = render_line_chart(chart);
  EXPECT_NE(svg.find(">1K</text>"), std::string::npos);
  EXPECT_NE(svg.find(">2G</text>"), std::string::npos);
  EXPECT_NE(svg.find(">16G</text>"), std::string::npos);
  // The frame's right edge against the largest point's x.
  const size_t frame = svg.find("fill=\"none\" stroke=\"#333\"");
  ASSERT_NE(frame, std::string::npos);
  const size_t rect = svg.rfind("<rect x=\"", frame);
  const double left = std::stod(svg.substr(rect + 9));
  const double width = std::stod(svg.substr(svg.find("width=\"", rect) + 7));
  double max_cx = 0;
  for (size_t p = svg.find("<circle cx=\""); p != std::string::npos; p = svg.find("<circle cx=\"", p + 1)) {
    max_cx = std::max(max_cx, std::stod(svg.substr(p + 12)));
  }
  EXPECT_LE(max_cx, left + width + 0.05);
}

}  // namespace
}  // namespace perflab::reports
